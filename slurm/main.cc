// rdma-eventd-slurm: keeps the node's Slurm state in line with rdma-eventd's port verdicts
// (docs/scheduler.md). Follows the daemon's port_health records (default), or checks once
// (--once, for Slurm's HealthCheckProgram). The rules are policy.h's; this file is the I/O.
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "client/client.hpp"
#include "config.h"
#include "policy.h"
#include "rdma_eventd/version.h"
#include "slurm_node.h"

namespace rdma_eventd_slurm {
namespace {

using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;
using Ms = std::chrono::milliseconds;
using rdma_eventd::Client;
using rdma_eventd::ClientStatus;

// sysexits.h values.
constexpr int kExitOk = 0;
constexpr int kExitUsage = 64;
constexpr int kExitNoHost = 68;       // Slurm does not know the node
constexpr int kExitUnavailable = 69;  // the daemon cannot be reached (--once)
constexpr int kExitTempFail = 75;     // scontrol failed or timed out (--once)
constexpr int kExitConfig = 78;

// The HealthCheckProgram mode ends well within Slurm's 60 s, whatever fails.
constexpr auto kOnceBudget = 45s;
constexpr auto kConnectTimeout = 3s;
constexpr auto kHealthTimeout = 5s;
constexpr auto kMaxBackoff = 8s;

const char* const kHelp = R"help(Usage: rdma-eventd-slurm [OPTIONS]

Keeps this node's Slurm state in line with rdma-eventd's port verdicts: drains the node when
a port in service is fatal, flapping, gone or down (the set is configurable), with a reason
that starts with an owned prefix ("rdma-eventd: mlx5_0/1 flapping (3 downs)"), and resumes it
once every port in service is healthy, but only a drain of its own. A drain, down or
reservation someone else set is never touched. See docs/scheduler.md.

By default it follows the daemon's verdicts as they change, and reconciles at start, when the
daemon restarts and every reconcile_interval_s seconds.

Options:
  -c, --config FILE  the configuration (default /etc/rdma-eventd/slurm.json; optional there)
      --once         check once and exit: for Slurm's HealthCheckProgram (ends within 45 s)
      --dry-run      print the scontrol commands instead of running them
  -V, --version      print the version
  -h, --help         this text

Exit status: 0 done (or following until SIGTERM), 64 bad command line, 78 bad configuration;
with --once also 68 Slurm does not know the node, 69 rdma-eventd cannot be reached (nothing
changed unless drain_when_daemon_unreachable), 75 scontrol failed or timed out.
)help";

struct Options {
  std::string config_path = kDefaultConfigPath;
  bool config_given = false;
  bool once = false;
  bool dry_run = false;
};

std::string short_hostname() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "";
  std::string s(name);
  return s.substr(0, s.find('.'));
}

// Reads and checks the configuration, or prints one message and returns nullopt.
std::optional<Config> load_config(const Options& o) {
  std::ifstream in(o.config_path);
  Config config;
  if (!in) {
    if (o.config_given) {
      std::fprintf(stderr, "rdma-eventd-slurm: cannot read %s\n", o.config_path.c_str());
      return std::nullopt;
    }
  } else {
    std::stringstream text;
    text << in.rdbuf();
    std::string error;
    auto parsed = parse_config(text.str(), &error);
    if (!parsed) {
      std::fprintf(stderr, "rdma-eventd-slurm: %s: %s\n", o.config_path.c_str(), error.c_str());
      return std::nullopt;
    }
    config = *parsed;
  }
  if (config.node_name.empty()) config.node_name = short_hostname();
  if (config.node_name.empty()) {
    std::fprintf(stderr, "rdma-eventd-slurm: no host name: set node_name in %s\n",
                 o.config_path.c_str());
    return std::nullopt;
  }
  if (config.socket.empty()) {
    const char* env = ::secure_getenv("RDMA_EVENTD_SOCKET");
    config.socket = env && *env ? env : rdma_eventd::kDefaultSocketPath;
  }
  return config;
}

void log_line(const std::string& text) {
  std::fprintf(stderr, "rdma-eventd-slurm: %s\n", text.c_str());
}

// The daemon's health reply, or nullopt (and *error) when it cannot be had.
std::optional<rdma_eventd::HealthReply> request_health(Client& c, Ms timeout, std::string* error) {
  rdma_eventd::Message reply;
  if (c.call(rdma_eventd::Request{rdma_eventd::Op::kHealth}, timeout, reply) != ClientStatus::kOk) {
    *error = c.last_error();
    return std::nullopt;
  }
  return rdma_eventd::health_from_json(reply.text(), error);
}

Ms left_until(SteadyClock::time_point deadline) {
  return std::max(Ms(0), std::chrono::duration_cast<Ms>(deadline - SteadyClock::now()));
}

int run_once(const Config& config, bool dry_run) {
  const auto deadline = SteadyClock::now() + kOnceBudget;
  std::unique_ptr<Client> client;
  std::string error;
  std::optional<rdma_eventd::HealthReply> health;
  if (Client::connect(config.socket, kConnectTimeout, client, &error) == ClientStatus::kOk) {
    health = request_health(*client, kHealthTimeout, &error);
  }
  if (!health) log_line("cannot reach rdma-eventd at " + config.socket + ": " + error);
  const Wanted wanted = wanted_state(health ? &*health : nullptr, config);
  SlurmNode node(config, dry_run);
  std::string message;
  const Ms timeout =
      std::min<Ms>(std::chrono::seconds(config.scontrol_timeout_s), left_until(deadline) / 2);
  const auto result = node.reconcile(wanted, timeout, &message);
  switch (result) {
    case SlurmNode::Result::kDone:
      std::printf("%s: %s\n", config.node_name.c_str(), message.c_str());
      return health ? kExitOk : kExitUnavailable;
    case SlurmNode::Result::kUnknownNode:
      log_line(message);
      return kExitNoHost;
    case SlurmNode::Result::kFailed:
      log_line(message + ": the node is left as it is");
      return kExitTempFail;
  }
  return kExitTempFail;
}

// The follower: one poll() loop over the daemon's socket and a signalfd.
class Follower {
 public:
  Follower(const Config& config, bool dry_run, int signal_fd)
      : config_(config), node_(config, dry_run), signal_fd_(signal_fd) {}

  int run() {
    for (;;) {
      if (!client_ && SteadyClock::now() >= reconnect_at_) connect();
      // Records the health request's call() read past its reply wait in the client, where
      // poll() does not see them.
      if (client_) read_records();
      if (dirty_ && SteadyClock::now() >= retry_at_) {
        reconcile();
        continue;
      }
      pollfd fds[2] = {{signal_fd_, POLLIN, 0}, {client_ ? client_->fd() : -1, POLLIN, 0}};
      const int n = ::poll(fds, 2, static_cast<int>(poll_timeout().count()));
      if (n < 0 && errno != EINTR) return kExitOk;
      if (fds[0].revents & POLLIN) {
        log_line("stopping");
        return kExitOk;
      }
      if (client_ && fds[1].revents) read_records();
      if (SteadyClock::now() >= next_reconcile_) dirty_ = true;
    }
  }

 private:
  void connect() {
    std::string error;
    std::unique_ptr<Client> c;
    if (Client::connect(config_.socket, kConnectTimeout, c, &error) != ClientStatus::kOk) {
      if (!daemon_away_logged_) {
        log_line("cannot reach rdma-eventd at " + config_.socket + ": " + error +
                 (config_.drain_when_daemon_unreachable
                      ? "; the node is drained until it is back"
                      : "; the node is left as it is until it is back"));
        daemon_away_logged_ = true;
        dirty_ = true;  // the wanted state is now "unknown" (or a drain, when configured)
      }
      reconnect_at_ = SteadyClock::now() + connect_backoff_;
      connect_backoff_ = std::min<Ms>(connect_backoff_ * 2, kMaxBackoff);
      return;
    }
    rdma_eventd::Request sub{rdma_eventd::Op::kSubscribe};
    sub.filter.events.push_back(rdma_eventd::EventKind::kPortHealth);
    rdma_eventd::Message reply;
    if (c->call(sub, kHealthTimeout, reply) != ClientStatus::kOk) {
      log_line("rdma-eventd refused the subscription: " + c->last_error());
      reconnect_at_ = SteadyClock::now() + connect_backoff_;
      return;
    }
    const std::string stream = c->hello().stream;
    log_line("following rdma-eventd at " + config_.socket + " (stream " + stream +
             (stream_.empty() || stream == stream_ ? "" : ", a new one: the daemon restarted") +
             "), node " + config_.node_name);
    stream_ = stream;
    client_ = std::move(c);
    daemon_away_logged_ = false;
    last_message_.clear();  // say what the reconciliation at the connection finds
    connect_backoff_ = 500ms;
    dirty_ = true;  // reconcile at every (re)connection
  }

  void read_records() {
    for (;;) {
      rdma_eventd::Message m;
      const ClientStatus s = client_->next(m);
      if (s == ClientStatus::kNoMessage) return;
      if (s != ClientStatus::kOk) {
        log_line("lost rdma-eventd's connection: " + client_->last_error());
        client_.reset();
        reconnect_at_ = SteadyClock::now();
        return;
      }
      // A verdict changed, or records were lost: either way, ask for the verdicts afresh.
      if (m.record() || m.lost()) dirty_ = true;
    }
  }

  // Applies the latest wanted state: the verdicts as of now, never an older one.
  void reconcile() {
    std::optional<rdma_eventd::HealthReply> health;
    if (client_) {
      std::string error;
      health = request_health(*client_, kHealthTimeout, &error);
      if (!health) {
        log_line("rdma-eventd did not answer the health request: " + error);
        client_.reset();
        reconnect_at_ = SteadyClock::now();
        return;
      }
    }
    const Wanted wanted = wanted_state(health ? &*health : nullptr, config_);
    std::string message;
    Action action;
    const auto result = node_.reconcile(wanted, std::chrono::seconds(config_.scontrol_timeout_s),
                                        &message, &action);
    if (result != SlurmNode::Result::kDone) {
      if (message != failure_logged_) log_line(message + "; retrying");
      failure_logged_ = message;
      retry_at_ = SteadyClock::now() + slurm_backoff_;
      slurm_backoff_ = std::min<Ms>(slurm_backoff_ * 2, kMaxBackoff);
      return;
    }
    if (!failure_logged_.empty()) log_line("Slurm answers again");
    failure_logged_.clear();
    slurm_backoff_ = 500ms;
    // Actions are logged every time; why nothing was done, once per change.
    if (action.kind != Action::kNone || message != last_message_) log_line(message);
    last_message_ = message;
    dirty_ = false;
    next_reconcile_ = SteadyClock::now() + std::chrono::seconds(config_.reconcile_interval_s);
  }

  Ms poll_timeout() const {
    auto next = next_reconcile_;
    if (dirty_) next = std::min(next, retry_at_);
    if (!client_) next = std::min(next, reconnect_at_);
    return std::max(Ms(0), std::chrono::duration_cast<Ms>(next - SteadyClock::now()) + 1ms);
  }

  const Config& config_;
  SlurmNode node_;
  int signal_fd_;
  std::unique_ptr<Client> client_;
  std::string stream_;
  bool dirty_ = true;
  bool daemon_away_logged_ = false;
  std::string failure_logged_;
  std::string last_message_;
  Ms connect_backoff_ = 500ms;
  Ms slurm_backoff_ = 500ms;
  SteadyClock::time_point reconnect_at_ = SteadyClock::now();
  SteadyClock::time_point retry_at_ = SteadyClock::now();
  SteadyClock::time_point next_reconcile_ = SteadyClock::now();
};

int run(int argc, char** argv) {
  Options o;
  enum { kOnce = 256, kDryRun };
  const option longs[] = {
      {"config", required_argument, nullptr, 'c'}, {"once", no_argument, nullptr, kOnce},
      {"dry-run", no_argument, nullptr, kDryRun},  {"version", no_argument, nullptr, 'V'},
      {"help", no_argument, nullptr, 'h'},         {nullptr, 0, nullptr, 0}};
  for (int c; (c = ::getopt_long(argc, argv, "c:Vh", longs, nullptr)) != -1;) {
    switch (c) {
      case 'c':
        o.config_path = optarg;
        o.config_given = true;
        break;
      case kOnce:
        o.once = true;
        break;
      case kDryRun:
        o.dry_run = true;
        break;
      case 'V':
        std::printf("rdma-eventd-slurm %s\n", rdma_eventd::kVersion);
        return kExitOk;
      case 'h':
        std::fputs(kHelp, stdout);
        return kExitOk;
      default:
        std::fprintf(stderr, "Try 'rdma-eventd-slurm --help'.\n");
        return kExitUsage;
    }
  }
  if (optind < argc) {
    std::fprintf(stderr, "rdma-eventd-slurm: unexpected argument '%s'\n", argv[optind]);
    return kExitUsage;
  }
  const auto config = load_config(o);
  if (!config) return kExitConfig;
  ::signal(SIGPIPE, SIG_IGN);
  if (o.once) return run_once(*config, o.dry_run);

  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  ::sigprocmask(SIG_BLOCK, &stop, nullptr);
  const int signal_fd = ::signalfd(-1, &stop, SFD_CLOEXEC);
  if (signal_fd < 0) {
    std::perror("rdma-eventd-slurm: signalfd");
    return 71;  // EX_OSERR
  }
  Follower follower(*config, o.dry_run, signal_fd);
  const int rc = follower.run();
  ::close(signal_fd);
  return rc;
}

}  // namespace
}  // namespace rdma_eventd_slurm

int main(int argc, char** argv) {
  return rdma_eventd_slurm::run(argc, argv);
}
