// rdma-eventctl wait: block until a port reaches a state. It never misses a transition: it
// subscribes to the port, takes a snapshot (the state as of seq N), then follows the records
// after N; when records are lost to it, it takes a new snapshot.
#include <algorithm>
#include <cctype>
#include <cstdio>

#include "commands.h"
#include "schema/record_text.h"  // port_state_display

namespace rdma_eventctl {

using namespace rdma_eventd;

const char* const kWaitHelp = R"(Usage: rdma-eventctl wait DEV/PORT STATE [OPTIONS]

Waits until the port is in STATE (down, init, armed, active or active_defer), as
rdma-eventd sees it, and exits 0 then, at once if it already is. For scripts that must not
start a job before the link is up:

  rdma-eventctl wait mlx5_0/1 active --timeout 30s && start-the-job

It reads the port's current state first and then follows its records, so no transition
can slip between the two; DEV may be a device name or a node GUID.

Options:
  -t, --timeout DURATION  give up after DURATION: 30s, 500ms, 2m, 1h (default: no limit;
                          0 looks at the current state only)
  -q, --quiet             print nothing when the state is reached
      --socket PATH       the daemon's socket
  -h, --help              this text

Exit status:
  0   the port is in STATE
  1   the timeout passed first (the last known state is printed on stderr)
  64  bad command line
  69  the daemon cannot be reached, or it closed the connection
  76  the daemon refused a request or made no sense
)";

namespace {

using SteadyClock = std::chrono::steady_clock;

class PortWaiter {
 public:
  PortWaiter(const Global& g, Client& c, PortPattern port, PortState target)
      : g_(g), c_(c), port_(std::move(port)), target_(target) {}

  // Subscribes to the port and reads a snapshot. Returns an exit code when done already.
  std::optional<int> resync() {
    Message m;
    Request snap{Op::kSnapshot};
    if (ClientStatus s = c_.call(snap, kRequestTimeout, m); s != ClientStatus::kOk) {
      return report_failure(g_, s, c_);
    }
    snapshot_seq_ = m.reply()->seq;
    const uint64_t records = m.reply()->records;
    for (uint64_t got = 0; got < records;) {
      if (ClientStatus s = c_.next(m, kRequestTimeout); s != ClientStatus::kOk) {
        return report_failure(g_, s, c_);
      }
      const PortSnapshot* port = m.snapshot();
      if (!port) continue;  // records before the snapshot: covered by it
      ++got;
      if (port_.device.matches(port->device, port->node_guid) && port->port.port == port_.port) {
        known_ = port->port.state;
      }
    }
    return reached();
  }

  // Follows the records until the state is reached, the deadline passes or the stream ends.
  int follow(std::optional<SteadyClock::time_point> deadline) {
    for (;;) {
      Client::Duration left = Client::kForever;
      if (deadline) {
        left = std::chrono::duration_cast<Client::Duration>(*deadline - SteadyClock::now());
        if (left.count() < 0) left = Client::Duration(0);
      }
      Message m;
      const ClientStatus s = c_.next(m, left);
      if (s == ClientStatus::kTimeout) return timed_out();
      if (s != ClientStatus::kOk) return report_failure(g_, s, c_);
      if (m.lost()) {
        // A gap: what happened in it is unknown, so read the state afresh.
        if (auto done = resync()) return *done;
        continue;
      }
      if (!m.record() || m.record()->seq <= snapshot_seq_) continue;
      const Record& r = *m.record();
      if (!port_.device.matches(r.device, r.node_guid)) continue;
      if (r.port_info && r.port == port_.port) known_ = r.port_info->state;
      if (auto done = reached()) return *done;
    }
  }

  bool known() const { return known_.has_value(); }

 private:
  std::optional<int> reached() const {
    if (known_ != target_) return std::nullopt;
    return kExitOk;
  }

  int timed_out() const {
    const std::string want(port_state_display(target_));
    if (!known_) {
      std::fprintf(stderr, "%s: %s is not among rdma-eventd's ports; gave up waiting for %s\n",
                   g_.program.c_str(), port_.text().c_str(), want.c_str());
    } else {
      std::fprintf(stderr, "%s: %s is %s, not %s: gave up waiting\n", g_.program.c_str(),
                   port_.text().c_str(), std::string(port_state_display(*known_)).c_str(),
                   want.c_str());
    }
    return kExitTimeout;
  }

  const Global& g_;
  Client& c_;
  PortPattern port_;
  PortState target_;
  uint64_t snapshot_seq_ = 0;
  std::optional<PortState> known_;
};

}  // namespace

int run_wait(const Global& g, int argc, char** argv) {
  Global global = g;
  std::optional<std::chrono::milliseconds> timeout;
  bool quiet = false;
  const OptionSpec timeout_option{
      "timeout", 't', true, [&timeout](const char* value) {
        timeout = parse_duration(value);
        if (!timeout) {
          throw UsageError{"--timeout: not a duration like 30s, 500ms or 2m: '" +
                           std::string(value) + "'"};
        }
      }};
  const auto args = parse_command_line(argc, argv, kWaitHelp, global,
                                       {timeout_option, flag_option("quiet", quiet, 'q')});
  if (!args) return kExitOk;
  if (args->size() != 2) throw UsageError{"wait needs a port and a state: wait DEV/PORT STATE"};
  std::string error;
  auto port = PortPattern::parse((*args)[0], &error);
  if (!port) throw UsageError{error};
  if (port->device.text().find_first_of("*?[") != std::string::npos) {
    throw UsageError{"wait follows one port: '" + port->text() + "' is a pattern"};
  }
  std::string state_name = (*args)[1];
  std::transform(state_name.begin(), state_name.end(), state_name.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  auto target = port_state_from_name(state_name);
  if (!target || *target == PortState::kUnknown) {
    throw UsageError{"unknown port state '" + std::string((*args)[1]) +
                     "' (down, init, armed, active, active_defer)"};
  }

  const auto start = SteadyClock::now();
  auto client = connect_or_report(global, kRequestTimeout);
  if (!client) return kExitUnavailable;
  Filter only_this_port;
  only_this_port.ports.push_back(*port);
  Request sub{Op::kSubscribe};
  sub.filter = only_this_port;
  Message m;
  if (ClientStatus s = client->call(sub, kRequestTimeout, m); s != ClientStatus::kOk) {
    return report_failure(global, s, *client);
  }
  PortWaiter waiter(global, *client, *port, *target);
  std::optional<int> done = waiter.resync();
  if (!done) {
    if (!waiter.known() && !quiet) {
      std::fprintf(stderr, "%s: %s is not among rdma-eventd's ports (yet); waiting for it\n",
                   global.program.c_str(), port->text().c_str());
    }
    std::optional<SteadyClock::time_point> deadline;
    if (timeout) deadline = start + *timeout;
    done = waiter.follow(deadline);
  }
  if (*done == kExitOk && !quiet) {
    std::printf("%s is %s\n", port->text().c_str(),
                std::string(port_state_display(*target)).c_str());
  }
  return *done;
}

}  // namespace rdma_eventctl
