#include "client/follower.h"

#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>

#include <algorithm>
#include <cerrno>
#include <climits>

namespace rdma_eventd {

namespace {

class SystemSteadyTime final : public SteadyTime {
 public:
  SteadyTimePoint now() const override { return std::chrono::steady_clock::now(); }
};

class ClientConnection final : public DaemonConnection {
 public:
  explicit ClientConnection(std::unique_ptr<Client> client) : client_(std::move(client)) {}
  int fd() const override { return client_->fd(); }
  const Hello& hello() const override { return client_->hello(); }
  ClientStatus next(Message& out) override { return client_->next(out); }
  ClientStatus call(const Request& request, Client::Duration timeout, Message& reply) override {
    return client_->call(request, timeout, reply);
  }
  const std::string& last_error() const override { return client_->last_error(); }

 private:
  std::unique_ptr<Client> client_;
};

class SocketConnector final : public DaemonConnector {
 public:
  SocketConnector(std::string path, Client::Duration timeout)
      : path_(std::move(path)), timeout_(timeout) {}
  ClientStatus connect(std::unique_ptr<DaemonConnection>& out, std::string* error) override {
    std::unique_ptr<Client> client;
    const ClientStatus s = Client::connect(path_, timeout_, client, error);
    if (s == ClientStatus::kOk) out = std::make_unique<ClientConnection>(std::move(client));
    return s;
  }

 private:
  std::string path_;
  Client::Duration timeout_;
};

std::string failure_text(ClientStatus s, const std::string& error) {
  return std::string(client_status_name(s)) + (error.empty() ? "" : ": " + error);
}

}  // namespace

const SteadyTime& steady_time() {
  static const SystemSteadyTime time;
  return time;
}

std::unique_ptr<DaemonConnector> socket_connector(std::string path, Client::Duration timeout) {
  return std::make_unique<SocketConnector>(std::move(path), timeout);
}

DaemonFollower::DaemonFollower(const SteadyTime& time, DaemonConnector& connector,
                               FollowerPolicy& policy, FollowerOptions options)
    : time_(time),
      connector_(connector),
      policy_(policy),
      options_(std::move(options)),
      connect_backoff_(options_.initial_backoff, options_.max_backoff),
      act_backoff_(options_.initial_backoff, options_.max_backoff),
      reconnect_at_(time.now()),
      act_at_(reconnect_at_),
      refresh_at_(reconnect_at_),
      random_(options_.jitter_seed != 0 ? options_.jitter_seed : std::random_device{}()) {}

std::chrono::milliseconds DaemonFollower::spread(std::chrono::milliseconds wait,
                                                 std::chrono::milliseconds at_most) {
  if (options_.jitter <= 0 || wait.count() <= 0) return wait;
  std::uniform_real_distribution<double> share(0, options_.jitter);
  const auto longer = wait + std::chrono::milliseconds(static_cast<int64_t>(
                                 static_cast<double>(wait.count()) * share(random_)));
  return std::max(wait, std::min(longer, at_most));
}

int DaemonFollower::fd() const {
  return connection_ ? connection_->fd() : -1;
}

void DaemonFollower::wake() {
  if (stopped_) return;
  ++counts_.wakeups;
  const SteadyTimePoint now = time_.now();
  if (!connection_ && now >= reconnect_at_) connect(now);
  if (connection_) read_messages(now);
  const bool can_act = connection_ || away_told_;
  if (!can_act) return;  // a connection was lost: act once it is back, or known to be away
  if (!dirty_ && options_.refresh_interval.count() > 0 && now >= refresh_at_) dirty_ = true;
  if (!dirty_ && now >= again_at_) dirty_ = true;
  if (dirty_ && now >= act_at_) {
    act(now);
    // Records that arrived while a query waited for its reply are in the client, where poll()
    // does not see them.
    if (connection_ && !stopped_) read_messages(time_.now());
  }
}

SteadyTimePoint DaemonFollower::next_deadline() const {
  SteadyTimePoint deadline = SteadyTimePoint::max();
  if (stopped_) return deadline;
  if (!connection_) deadline = std::min(deadline, reconnect_at_);
  if (connection_ || away_told_) {
    if (dirty_) {
      deadline = std::min(deadline, act_at_);
    } else {
      if (options_.refresh_interval.count() > 0) deadline = std::min(deadline, refresh_at_);
      deadline = std::min(deadline, again_at_);
    }
  }
  return deadline;
}

void DaemonFollower::connect(SteadyTimePoint now) {
  std::unique_ptr<DaemonConnection> c;
  std::string error;
  ClientStatus s = connector_.connect(c, &error);
  if (s == ClientStatus::kOk) {
    Request subscribe{Op::kSubscribe};
    subscribe.filter = options_.subscription;
    Message reply;
    s = c->call(subscribe, options_.query_timeout, reply);
    if (s != ClientStatus::kOk) error = "the subscription failed: " + c->last_error();
  }
  if (s != ClientStatus::kOk) {
    ++counts_.connect_failures;
    reconnect_at_ = now + spread(connect_backoff_.next(), options_.max_backoff);
    if (!away_told_) {
      away_told_ = true;
      dirty_ = true;  // what the daemon's absence asks for is acted on once, then refreshed
      policy_.on_event({FollowerEvent::kDaemonAway, failure_text(s, error)});
    }
    return;
  }
  ++counts_.connects;
  const std::string stream = c->hello().stream;
  const bool restarted = !stream_.empty() && stream != stream_;
  stream_ = stream;
  connection_ = std::move(c);
  away_told_ = false;
  dirty_ = true;  // act at every (re)connection: the daemon's state may have changed meanwhile
  policy_.on_event({FollowerEvent::kConnected, stream, restarted});
}

void DaemonFollower::lose_connection(SteadyTimePoint now, const std::string& why) {
  connection_.reset();
  ++counts_.connect_failures;
  reconnect_at_ = now + spread(connect_backoff_.next(), options_.max_backoff);
  dirty_ = true;
  policy_.on_event({FollowerEvent::kConnectionLost, why});
}

void DaemonFollower::read_messages(SteadyTimePoint now) {
  for (;;) {
    Message m;
    const ClientStatus s = connection_->next(m);
    if (s == ClientStatus::kNoMessage) return;
    if (s != ClientStatus::kOk) {
      lose_connection(now, failure_text(s, connection_->last_error()));
      return;
    }
    // A change, or records lost: either way, ask again.
    if (m.record() || m.lost()) dirty_ = true;
  }
}

void DaemonFollower::act(SteadyTimePoint now) {
  std::vector<Message> replies;
  std::string failure;
  bool refused = false;
  if (connection_) {
    for (const Op op : options_.queries) {
      Message reply;
      const ClientStatus s = connection_->call(Request{op}, options_.query_timeout, reply);
      if (s == ClientStatus::kRefused) {  // rate-limited, or a daemon without the op: retry
        failure = "rdma-eventd refused a request: " + connection_->last_error();
        refused = true;
        break;
      }
      if (s != ClientStatus::kOk) {
        lose_connection(now, failure_text(s, connection_->last_error()));
        return;
      }
      replies.push_back(std::move(reply));
    }
  }
  ++counts_.acts;
  FollowerPolicy::Outcome outcome = FollowerPolicy::Outcome::kRetry;
  if (!refused) outcome = policy_.act(connection_ ? &replies : nullptr, &failure);
  const SteadyTimePoint after = time_.now();
  if (outcome == FollowerPolicy::Outcome::kStop) {
    stopped_ = true;
    connection_.reset();
    return;
  }
  if (outcome == FollowerPolicy::Outcome::kRetry) {
    ++counts_.act_failures;
    if (failure.empty()) failure = "failed";
    if (failure != failure_told_) policy_.on_event({FollowerEvent::kActFailing, failure});
    failure_told_ = failure;
    act_at_ = after + spread(act_backoff_.next(), options_.max_backoff);
    return;
  }
  if (connection_) connect_backoff_.reset();  // the connection proved itself
  if (!failure_told_.empty()) policy_.on_event({FollowerEvent::kActRecovered, ""});
  failure_told_.clear();
  act_backoff_.reset();
  dirty_ = false;
  act_at_ = after + options_.min_act_interval;
  refresh_at_ = after + spread(options_.refresh_interval, std::chrono::milliseconds::max());
  const std::chrono::milliseconds again = policy_.act_again_in();
  again_at_ = again.count() > 0 ? after + std::max(again, options_.min_act_interval)
                                : SteadyTimePoint::max();
}

int stop_signal_fd() {
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  if (::sigprocmask(SIG_BLOCK, &stop, nullptr) != 0) return -1;
  return ::signalfd(-1, &stop, SFD_CLOEXEC);
}

int run_follower(DaemonFollower& follower, const SteadyTime& time, int stop_fd) {
  for (;;) {
    follower.wake();
    if (follower.stopped()) return kFollowerStopped;
    const SteadyTimePoint deadline = follower.next_deadline();
    int timeout_ms = -1;
    if (deadline != SteadyTimePoint::max()) {
      // Rounded up: a poll() that ends a little early would find nothing due and wake again.
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - time.now());
      timeout_ms = static_cast<int>(std::clamp<int64_t>(left.count(), 0, INT_MAX));
    }
    pollfd fds[2] = {{stop_fd, POLLIN, 0}, {follower.fd(), POLLIN, 0}};
    if (::poll(fds, 2, timeout_ms) < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (fds[0].revents & POLLIN) return 0;
  }
}

}  // namespace rdma_eventd
