// rdma-eventd-slurm: keeps the node's Slurm state in line with rdma-eventd's port verdicts
// (docs/scheduler.md). Follows the daemon's port_health records (default), or checks once
// (--once, for Slurm's HealthCheckProgram). The rules are policy.h's; this file is the I/O.
#include <getopt.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "client/client.hpp"
#include "client/follower.h"
#include "config.h"
#include "follow.h"
#include "rdma_eventd/internal/small_file.h"
#include "rdma_eventd/version.h"
#include "schema/health_reply.h"
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
constexpr int kExitOsErr = 71;        // the loop cannot wait (signalfd, poll)
constexpr int kExitTempFail = 75;     // scontrol failed or timed out (--once)
constexpr int kExitConfig = 78;

// The HealthCheckProgram mode ends well within Slurm's 60 s, whatever fails.
constexpr auto kOnceBudget = 45s;
constexpr auto kConnectTimeout = 3s;
constexpr auto kHealthTimeout = 5s;
constexpr size_t kMaxConfigBytes = 64 * 1024;

const char* const kHelp = R"help(Usage: rdma-eventd-slurm [OPTIONS]

Keeps this node's Slurm state in line with rdma-eventd's port verdicts: drains the node when
a port in service is fatal, gone, flapping or down (the set is configurable), with a reason
that starts with an owned prefix ("rdma-eventd: mlx5_0/1 flapping (3 downs/1h)"), and resumes
it once every port in service is healthy and every port the reason names is back, but only a
drain of its own. A drain, down or maintenance reservation someone else set is never touched.
See docs/scheduler.md.

A new drain is held back while the nodes of the node's partitions drained by rdma-eventd are
as many as drain_limit allows (default 10% of them, at least one node; one sinfo call before
each new drain), so that a fabric-wide event does not drain the cluster; in follow mode it also
waits a random time up to drain_splay_s (default 30 s) first.

By default it follows the daemon's verdicts as they change, and reconciles at start, when the
daemon restarts and every reconcile_interval_s seconds; failures are retried with a backoff
from 0.5 s to reconcile_interval_s (at most 60 s). Each wait is lengthened by up to half at
random (a retry's never over that cap), so that a cluster's followers do not act in step.

Options:
  -c, --config FILE  the configuration (default /etc/rdma-eventd/slurm.json; optional there)
      --once         check once and exit: for Slurm's HealthCheckProgram (ends within 45 s)
      --dry-run      print the scontrol commands instead of running them, and each drain the
                     drain limit would hold back (a line that starts with "# ")
  -V, --version      print the version
  -h, --help         this text

The node name is node_name, else $SLURMD_NODENAME (set by slurmd for its HealthCheckProgram),
else the short host name.

Exit status: 0 done (or following until SIGTERM), 64 bad command line, 71 the loop failed,
78 bad configuration (or an unreadable configuration file, the default one included);
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

// The node's name when the configuration does not give one: slurmd's own (it sets
// SLURMD_NODENAME for its HealthCheckProgram and prolog), else the short host name.
std::string default_node_name() {
  const char* env = ::getenv("SLURMD_NODENAME");
  if (env && *env) return env;
  return short_hostname();
}

// Reads and checks the configuration, or prints one message and returns nullopt. A default
// file that is not there is no error; one that is there but cannot be read is.
std::optional<Config> load_config(const Options& o) {
  const rdma_eventd::internal::SmallFile file =
      rdma_eventd::internal::read_small_file(o.config_path, kMaxConfigBytes);
  Config config;
  if (file.error == ENOENT && !o.config_given) {
    // No configuration: every key at its default.
  } else if (!file.ok()) {
    std::fprintf(stderr, "rdma-eventd-slurm: cannot read %s: %s\n", o.config_path.c_str(),
                 file.too_large ? "larger than 64 KiB" : std::strerror(file.error));
    return std::nullopt;
  } else {
    std::string error;
    auto parsed = parse_config(file.text, &error);
    if (!parsed) {
      std::fprintf(stderr, "rdma-eventd-slurm: %s: %s\n", o.config_path.c_str(), error.c_str());
      return std::nullopt;
    }
    config = *parsed;
  }
  if (config.node_name.empty()) config.node_name = default_node_name();
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
  // No splay: the check ends here, and a drain it held back would never come. Slurm spreads
  // its health checks itself (HealthCheckNodeState=CYCLE); the limit still applies.
  Config now = config;
  now.drain_splay_s = 0;
  SlurmNode node(now, dry_run);
  if (const std::string record_error = node.load_drain_record(); !record_error.empty()) {
    log_line(record_error);
  }
  std::string message;
  const Ms timeout =
      std::min<Ms>(std::chrono::seconds(config.scontrol_timeout_s), left_until(deadline) / 3);
  const auto result = node.reconcile(health ? &*health : nullptr, timeout, &message);
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

  const int signal_fd = rdma_eventd::stop_signal_fd();
  if (signal_fd < 0) {
    std::perror("rdma-eventd-slurm: signalfd");
    return kExitOsErr;
  }
  SlurmFollowPolicy policy(*config, o.dry_run, process_runner(), log_line);
  const auto connector = rdma_eventd::socket_connector(config->socket, kConnectTimeout);
  rdma_eventd::DaemonFollower follower(rdma_eventd::steady_time(), *connector, policy,
                                       follower_options(*config));
  const int error = rdma_eventd::run_follower(follower, rdma_eventd::steady_time(), signal_fd);
  ::close(signal_fd);
  if (error != 0) {
    // Exits non-zero so that the unit's Restart=on-failure starts it again.
    log_line(std::string("poll: ") + std::strerror(error));
    return kExitOsErr;
  }
  // What the follower counted, for the journal: how often it acted, failed and reconnected.
  const rdma_eventd::FollowerCounts& n = follower.counts();
  log_line("stopping (reconciliations: " + std::to_string(n.acts) + ", " +
           std::to_string(n.act_failures) +
           " failed; connections to rdma-eventd: " + std::to_string(n.connects) + ", " +
           std::to_string(n.connect_failures) + " failed or lost)");
  return kExitOk;
}

}  // namespace
}  // namespace rdma_eventd_slurm

int main(int argc, char** argv) {
  return rdma_eventd_slurm::run(argc, argv);
}
