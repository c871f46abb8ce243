// Port health end to end (docs/health.md): the real daemon on the simulator with health.enabled,
// its port_health records read from its output and back from a real journald. A port that goes
// down five times in ten seconds becomes flapping, then healthy once it stays up for the quiet
// period (from the daemon's timer: no record causes it); a restart keeps the verdict (the state
// file); a corrupt state file is logged and ignored.
#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "daemon_process.h"
#include "journal_sandbox.h"
#include "paths.h"
#include "process.h"
#include "temp_dir.h"
#include "test_support.h"

namespace rdma_eventd::test {
namespace {

using nlohmann::json;
using rdmatest::SimFabric;
using rdmatest::topology;

constexpr const char* kPortHealthId = "5d1c2b7e0a8f4f6e9b3a41c7d2e86f10";

// The simulator's generic netlink stand-in is the daemon's: its RoCE ports' FEC statistics
// come from there, so that their link quality is judged, not unknown (docs/health.md).
DaemonOptions health_options(const SimFabric& sim, const std::string& state_dir, int quiet_s) {
  DaemonOptions o;
  o.config_json = json{{"health",
                        {{"enabled", true},
                         {"flap_downs", 5},
                         {"flap_window_s", 10},
                         {"flap_quiet_s", quiet_s}}}}
                      .dump();
  o.env = {{"STATE_DIRECTORY", state_dir}, {"RDMA_EVENTD_DEVLINK_SOCKET", sim.devlink_socket()}};
  return o;
}

// Reads records until the port_health record of `device`/`port` with verdict `health`; the
// records in between are other ports' and the port's own events. Fails (next_record's timeout)
// when it does not come.
Record next_verdict(DaemonProcess& d, const std::string& device, uint32_t port,
                    const std::string& health, std::vector<Record>* before = nullptr) {
  for (int i = 0; i < 200; ++i) {
    Record r = d.next_record();
    if (r.event == EventKind::kPortHealth && r.device == device && r.port == port &&
        r.health == health) {
      return r;
    }
    if (before) before->push_back(std::move(r));
  }
  ADD_FAILURE() << "no port_health " << health << " for " << device << "/" << port
                << " in 200 records";
  return {};
}

void flap(const SimFabric& sim, const std::string& target, int times) {
  for (int i = 0; i < times; ++i) {
    inject(sim, {"port", "down", target});
    inject(sim, {"port", "up", target});
  }
}

// mlx5_0 port 1 goes down and up five times, within the flap window: its flapping verdict.
Record flap_until_flapping(const SimFabric& sim, DaemonProcess& d) {
  flap(sim, "mlx5_0/1", 5);
  return next_verdict(d, "mlx5_0", 1, "flapping");
}

rdmatest::CommandResult health(DaemonProcess& d, std::vector<std::string> args = {}) {
  args.insert(args.begin(), {rdmatest::bin("rdma-eventctl"), "--socket", d.socket(), "health"});
  return rdmatest::run_command(args);
}

TEST(PortHealth, FiveDownsInTenSecondsAreFlappingThenHealthyAfterTheQuietPeriod) {
  SimFabric sim(topology("two-adapters"));
  rdmatest::TempDir state("rdma-health");
  DaemonProcess d(sim, health_options(sim, state.path(), 2));
  // Every port's first verdict.
  const Record first = next_verdict(d, "mlx5_0", 1, "healthy");
  EXPECT_EQ(first.reason, "first_seen");
  EXPECT_EQ(first.previous_health, "");

  const Record flapping = flap_until_flapping(sim, d);
  EXPECT_EQ(flapping.reason, "flaps_in_window");
  // Up again after the fourth down; or, when the fourth up and the fifth down were read in one
  // batch (a loaded machine), still down: the batch's records carry the port's state as one
  // query found it.
  EXPECT_TRUE(flapping.previous_health == "healthy" || flapping.previous_health == "down")
      << flapping.previous_health;
  EXPECT_EQ(flapping.downs_in_window, 5u);
  EXPECT_EQ(flapping.window_s, 10u);
  EXPECT_EQ(flapping.quiet_s, 2u);
  EXPECT_EQ(flapping.severity, Severity::kError);
  EXPECT_EQ(flapping.event_type, -1);
  EXPECT_EQ(flapping.node_guid, "0c42:a103:00f6:5e44");
  EXPECT_NE(flapping.cause_seq, 0u);

  // No record causes this one: the daemon's timer at the end of the quiet period.
  const Record healthy = next_verdict(d, "mlx5_0", 1, "healthy");
  EXPECT_EQ(healthy.reason, "quiet_period_elapsed");
  EXPECT_EQ(healthy.previous_health, "flapping");
  EXPECT_EQ(healthy.cause_seq, 0u);
  EXPECT_EQ(healthy.severity, Severity::kNotice);
  EXPECT_GE(healthy.since_us - flapping.since_us, 2'000'000);

  // The same records in the journal, with their own MESSAGE_ID and fields.
  const json j = journal_entry_of(d, flapping);
  EXPECT_EQ(j.value("MESSAGE_ID", ""), kPortHealthId);
  EXPECT_EQ(j.value("PRIORITY", ""), "3");
  EXPECT_EQ(j.value("RDMA_EVENT", ""), "port_health");
  EXPECT_EQ(j.value("RDMA_HEALTH", ""), "flapping");
  EXPECT_EQ(j.value("RDMA_HEALTH_REASON", ""), "flaps_in_window");
  EXPECT_EQ(j.value("MESSAGE", ""), "mlx5_0 port 1: health flapping (was " +
                                        flapping.previous_health +
                                        "): flaps_in_window, 5 downs in 10 s");
  std::string error;
  const auto journaled = record_from_json(j.value("RDMA_RECORD", ""), &error);
  ASSERT_TRUE(journaled) << error;
  EXPECT_EQ(*journaled, flapping);
  // rdma-eventctl health: healthy again, exit 0, one line.
  const rdmatest::CommandResult ok = health(d);
  EXPECT_EQ(ok.exit_code(), 0) << ok.out << ok.err;
  EXPECT_EQ(ok.out, "healthy: 3 ports healthy\n");
  const json jh = journal_entry_of(d, healthy);
  EXPECT_EQ(jh.value("RDMA_HEALTH", ""), "healthy");
  EXPECT_EQ(jh.value("RDMA_HEALTH_REASON", ""), "quiet_period_elapsed");
}

TEST(PortHealth, ARestartKeepsAFlappingPortFlapping) {
  SimFabric sim(topology("two-adapters"));
  rdmatest::TempDir state("rdma-health");
  {
    DaemonProcess d(sim, health_options(sim, state.path(), 600));
    next_verdict(d, "mlx5_0", 1, "healthy");
    flap_until_flapping(sim, d);
    EXPECT_EQ(d.stop().code, 0);
  }
  std::ifstream saved(state.file("port-health.json"));
  ASSERT_TRUE(saved) << "no state file in " << state.path();
  // The next run, with a short quiet period: the port is still flapping, so it becomes healthy
  // when the quiet period ends (a fresh start would make it healthy at once, first_seen).
  DaemonProcess d(sim, health_options(sim, state.path(), 2));
  EXPECT_TRUE(d.logged("port health: restored 2 devices")) << d.log_tail();
  std::vector<Record> before;
  const Record healthy = next_verdict(d, "mlx5_0", 1, "healthy", &before);
  EXPECT_EQ(healthy.previous_health, "flapping");
  EXPECT_EQ(healthy.reason, "quiet_period_elapsed");
  // Every port is known from before: none gets a first verdict again, none changes.
  expect_no_records(before, "before the quiet period ended");
}

// A verdict is saved before its record goes out: a daemon killed (SIGKILL: no exit path runs)
// the moment a subscriber reads `flapping` comes back with the port still flapping.
TEST(PortHealth, AVerdictReadFromTheSocketSurvivesSigkill) {
  SimFabric sim(topology("two-adapters"));
  rdmatest::TempDir state("rdma-health");
  DaemonOptions o = health_options(sim, state.path(), 600);
  json config = json::parse(o.config_json);
  config["health"]["flap_downs"] = 3;  // the third down makes the port flapping
  o.config_json = config.dump();
  o.print_records = false;
  {
    DaemonProcess d(sim, o);
    LineClient c(d.socket());
    c.require_json(10s, "the hello");
    // The first verdicts are in the state file: what follows is what the restart must keep.
    ASSERT_TRUE(rdmatest::wait_until(
        [&] { return std::ifstream(state.file("port-health.json")).good(); }, 10s));
    for (int i = 0; i < 3; ++i) {
      inject(sim, {"port", "down", "mlx5_0/1"});
      if (i < 2) inject(sim, {"port", "up", "mlx5_0/1"});
    }
    const std::vector<json> read = c.read_until(
        [](const json& r) {
          return r.value("event", "") == "port_health" && r.value("health", "") == "flapping";
        },
        20s);
    d.process().signal(SIGKILL);
    EXPECT_EQ(d.process().require_exit(10s).signal, SIGKILL);
    json flapping = stable_part(read.back());
    flapping.erase("since");
    flapping.erase("cause_seq");
    // healthy, or down when the third down came before the link was back up: the simulator's
    // timing, not the daemon's.
    flapping.erase("previous_health");
    EXPECT_EQ(flapping, (json{{"schema", 1},
                              {"event", "port_health"},
                              {"event_type", -1},
                              {"severity", "error"},
                              {"device", "mlx5_0"},
                              {"node_guid", "0c42:a103:00f6:5e44"},
                              {"port", 1},
                              {"health", "flapping"},
                              {"reason", "flaps_in_window"},
                              {"downs_in_window", 3},
                              {"errors_in_window", 0},
                              {"window_s", 10},
                              {"quiet_s", 600}}));
  }
  inject(sim, {"port", "up", "mlx5_0/1"});  // while no daemon runs

  DaemonProcess d(sim, o);
  EXPECT_TRUE(d.logged("port health: restored 2 devices")) << d.log_tail();
  const rdmatest::CommandResult js = health(d, {"--json"});
  EXPECT_EQ(js.exit_code(), 1) << js.out << js.err;
  const json h = json::parse(js.out)["health"];
  EXPECT_EQ(h["host"], "flapping");
  EXPECT_EQ(h["state_write_failures"], 0);
  ASSERT_EQ(h["ports"].size(), 3u) << h;
  const json& port = h["ports"][0];
  EXPECT_EQ(port["device"], "mlx5_0");
  EXPECT_EQ(port["port"], 1);
  EXPECT_EQ(port["health"], "flapping");
  EXPECT_EQ(port["reason"], "flaps_in_window");
  EXPECT_EQ(port["link_up"], true);
  EXPECT_EQ(h["ports"][1]["health"], "healthy");
  EXPECT_EQ(h["ports"][2]["health"], "healthy");
}

// A state directory that is not there: every write fails, is counted, and is logged once; the
// daemon goes on publishing verdicts.
TEST(PortHealth, AStateFileThatCannotBeWrittenIsCountedAndLoggedOnce) {
  SimFabric sim(topology("two-adapters"));
  rdmatest::TempDir state("rdma-health");
  DaemonOptions o = health_options(sim, state.file("none"), 600);
  o.print_records = false;
  DaemonProcess d(sim, o);
  LineClient c(d.socket());
  c.require_json(10s, "the hello");
  inject(sim, {"port", "down", "mlx5_0/1"});
  c.read_until(
      [](const json& r) {
        return r.value("event", "") == "port_health" && r.value("health", "") == "down";
      },
      20s);
  const rdmatest::CommandResult js = health(d, {"--json"});
  EXPECT_EQ(js.exit_code(), 1) << js.out << js.err;
  // The first verdicts at start, then the down: two writes at least (a record that changes no
  // verdict adds one a second later).
  EXPECT_GE(json::parse(js.out)["health"]["state_write_failures"].get<int>(), 2) << js.out;
  const std::string line = "port health: cannot write " + state.file("none/port-health.json") +
                           ": No such file or directory";
  const std::string log = d.process().stderr_text();
  const size_t first = log.find(line);
  EXPECT_NE(first, std::string::npos) << d.log_tail();
  EXPECT_EQ(log.find(line, first + 1), std::string::npos) << "logged more than once";
  // The inventory beside it (its ports joined at start) fails the same way, logged once too.
  const std::string inventory_line = "inventory: cannot write " +
                                     state.file("none/inventory.json") +
                                     ": No such file or directory";
  const size_t inventory_first = log.find(inventory_line);
  EXPECT_NE(inventory_first, std::string::npos) << d.log_tail();
  EXPECT_EQ(log.find(inventory_line, inventory_first + 1), std::string::npos)
      << "logged more than once";
}

// rdma-eventctl report DEV/PORT qp_fatal: one application report, published.
Record report_qp_fatal(DaemonProcess& d, const std::string& target) {
  const auto r = rdmatest::run_command(
      {rdmatest::bin("rdma-eventctl"), "--socket", d.socket(), "report", target, "qp_fatal"});
  EXPECT_EQ(r.exit_code(), 0) << r.err;
  for (int i = 0; i < 50; ++i) {
    Record rec = d.next_record();
    if (rec.event == EventKind::kAppReport) return rec;
  }
  ADD_FAILURE() << "no app_report record for " << target;
  return {};
}

DaemonOptions report_health_options(const SimFabric& sim, const std::string& state_dir,
                                    bool count) {
  DaemonOptions o = health_options(sim, state_dir, 600);
  json config = json::parse(o.config_json);
  config["health"]["application_errors"] = {
      {"count", count}, {"errors", 2}, {"window_s", 60}, {"quiet_s", 600}};
  o.config_json = config.dump();
  return o;
}

TEST(PortHealth, ApplicationReportsMakeTheReportedPortDegraded) {
  SimFabric sim(topology("two-adapters"));
  rdmatest::TempDir state("rdma-health");
  DaemonProcess d(sim, report_health_options(sim, state.path(), true));
  next_verdict(d, "mlx5_1", 2, "healthy");  // the last port's first verdict
  report_qp_fatal(d, "mlx5_0/1");
  // One that names no port counts too: mlx5_0 has one port.
  const Record second = report_qp_fatal(d, "mlx5_0");
  EXPECT_EQ(second.port, 0u);
  // The second report within the window: the verdict comes right after it.
  const Record degraded = d.next_record();
  EXPECT_EQ(degraded.event, EventKind::kPortHealth);
  EXPECT_EQ(degraded.device, "mlx5_0");
  EXPECT_EQ(degraded.port, 1u);
  EXPECT_EQ(degraded.health, "degraded");
  EXPECT_EQ(degraded.previous_health, "healthy");
  EXPECT_EQ(degraded.reason, "application_errors");
  EXPECT_EQ(degraded.errors_in_window, 2u);
  EXPECT_EQ(degraded.downs_in_window, 0u);
  EXPECT_EQ(degraded.cause_seq, second.seq);
  EXPECT_EQ(degraded.severity, Severity::kWarning);
  const json j = journal_entry_of(d, degraded);
  EXPECT_EQ(j.value("RDMA_HEALTH", ""), "degraded");
  EXPECT_EQ(j.value("RDMA_HEALTH_REASON", ""), "application_errors");
  EXPECT_EQ(j.value("MESSAGE", ""),
            "mlx5_0 port 1: health degraded (was healthy): application_errors, 2 errors in window");
  const rdmatest::CommandResult h = health(d);
  EXPECT_EQ(h.exit_code(), 1) << h.out << h.err;
  EXPECT_NE(h.out.find("mlx5_0/1 degraded (application_errors"), std::string::npos) << h.out;
}

TEST(PortHealth, ReportsThatDoNotCountLeaveThePortHealthy) {
  SimFabric sim(topology("two-adapters"));
  rdmatest::TempDir state("rdma-health");
  DaemonProcess d(sim, report_health_options(sim, state.path(), false));
  next_verdict(d, "mlx5_1", 2, "healthy");
  for (int i = 0; i < 3; ++i)
    report_qp_fatal(d, "mlx5_0/1");
  // A verdict would follow the report that caused it; the next record is the LID change.
  inject(sim, {"lid", "mlx5_0/1", "30"});
  const Record next = d.next_record();
  EXPECT_EQ(next.event, EventKind::kLidChange) << event_name(next.event) << " " << next.health;
  const rdmatest::CommandResult h = health(d);
  EXPECT_EQ(h.exit_code(), 0) << h.out << h.err;
}

// The classic silent failure: a 4x HDR link that retrains at 1x is up, and carries a quarter
// of the traffic. Degraded below the rate it had when it was last healthy, healthy again once
// it trains at 4x.
TEST(PortHealth, ALinkThatRetrainsAt1xIsDegradedUntilItIsBackAt4x) {
  SimFabric sim(topology("two-adapters"));
  rdmatest::TempDir state("rdma-health");
  DaemonProcess d(sim, health_options(sim, state.path(), 600));
  next_verdict(d, "mlx5_1", 2, "healthy");
  inject(sim, {"port", "down", "mlx5_0/1"});
  next_verdict(d, "mlx5_0", 1, "down");
  inject(sim, {"port", "up", "mlx5_0/1", "--width", "1x"});
  std::vector<Record> before;
  const Record degraded = next_verdict(d, "mlx5_0", 1, "degraded", &before);
  ASSERT_EQ(before.size(), 1u);  // the port_active record that caused it
  EXPECT_EQ(before[0].event, EventKind::kPortActive);
  ASSERT_TRUE(before[0].port_info.has_value());
  EXPECT_EQ(before[0].port_info->lanes, 1u);
  EXPECT_EQ(degraded.previous_health, "down");
  EXPECT_EQ(degraded.reason, "rate_below_last_healthy");
  EXPECT_EQ(degraded.cause_seq, before[0].seq);
  EXPECT_EQ(degraded.severity, Severity::kWarning);
  const json j = journal_entry_of(d, degraded);
  EXPECT_EQ(j.value("RDMA_HEALTH", ""), "degraded");
  EXPECT_EQ(j.value("RDMA_HEALTH_REASON", ""), "rate_below_last_healthy");
  const rdmatest::CommandResult h = health(d);
  EXPECT_EQ(h.exit_code(), 1) << h.out << h.err;
  EXPECT_NE(h.out.find("mlx5_0/1 degraded (rate_below_last_healthy)"), std::string::npos) << h.out;

  inject(sim, {"port", "down", "mlx5_0/1"});
  next_verdict(d, "mlx5_0", 1, "down");
  inject(sim, {"port", "up", "mlx5_0/1", "--width", "4x"});
  const Record healthy = next_verdict(d, "mlx5_0", 1, "healthy");
  EXPECT_EQ(healthy.previous_health, "down");
  EXPECT_EQ(health(d).exit_code(), 0);
}

// With an expected rate for the device, a link slower than that is degraded even when it was
// never seen faster (a host booted with a bad cable).
TEST(PortHealth, ALinkSlowerThanTheExpectedRateIsDegraded) {
  SimFabric sim(topology("two-adapters"));
  rdmatest::TempDir state("rdma-health");
  DaemonOptions o = health_options(sim, state.path(), 600);
  json config = json::parse(o.config_json);
  config["health"]["expected"] = {{{"devices", "mlx5_0"}, {"width", "4x"}, {"speed", "ndr"}}};
  o.config_json = config.dump();
  DaemonProcess d(sim, o);
  // 4x HDR is half of the 4x NDR expected: degraded from its first verdict.
  const Record first = next_verdict(d, "mlx5_0", 1, "degraded");
  EXPECT_EQ(first.reason, "rate_below_expected");
  EXPECT_EQ(first.previous_health, "");
  inject(sim, {"port", "down", "mlx5_0/1"});
  next_verdict(d, "mlx5_0", 1, "down");
  inject(sim, {"port", "up", "mlx5_0/1", "--speed", "ndr"});
  const Record healthy = next_verdict(d, "mlx5_0", 1, "healthy");
  EXPECT_EQ(healthy.previous_health, "down");
}

TEST(PortHealth, ACorruptStateFileIsLoggedAndIgnored) {
  SimFabric sim(topology("two-adapters"));
  rdmatest::TempDir state("rdma-health");
  state.write("port-health.json", "{\"version\": 1, \"devices\": [");
  DaemonProcess d(sim, health_options(sim, state.path(), 2));
  // Logged before the daemon is ready: among the lines read so far.
  EXPECT_TRUE(d.logged("port health: ignoring " + state.file("port-health.json") + ": corrupt"))
      << d.log_tail();
  const Record first = next_verdict(d, "mlx5_0", 1, "healthy");
  EXPECT_EQ(first.reason, "first_seen");
}

}  // namespace
}  // namespace rdma_eventd::test

namespace rdma_eventd::test {
namespace {

TEST(PortHealth, EventctlHealthSaysOneLineAndExitsOneForAFlappingPort) {
  SimFabric sim(topology("two-adapters"));
  rdmatest::TempDir state("rdma-health");
  DaemonProcess d(sim, health_options(sim, state.path(), 600));
  next_verdict(d, "mlx5_0", 1, "healthy");
  const Record flapping = flap_until_flapping(sim, d);

  const rdmatest::CommandResult text = health(d);
  EXPECT_EQ(text.exit_code(), 1) << text.out << text.err;
  EXPECT_EQ(text.out,
            "flapping: 1 of 3 ports not healthy: mlx5_0/1 flapping (flaps_in_window) since " +
                format_rfc3339_us(flapping.since_us) + "\n");

  const rdmatest::CommandResult js = health(d, {"--json"});
  EXPECT_EQ(js.exit_code(), 1) << js.out << js.err;
  const json reply = json::parse(js.out);
  EXPECT_EQ(reply["type"], "reply");
  EXPECT_EQ(reply["op"], "health");
  const json& h = reply["health"];
  EXPECT_EQ(h["enabled"], true);
  EXPECT_EQ(h["host"], "flapping");
  EXPECT_EQ(h["not_counted"], 0);
  ASSERT_EQ(h["ports"].size(), 3u) << h;
  // What its counters say right after the flaps (a first read since it came up, or none yet)
  // is link quality's: docs/health.md, "Unknown is not clean".
  json first = h["ports"][0];
  EXPECT_EQ(first["link_quality"], "unknown") << first;
  first.erase("link_quality");
  first.erase("link_quality_reason");
  EXPECT_EQ(first, (json{{"device", "mlx5_0"},
                         {"node_guid", "0c42:a103:00f6:5e44"},
                         {"port", 1},
                         {"health", "flapping"},
                         {"reason", "flaps_in_window"},
                         {"since", format_rfc3339_us(flapping.since_us)},
                         {"link_up", true},
                         {"downs_in_window", 5},
                         {"window_s", flapping.window_s},
                         {"counted", true}}));
  EXPECT_EQ(h["ports"][1]["health"], "healthy");
  EXPECT_EQ(h["ports"][2]["health"], "healthy");
}

TEST(PortHealth, EventctlHealthExitsTwoWhenItCannotTell) {
  SimFabric sim(topology("two-adapters"));
  {
    // Health off (the default): the daemon judges nothing.
    DaemonProcess d(sim);
    const rdmatest::CommandResult off = health(d);
    EXPECT_EQ(off.exit_code(), 2) << off.out << off.err;
    EXPECT_EQ(off.out, "unknown: port health is off in rdma-eventd (health.enabled)\n");
  }
  // No daemon at all.
  rdmatest::TempDir dir("rdma-health");
  const rdmatest::CommandResult none = rdmatest::run_command(
      {rdmatest::bin("rdma-eventctl"), "--socket", dir.file("none.sock"), "health"});
  EXPECT_EQ(none.exit_code(), 2) << none.out << none.err;
  EXPECT_EQ(none.out, "unknown: rdma-eventd cannot be reached\n");
  EXPECT_NE(none.err, "");
}

}  // namespace
}  // namespace rdma_eventd::test
