// The hub's connections: accepting them on either socket, who may connect (the allow-lists, the
// caps on subscribers, and on reporters, overall and per user), and what is logged about them.
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "core/clock.h"
#include "hub/hub.h"
#include "hub/subscriber.h"

namespace rdma_eventd::daemon {
namespace {

constexpr int kAcceptsPerWakeup = 64;
constexpr auto kAcceptRetry = std::chrono::milliseconds(100);
// Descriptors the daemon needs besides its connections: devices, journal, loop, signals.
constexpr uint64_t kSpareFds = 64;

// The longest path a Unix socket address holds.
constexpr size_t kMaxSocketPathBytes = sizeof(sockaddr_un{}.sun_path) - 1;

}  // namespace

void SubscriberHub::open_report_listener(const SocketConfig& config, internal::UniqueFd passed) {
  if (passed) {
    report_listener_ = std::make_unique<UnixListener>(std::move(passed));
  } else if (listener_.passed()) {
    // The events socket's directory is the service manager's: a socket the daemon made there
    // would outlive it, or could not be made at all. Its reporters use the events socket.
    spdlog::info(
        "reporters: the service manager passed no report socket; reporters connect to "
        "{} as subscribers",
        listener_.path());
    return;
  } else {
    const std::string path = report_socket_path(config.path);
    if (path.size() > kMaxSocketPathBytes) {
      spdlog::warn(
          "reporters: no report socket: {} is longer than a Unix socket path ({} bytes); "
          "reporters connect to {} as subscribers",
          path, kMaxSocketPathBytes, config.path);
      return;
    }
    report_listener_ = std::make_unique<UnixListener>(path, config.mode, config.group);
  }
  report_watch_ = std::make_unique<IoWatch>(loop_, report_listener_->fd(), Priority::kSubscribers,
                                            [this](bool, bool) { on_accept(Role::kReporter); });
  report_watch_->watch(true, false);
  spdlog::info("reporters: listening on {}{}", report_listener_->path(),
               report_listener_->passed() ? " (passed by the service manager)" : "");
}

uint64_t SubscriberHub::wanted_fds() const {
  return uint64_t{config_.max_subscribers} + reports_config_.max_reporters + kSpareFds;
}

void SubscriberHub::on_accept(Role role) {
  clock_us_ = monotonic_us();
  const int listening = role == Role::kReporter ? report_listener_->fd() : listener_.fd();
  for (int i = 0; i < kAcceptsPerWakeup; ++i) {
    internal::UniqueFd conn(::accept4(listening, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (conn) {
      accept_paused_logged_ = false;
      accept_one(std::move(conn), role);
      continue;
    }
    if (errno == EINTR || errno == ECONNABORTED) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return;
    if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
      // The connection stays in the backlog and the listener stays readable: pause it, or the
      // loop would spin until a descriptor frees up.
      if (!accept_paused_logged_) {
        spdlog::warn("subscribers: cannot accept: {}; retrying every {} ms", std::strerror(errno),
                     kAcceptRetry.count());
        accept_paused_logged_ = true;
      }
      accept_watch_.watch(false, false);
      if (report_watch_) report_watch_->watch(false, false);
      accept_retry_.arm(kAcceptRetry);
      return;
    }
    spdlog::error("subscribers: accept failed: {}", std::strerror(errno));
    return;
  }
}

std::optional<SubscriberHub::Refused> SubscriberHub::admission(int fd, const Peer& peer,
                                                               Role role) const {
  // The allow-lists are the same for both sockets: who may not subscribe may not report either.
  if (auto why = access_refusal(config_, peer, [&] { return peer_groups(fd, peer); })) {
    return Refused{Refusal::kAccess, RequestError{ErrorCode::kAccessDenied, *why, "", ""}};
  }
  if (role == Role::kReporter) return reporter_admission(peer);
  if (open_count_ >= config_.max_subscribers) {
    return Refused{Refusal::kFull, RequestError{ErrorCode::kTooManySubscribers,
                                                "too many subscribers (socket.max_subscribers is " +
                                                    std::to_string(config_.max_subscribers) + ")",
                                                "", ""}};
  }
  // Root is exempt: the service's operators, its monitoring and its own tests run as root, and
  // root could raise the limit anyway.
  const auto it = per_user_.find(peer.uid);
  if (peer.uid != 0 && it != per_user_.end() && it->second >= config_.max_subscribers_per_user) {
    return Refused{Refusal::kUserFull,
                   RequestError{ErrorCode::kTooManySubscribers,
                                "too many subscribers for uid " + std::to_string(peer.uid) +
                                    " (socket.max_subscribers_per_user is " +
                                    std::to_string(config_.max_subscribers_per_user) + ")",
                                "", ""}};
  }
  return std::nullopt;
}

std::optional<SubscriberHub::Refused> SubscriberHub::reporter_admission(const Peer& peer) const {
  const uint32_t max = reports_config_.max_reporters;
  if (open_reporters_ >= max) {
    return Refused{
        Refusal::kReportersFull,
        RequestError{ErrorCode::kTooManyReporters,
                     "too many reporters (reports.max_reporters is " + std::to_string(max) + ")",
                     "", ""}};
  }
  // Root is exempt, as from the subscribers' cap per user.
  const uint32_t per_user = reports_config_.max_reporters_per_user;
  const auto it = reporters_per_user_.find(peer.uid);
  if (peer.uid != 0 && it != reporters_per_user_.end() && it->second >= per_user) {
    return Refused{
        Refusal::kReporterUserFull,
        RequestError{ErrorCode::kTooManyReporters,
                     "too many reporters for uid " + std::to_string(peer.uid) +
                         " (reports.max_reporters_per_user is " + std::to_string(per_user) + ")",
                     "", ""}};
  }
  return std::nullopt;
}

void SubscriberHub::refuse(int fd, const Peer& peer, Role role, const Refused& r) {
  if (role == Role::kReporter) {
    ++reporter_totals_.refused;
  } else {
    ++totals_.refused;
  }
  switch (r.reason) {
    case Refusal::kAccess:
      ++(role == Role::kReporter ? reporter_totals_.refused_access : totals_.refused_access);
      break;
    case Refusal::kFull:
      ++totals_.refused_full;
      break;
    case Refusal::kUserFull:
      ++totals_.refused_user_full;
      break;
    case Refusal::kReportersFull:
      ++reporter_totals_.refused_full;
      break;
    case Refusal::kReporterUserFull:
      ++reporter_totals_.refused_user_full;
      break;
  }
  // One line at warning, then debug until a connection is accepted again: a flood of refused
  // connections must not flood the log. The peer's name is read before the error line goes out:
  // once the peer has it, it may exit and be reaped, and its /proc entry with it.
  bool& logged = refusal_logged_[static_cast<size_t>(r.reason)];
  const auto level = logged ? spdlog::level::debug : spdlog::level::warn;
  logged = true;
  const bool log = spdlog::should_log(level);
  const std::string name = log ? process_name(peer.pid) : std::string();
  const std::string line = error_json(r.error) + "\n";
  // A new socket's buffer is empty: the line fits, and nothing can block. The caller closes
  // the connection.
  (void)!::send(fd, line.data(), line.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  if (!log) return;
  spdlog::log(level, "{}: refused a connection from pid {} ({}), uid {}: {}",
              role == Role::kReporter ? "reporters" : "subscribers", peer.pid, name, peer.uid,
              r.error.message);
}

void SubscriberHub::accept_one(internal::UniqueFd conn, Role role) {
  const int fd = conn.get();
  const Peer peer = peer_of(fd);
  if (auto refused = admission(fd, peer, role)) {
    refuse(fd, peer, role, *refused);
    return;  // closes the connection
  }
  refusal_logged_.fill(false);
  auto owned =
      std::make_unique<Subscriber>(next_id_++, role, std::move(conn), config_.max_queued_bytes,
                                   config_.max_requests_per_second, clock_us_);
  Subscriber& s = *owned;
  s.pid = peer.pid;
  s.uid = peer.uid;
  s.gid = peer.gid;
  s.connected_us = realtime_us();
  s.watch = std::make_unique<IoWatch>(loop_, fd, Priority::kSubscribers,
                                      [this, &s](bool r, bool w) { on_io(s, r, w); });
  Hello hello;
  hello.version = identity_.version;
  hello.stream = identity_.stream;
  hello.host = identity_.host;
  hello.seq = state_.last_seq();
  (s.reporter() ? hello.reporter : hello.subscriber) = s.id;
  hello.max_request_bytes = config_.max_request_bytes;
  s.out.push_control(std::make_shared<const std::string>(hello_json(hello) + "\n"));
  subscribers_.emplace(s.id, std::move(owned));
  if (s.reporter()) {
    ++open_reporters_;
    count_user(reporters_per_user_, s.uid, +1);
    ++reporter_totals_.accepted;
  } else {
    walk_.push_back(&s);  // ids only grow: the walk stays in id order
    ++open_count_;
    count_user(per_user_, s.uid, +1);
    ++totals_.accepted;
  }
  log_connected(s);
  write(s);
  if (!s.reporter() && subscribers_changed_) subscribers_changed_();
}

void SubscriberHub::log_connected(const Subscriber& s) {
  // Non-root peers at info: an unprivileged local user reaching the socket is what an operator
  // may want to account for. Root's connections (the operators' own tools, monitoring, the
  // tests and benchmarks that open thousands) at debug, and non-root ones past a small rate
  // too, so a connect loop cannot flood the journal.
  auto level = spdlog::level::debug;
  if (s.uid != 0 && connect_log_budget_.take(clock_us_)) level = spdlog::level::info;
  if (!spdlog::should_log(level)) {
    connects_not_logged_ += s.uid != 0;
    return;
  }
  std::string more;
  if (level == spdlog::level::info && connects_not_logged_ > 0) {
    more = fmt::format(" ({} more connections since the last such line were not logged at info)",
                       connects_not_logged_);
    connects_not_logged_ = 0;
  }
  spdlog::log(level, "{} {} connected: pid {} ({}), uid {}{}", s.kind(), s.id, s.pid,
              process_name(s.pid), s.uid, more);
}

void SubscriberHub::revoke_disallowed() {
  for (auto& [id, ptr] : subscribers_) {
    Subscriber& s = *ptr;
    if (s.closed || s.broken) continue;
    Peer peer = peer_of(s.fd.get());
    auto why = access_refusal(config_, peer, [&] { return peer_groups(s.fd.get(), peer); });
    if (!why) continue;
    spdlog::info("{} {} (pid {}, uid {}): {} after the reload; closing", s.kind(), s.id, s.pid,
                 s.uid, *why);
    // Nothing more for a client that is no longer let in: what was queued for it and not
    // started is dropped, the error line goes out next, then the connection closes. Its slot
    // is given back now, so a client that never reads cannot keep it; until it reads or goes,
    // it holds one descriptor and this one line.
    s.out.discard_unstarted();
    const RequestError e{ErrorCode::kAccessDenied, *why + "; closing", "", ""};
    s.out.push_control(std::make_shared<const std::string>(error_json(e) + "\n"));
    s.broken = true;
    s.replay_next.reset();
    s.in.clear();
    release_slot(s);
    write(s);
  }
}

void SubscriberHub::count_user(std::map<uid_t, uint32_t>& per_user, uid_t uid, int delta) {
  uint32_t& n = per_user[uid];
  n = static_cast<uint32_t>(static_cast<int64_t>(n) + delta);
  if (n == 0) per_user.erase(uid);
}

}  // namespace rdma_eventd::daemon
