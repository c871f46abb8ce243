// devlink health end to end (docs/health.md, "devlink health"): the real daemon follows the
// simulator's stand-in for the kernel's devlink family (DIR/devlink.sock, through
// RDMA_EVENTD_DEVLINK_SOCKET); reporters are driven with `rdma-sim devlink ...`, and the
// devlink_health and port_health records are read from the daemon's output, its status reply
// and back from a real journald.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "daemon_process.h"
#include "devlink_fixture.h"
#include "journal_sandbox.h"
#include "json_members.h"
#include "paths.h"
#include "proc_info.h"
#include "process.h"
#include "temp_dir.h"
#include "test_support.h"

namespace rdma_eventd::test {
namespace {

using nlohmann::json;
using rdmatest::SimFabric;
using rdmatest::topology;

class DevlinkHealth : public ::testing::Test {
 protected:
  DaemonProcess& start_with(const DaemonOptions& options) { return d_.emplace(sim_, options); }
  DaemonProcess& start(json config = json::object()) {
    return start_with(devlink_options(sim_, state_.path(), config));
  }
  // start(), then `port`'s first verdict (healthy) and the daemon following the stand-in.
  DaemonProcess& start_following(const std::string& port = "mlx5_0/1") {
    DaemonProcess& d = start();
    next_port_verdict(d, port, "healthy");
    wait_following(d);
    return d;
  }
  // mlx5_0's fw_fatal reports an error whose recovery fails: it stays in error, and mlx5_0's
  // port is fatal.
  void stick_fw_fatal(DaemonProcess& d) {
    inject(sim_, {"devlink", "report", "mlx5_0", "fw_fatal", "--recovery", "fail"});
    next_devlink(d, "fw_fatal", "error");
    next_port_verdict(d, "mlx5_0/1", "fatal");
  }

  SimFabric sim_{topology("two-adapters")};
  rdmatest::TempDir state_{"rdma-devlink"};
  std::optional<DaemonProcess> d_;
};

TEST_F(DevlinkHealth, AFatalReportAndItsRecoveryMakeThePortsFatalThenHealthy) {
  DaemonProcess& d = start_following();
  inject(sim_, {"devlink", "report", "mlx5_0", "fw_fatal"});
  // Both notifications may be read in one batch: the records up to the last verdict, in the
  // order the daemon published them, found by what they are.
  std::vector<Record> records;
  const Record healthy = next_port_verdict(d, "mlx5_0/1", "healthy", &records);
  EXPECT_EQ(healthy.reason, "devlink_recovered");
  EXPECT_EQ(healthy.previous_health, "fatal");
  const auto find = [&](auto want) {
    const auto it = std::find_if(records.begin(), records.end(), want);
    return it == records.end() ? std::optional<Record>() : std::optional<Record>(*it);
  };
  const auto change = [](const std::string& c) {
    return [c](const Record& r) {
      return r.event == EventKind::kDevlinkHealth && r.devlink && r.devlink->change == c;
    };
  };
  const std::optional<Record> error_found = find(change("error"));
  const std::optional<Record> recovered_found = find(change("recovered"));
  const std::optional<Record> fatal_found = find([](const Record& r) {
    return r.event == EventKind::kPortHealth && r.device == "mlx5_0" && r.health == "fatal";
  });
  ASSERT_TRUE(error_found && recovered_found && fatal_found);
  const Record& error = *error_found;
  const Record& recovered = *recovered_found;
  EXPECT_EQ(error.device, "mlx5_0");
  EXPECT_EQ(error.port, 0u);
  EXPECT_EQ(error.node_guid, "0c42:a103:00f6:5e44");
  EXPECT_EQ(error.devlink->handle, "pci/0000:00:02.0");
  EXPECT_EQ(error.devlink->port_index, -1);
  EXPECT_EQ(error.devlink->reporter, "fw_fatal");
  EXPECT_EQ(error.devlink->state, "error");
  EXPECT_EQ(error.devlink->previous_state, "healthy");
  EXPECT_EQ(error.devlink->error_count, 1u);
  EXPECT_EQ(error.devlink->recover_count, 0u);
  EXPECT_EQ(error.devlink->new_errors, 1u);
  EXPECT_EQ(error.devlink->grace_period_ms, 60000u);
  EXPECT_TRUE(error.devlink->auto_recover);
  EXPECT_EQ(fatal_found->reason, "device_fatal");
  EXPECT_EQ(fatal_found->cause_seq, error.seq);
  EXPECT_LT(error.seq, recovered.seq);
  EXPECT_EQ(recovered.device, "mlx5_0");
  EXPECT_EQ(recovered.devlink->state, "healthy");
  EXPECT_EQ(recovered.devlink->previous_state, "error");
  EXPECT_EQ(recovered.devlink->recover_count, 1u);
  EXPECT_EQ(recovered.severity, Severity::kNotice);
  EXPECT_EQ(healthy.cause_seq, recovered.seq);

  // Its journal entry, read back with journalctl.
  const json fields = {
      {"RDMA_EVENT", "devlink_health"},      {"RDMA_DEVLINK_HANDLE", "pci/0000:00:02.0"},
      {"RDMA_DEVLINK_REPORTER", "fw_fatal"}, {"RDMA_DEVLINK_STATE", "error"},
      {"RDMA_DEVLINK_CHANGE", "error"},      {"RDMA_DEVICE", "mlx5_0"}};
  EXPECT_EQ(rdmatest::members_of(journal_entry_of(d, error), fields), fields);
  EXPECT_EQ(journal_entry_of(d, recovered).value("RDMA_DEVLINK_CHANGE", ""), "recovered");

  // The status reply's devlink block: both devices' reporters, this one recovered.
  const json s = d.status()["devlink"];
  EXPECT_EQ(s["enabled"], true);
  EXPECT_EQ(s["available"], true);
  EXPECT_EQ(s["notifications"], 2);
  EXPECT_EQ(s["malformed"], 0);
  ASSERT_EQ(s["reporters"].size(), 4u) << s.dump();
  bool seen = false;
  for (const json& r : s["reporters"])
    if (r["handle"] == "pci/0000:00:02.0" && r["reporter"] == "fw_fatal") {
      seen = true;
      EXPECT_EQ(r["state"], "healthy");
      EXPECT_EQ(r["error_count"], 1);
      EXPECT_EQ(r["recover_count"], 1);
      EXPECT_EQ(r["ports"], json::array({"mlx5_0"}));
    }
  EXPECT_TRUE(seen) << s.dump();
}

TEST_F(DevlinkHealth, ADeviceFatalAndTheFatalReportMakeOneVerdict) {
  DaemonProcess& d = start_following();
  // The firmware's fatal error: mlx5 raises DEVICE_FATAL, then reports fw_fatal.
  inject(sim_, {"fatal", "mlx5_0"});
  inject(sim_, {"devlink", "report", "mlx5_0", "fw_fatal", "--recovery", "fail"});
  std::vector<Record> before;
  next_devlink(d, "fw_fatal", "error", &before);
  // A record after the report, so that every verdict it caused has been read.
  inject(sim_, {"port", "down", "mlx5_1/1"});
  next_record_where(
      d, [](const Record& r) { return r.event == EventKind::kPortErr && r.device == "mlx5_1"; },
      "port_err of mlx5_1", &before);
  int fatal = 0;
  for (const Record& r : before)
    fatal += r.event == EventKind::kPortHealth && r.device == "mlx5_0" && r.health == "fatal";
  EXPECT_EQ(fatal, 1);
}

// mlx5's fw_fatal: a report while it is still in error is one the kernel does not recover
// (devlink_health_report: -ECANCELED), and the driver then unloads itself ("Driver is in error
// state. Unloading"): the port stays fatal, for that reason, when its device goes. A recovery by
// hand releases it (the device is gone); the driver bound again brings it back healthy.
TEST_F(DevlinkHealth, AReportWhileInErrorUnloadsTheDriverAndTheDeviceComesBackWithIt) {
  DaemonProcess& d = start_following();
  stick_fw_fatal(d);
  inject(sim_, {"devlink", "report", "mlx5_0", "fw_fatal"});
  const Record again = next_devlink(d, "fw_fatal", "error_again");
  EXPECT_EQ(again.devlink->error_count, 2u);
  EXPECT_EQ(again.devlink->new_errors, 1u);
  EXPECT_EQ(again.devlink->state, "error");
  // Unloaded: the port is still fatal, because its recovery was refused.
  ASSERT_TRUE(rdmatest::wait_until([&] { return d.status()["devices"].size() == 1; },
                                   std::chrono::seconds(15)));
  EXPECT_EQ(port_health_of(d, "mlx5_0", 1),
            (std::pair<std::string, std::string>{"fatal", "recovery_refused"}));
  inject(sim_, {"devlink", "recover", "mlx5_0", "fw_fatal"});
  const Record recovered = next_devlink(d, "fw_fatal", "recovered");
  EXPECT_EQ(recovered.devlink->recover_count, 1u);
  EXPECT_EQ(next_port_verdict(d, "mlx5_0/1", "gone").reason, "device_removed");
  inject(sim_, {"reload", "mlx5_0"});
  EXPECT_EQ(next_port_verdict(d, "mlx5_0/1", "healthy").reason, "device_added");
}

TEST_F(DevlinkHealth, FirmwareErrorsMakeEveryPortOfTheDeviceDegraded) {
  DaemonProcess& d = start_following("mlx5_1/2");
  // mlx5's fw has no recover operation: it stays in error.
  inject(sim_, {"devlink", "report", "mlx5_1", "fw"});
  const Record error = next_devlink(d, "fw", "error");
  EXPECT_EQ(error.device, "mlx5_1");
  EXPECT_FALSE(error.devlink->auto_recover);
  std::vector<uint32_t> ports;
  for (const Record& r : degraded_verdicts(d, "mlx5_1", 2)) {
    EXPECT_EQ(r.reason, "firmware_errors");
    ports.push_back(r.port);
  }
  EXPECT_EQ(ports, (std::vector<uint32_t>{1, 2}));
}

// The daemon keeps the devices' devlink instances once read (they are sysfs walks); a device
// added or renamed is read again: the next report names the device as it is now.
TEST_F(DevlinkHealth, ReportsNameTheDeviceAsItIsAfterAReplugAndARename) {
  inject(sim_, {"unplug", "mlx5_1"});
  DaemonOptions o = devlink_options(sim_, state_.path());
  // Device changes from the RDMA netlink monitor's stand-in: at once, not at the next rescan.
  o.env["RDMA_EVENTD_RDMA_NETLINK_SOCKET"] = sim_.rdma_netlink_socket();
  DaemonProcess& d = start_with(o);
  next_port_verdict(d, "mlx5_0/1", "healthy");
  wait_following(d);
  // The instances read with mlx5_0 alone.
  inject(sim_, {"devlink", "report", "mlx5_0", "fw"});
  EXPECT_EQ(next_devlink(d, "fw", "error").device, "mlx5_0");

  inject(sim_, {"replug", "mlx5_1"});
  next_record_where(
      d, [](const Record& r) { return r.event == EventKind::kDeviceAdded; }, "the replug");
  inject(sim_, {"devlink", "report", "mlx5_1", "fw"});
  const Record added = next_devlink(d, "fw", "error");
  EXPECT_EQ(added.device, "mlx5_1");
  EXPECT_EQ(added.devlink->handle, "pci/0000:00:03.0");

  inject(sim_, {"rename", "mlx5_0", "ib7"});
  next_record_where(
      d, [](const Record& r) { return r.event == EventKind::kDeviceRenamed; }, "the rename");
  inject(sim_, {"devlink", "report", "pci/0000:00:02.0", "fw"});
  const Record renamed = next_devlink(d, "fw", "error_again");
  EXPECT_EQ(renamed.device, "ib7");
  EXPECT_EQ(renamed.node_guid, "0c42:a103:00f6:5e44");
  EXPECT_EQ(renamed.devlink->error_count, 2u);
}

// A daemon that starts while mlx5_0's fw_fatal is in error (its failed recovery left the device
// unopenable) finds the reporter in its first dump; the device opened later (the driver bound
// again, its reporters recreated healthy) is healthy.
TEST_F(DevlinkHealth, AReporterAlreadyInErrorAtStartIsFoundInError) {
  inject(sim_, {"devlink", "report", "mlx5_0", "fw_fatal", "--recovery", "fail"});
  DaemonProcess& d = start();
  const Record found = next_devlink(d, "fw_fatal", "found_in_error");
  EXPECT_EQ(found.devlink->handle, "pci/0000:00:02.0");
  EXPECT_EQ(found.devlink->previous_state, "");
  EXPECT_EQ(found.devlink->error_count, 1u);
  // Its device could not be opened: nothing it concerns yet.
  EXPECT_EQ(found.device, "");
  inject(sim_, {"reload", "mlx5_0"});
  EXPECT_EQ(next_port_verdict(d, "mlx5_0/1", "healthy").reason, "first_seen");
  const json s = d.status()["devlink"];
  for (const json& r : s["reporters"]) {
    if (r["reporter"] == "fw_fatal" && r["handle"] == "pci/0000:00:02.0") {
      EXPECT_EQ(r["state"], "healthy") << s.dump();
    }
  }
}

TEST_F(DevlinkHealth, AnUnmappedInstanceIsPublishedWithoutADeviceUnlessTurnedOff) {
  inject(sim_, {"devlink", "add", "netdevsim/netdevsim9", "dummy"});
  DaemonProcess& d = start();
  wait_following(d);
  inject(sim_, {"devlink", "report", "netdevsim/netdevsim9", "dummy"});
  const Record error = next_devlink(d, "dummy", "error");
  EXPECT_EQ(error.device, "");
  EXPECT_EQ(error.port, 0u);
  EXPECT_EQ(error.devlink->handle, "netdevsim/netdevsim9");
  const Record recovered = next_devlink(d, "dummy", "recovered");
  EXPECT_EQ(recovered.device, "");

  rdmatest::TempDir state2("rdma-devlink");
  DaemonProcess quiet(
      sim_, devlink_options(sim_, state2.path(), {{"devlink_health", {{"unmapped", false}}}}));
  wait_following(quiet);
  inject(sim_, {"devlink", "report", "netdevsim/netdevsim9", "dummy"});
  inject(sim_, {"devlink", "report", "mlx5_1", "fw"});
  // The mapped report comes through; the unmapped one before it did not.
  const Record next = next_record_where(
      quiet, [](const Record& r) { return r.event == EventKind::kDevlinkHealth; },
      "a devlink_health record");
  EXPECT_EQ(next.devlink->reporter, "fw");
  EXPECT_EQ(next.device, "mlx5_1");
  // Read, not published: dummy's error and recovery, then fw's error.
  EXPECT_EQ(quiet.status()["devlink"]["notifications"], 3);
  EXPECT_EQ(quiet.status()["devlink"]["records"], 1);
}

TEST_F(DevlinkHealth, TurnedOffTheDaemonNeverConnects) {
  // Link quality off too: it reads RoCE ports' FEC statistics over the same generic netlink.
  DaemonProcess& d =
      start({{"devlink_health", {{"enabled", false}}}, {"link_health", {{"enabled", false}}}});
  next_port_verdict(d, "mlx5_0/1", "healthy");
  const json s = d.status()["devlink"];
  EXPECT_EQ(s["enabled"], false);
  EXPECT_EQ(s["available"], false);
  EXPECT_EQ(sim_.stats()["devlink"]["connections"], 0);
}

// A reload turns devlink health off: the daemon lets go of the kernel's socket, and what the
// reporters held goes (no recovery would ever be heard of). Turned on again, it dumps the
// reporters at once and finds the one still in error.
TEST_F(DevlinkHealth, TurnedOffByAReloadItsVerdictsGoAndTurnedOnAgainItFindsTheReporters) {
  DaemonProcess& d = start_following();
  // A firmware syndrome (mlx5's fw: no recovery, the device stays up): degraded.
  inject(sim_, {"devlink", "report", "mlx5_0", "fw"});
  next_devlink(d, "fw", "error");
  EXPECT_EQ(next_port_verdict(d, "mlx5_0/1", "degraded").reason, "firmware_errors");

  json off = {{"health", {{"enabled", true}}}, {"devlink_health", {{"enabled", false}}}};
  d.write_config(off.dump());
  d.reload();
  const Record released = next_port_verdict(d, "mlx5_0/1", "healthy");
  EXPECT_EQ(released.reason, "config_changed");
  ASSERT_TRUE(rdmatest::wait_until([&] { return sim_.stats()["devlink"]["connections_open"] == 0; },
                                   std::chrono::seconds(10)));
  const json s = d.status()["devlink"];
  EXPECT_EQ(s["enabled"], false);
  EXPECT_EQ(s["available"], false);
  EXPECT_TRUE(s["reporters"].empty()) << s.dump();

  json on = off;
  on["devlink_health"]["enabled"] = true;
  d.write_config(on.dump());
  d.reload();
  // Found in error again; a reporter that cannot recover, first read in error, counts no error
  // (when it happened is unknown) and holds nothing: the port stays healthy.
  const Record found = next_devlink(d, "fw", "found_in_error");
  EXPECT_EQ(found.device, "mlx5_0");
  EXPECT_EQ(d.status()["devlink"]["available"], true);
  EXPECT_EQ(port_health_of(d, "mlx5_0", 1),
            (std::pair<std::string, std::string>{"healthy", "config_changed"}));
}

TEST_F(DevlinkHealth, WhenTheStandInGoesAwayTheDaemonLogsOnceAndGoesOnWithoutSpinning) {
  DaemonProcess& d = start();
  wait_following(d);
  EXPECT_EQ(sim_.ctl_json({"devlink", "close"})["closed"], 1);
  d.require_log("reading notifications failed");
  ASSERT_TRUE(rdmatest::wait_until([&] { return d.status()["devlink"]["available"] == false; },
                                   std::chrono::seconds(10)));
  const pid_t pid = d.process().pid();
  const uint64_t before = rdmatest::cpu_ticks(pid);
  std::this_thread::sleep_for(std::chrono::seconds(3));  // a span to measure, not a wait
  EXPECT_LE(rdmatest::cpu_ticks(pid) - before, 10u);     // at most 0.1 s of CPU in 3 s
  // Logged once, and the daemon still works.
  int logged = 0;
  for (const std::string& l : d.process().stderr_lines())
    logged += l.find("devlink health:") != std::string::npos &&
              l.find("reading notifications failed") != std::string::npos;
  EXPECT_EQ(logged, 1);
  inject(sim_, {"port", "down", "mlx5_0/1"});
  next_record_where(
      d, [](const Record& r) { return r.event == EventKind::kPortErr; }, "port_err");
  EXPECT_FALSE(d.status()["devlink"]["unavailable"].get<std::string>().empty());
}

// mlx5e's uplink devlink port of a PF: (vhca_id << 16) | 0xffff; the simulator's PF0 (mlx5_0,
// pci/0000:00:02.0) has vhca id 0, PF1 (mlx5_1, pci/0000:00:03.0) 1.
constexpr int64_t kPf0Uplink = 0xffff;
constexpr int64_t kPf1Uplink = (int64_t{1} << 16) | 0xffff;

// What a tx port reporter's devlink_health record carries (the daemon's view of the kernel's
// message): mlx5e's tx, with recover and auto recover.
DevlinkHealthEvent tx_event(const std::string& handle, int64_t port_index,
                            const std::string& change, const std::string& state,
                            const std::string& previous, uint64_t errors, uint64_t recoveries,
                            uint64_t new_errors, uint64_t new_recoveries, uint64_t grace_ms) {
  return {.handle = handle,
          .port_index = port_index,
          .reporter = "tx",
          .state = state,
          .previous_state = previous,
          .change = change,
          .error_count = errors,
          .recover_count = recoveries,
          .new_errors = new_errors,
          .new_recoveries = new_recoveries,
          .grace_period_ms = grace_ms,
          .auto_recover = true};
}

// Reports an unmapped reporter (role none) and reads up to its record: every record the
// daemon published before it is in *before, so what did not happen can be asserted.
void read_up_to_a_marker(SimFabric& sim, DaemonProcess& d, std::vector<Record>* before) {
  inject(sim, {"devlink", "report", "netdevsim/netdevsim9", "dummy", "--recovery", "fail"});
  next_record_where(
      d,
      [](const Record& r) {
        return r.event == EventKind::kDevlinkHealth && r.devlink &&
               r.devlink->handle == "netdevsim/netdevsim9";
      },
      "the marker's devlink_health record", before);
}

// A tx reporter on the devlink port of a one-port device (mlx5_0) is about that port: three
// queue errors within health.queue_errors' window make it degraded (queue_errors), the first
// two do not, and the other device's ports are left alone.
TEST_F(DevlinkHealth, APortReportersQueueErrorsMakeItsPortDegradedAndNoOther) {
  inject(sim_, {"devlink", "add", "pci/0000:00:02.0", "tx", "--port", "65535"});
  inject(sim_, {"devlink", "add", "netdevsim/netdevsim9", "dummy"});
  DaemonProcess& d = start_following();
  std::vector<Record> records;
  for (int i = 0; i < 3; ++i)
    inject(sim_, {"devlink", "report", "mlx5_0", "tx", "--port", "65535"});
  const Record degraded = next_port_verdict(d, "mlx5_0/1", "degraded", &records);
  // Each report recovered at once (grace period 0): error, recovered, three times. The verdict
  // comes with the third error, not before; the third recovery may be read in the same batch,
  // before the verdict is published.
  std::vector<Record> tx;
  for (const Record& r : records)
    if (r.event == EventKind::kDevlinkHealth && r.devlink && r.devlink->reporter == "tx")
      tx.push_back(r);
  ASSERT_GE(tx.size(), 5u);
  const std::string h = "pci/0000:00:02.0";
  EXPECT_EQ(*tx[0].devlink, tx_event(h, kPf0Uplink, "error", "error", "healthy", 1, 0, 1, 0, 0));
  EXPECT_EQ(*tx[1].devlink,
            tx_event(h, kPf0Uplink, "recovered", "healthy", "error", 1, 1, 0, 1, 0));
  EXPECT_EQ(*tx[4].devlink, tx_event(h, kPf0Uplink, "error", "error", "healthy", 3, 2, 1, 0, 0));
  if (tx.size() == 6) {
    EXPECT_EQ(*tx[5].devlink,
              tx_event(h, kPf0Uplink, "recovered", "healthy", "error", 3, 3, 0, 1, 0));
  }
  ASSERT_LE(tx.size(), 6u);
  for (const Record& r : tx) {
    EXPECT_EQ(r.device, "mlx5_0");
    EXPECT_EQ(r.node_guid, "0c42:a103:00f6:5e44");
    EXPECT_EQ(r.port, 1u);  // the port reporter's port: the device has one
  }
  EXPECT_EQ(degraded.reason, "queue_errors");
  EXPECT_EQ(degraded.previous_health, "healthy");
  EXPECT_EQ(degraded.errors_in_window, 3u);
  EXPECT_EQ(degraded.cause_seq, tx[4].seq);
  for (const Record& r : records)
    EXPECT_FALSE(r.event == EventKind::kPortHealth && r.device == "mlx5_0") << r.health;

  read_up_to_a_marker(sim_, d, &records);
  for (const Record& r : records) {
    if (r.event == EventKind::kPortHealth && r.device == "mlx5_1") {
      EXPECT_EQ(r.health, "healthy") << "mlx5_1/" << r.port << " " << r.reason;
    }
  }
  // The status reply lists the port reporter with its port index and its RDMA device.
  const json status = d.status()["devlink"];
  bool seen = false;
  for (const json& r : status["reporters"])
    if (r["reporter"] == "tx") {
      seen = true;
      EXPECT_EQ(r["handle"], h);
      EXPECT_EQ(r["port_index"], kPf0Uplink);
      EXPECT_EQ(r["error_count"], 3);
      EXPECT_EQ(r["ports"], json::array({"mlx5_0/1"})) << r.dump();
    }
  EXPECT_TRUE(seen) << status.dump();
}

// mlx5e's tx as the kernel creates it (grace period 500 ms). A report whose recovery fails
// leaves it in error; a second report while in error is `error_again`: the reporter is stuck
// and holds its port degraded below the error threshold (two errors of three). A recovery by
// hand releases the hold: healthy (devlink_recovered), two errors being under the threshold.
TEST_F(DevlinkHealth, AStuckPortReporterHoldsItsPortDegradedUntilItRecovers) {
  inject(sim_,
         {"devlink", "add", "pci/0000:00:02.0", "tx", "--port", "65535", "--grace-period", "500"});
  DaemonProcess& d = start_following();
  const std::string h = "pci/0000:00:02.0";
  inject(sim_, {"devlink", "report", "mlx5_0", "tx", "--port", "65535", "--recovery", "fail"});
  std::vector<Record> between;
  const Record error = next_devlink(d, "tx", "error", &between);
  EXPECT_EQ(*error.devlink, tx_event(h, kPf0Uplink, "error", "error", "healthy", 1, 0, 1, 0, 500));
  EXPECT_EQ(error.port, 1u);
  inject(sim_, {"devlink", "report", "mlx5_0", "tx", "--port", "65535"});
  const Record again = next_devlink(d, "tx", "error_again", &between);
  EXPECT_EQ(*again.devlink,
            tx_event(h, kPf0Uplink, "error_again", "error", "error", 2, 0, 1, 0, 500));
  const Record held = next_port_verdict(d, "mlx5_0/1", "degraded", &between);
  EXPECT_EQ(held.reason, "queue_errors");
  EXPECT_EQ(held.cause_seq, again.seq);
  // One error alone judged nothing.
  for (const Record& r : between)
    EXPECT_FALSE(r.event == EventKind::kPortHealth && r.device == "mlx5_0") << r.health;

  inject(sim_, {"devlink", "recover", "mlx5_0", "tx", "--port", "65535"});
  const Record recovered = next_devlink(d, "tx", "recovered");
  EXPECT_EQ(*recovered.devlink,
            tx_event(h, kPf0Uplink, "recovered", "healthy", "error", 2, 1, 0, 1, 500));
  const Record healthy = next_port_verdict(d, "mlx5_0/1", "healthy");
  EXPECT_EQ(healthy.reason, "devlink_recovered");
  EXPECT_EQ(healthy.previous_health, "degraded");
  EXPECT_EQ(healthy.cause_seq, recovered.seq);
}

// A port reporter of a device with two ports (mlx5_1: one PCI function with two netdevs in the
// simulator) cannot be told apart by port: the daemon judges the device as a whole, and both
// ports go degraded. (A real two-port mlx5 RDMA device is a multi-port RoCE device over two
// PFs: the second PF's uplink reporter is reached through port 2's netdev alone, but the
// first PF is the device's own parent, so its reporters judge both ports.)
TEST_F(DevlinkHealth, APortReporterOfATwoPortDeviceJudgesTheDevice) {
  inject(sim_, {"devlink", "add", "pci/0000:00:03.0", "tx", "--port", std::to_string(kPf1Uplink)});
  DaemonProcess& d = start_following("mlx5_1/2");
  for (int i = 0; i < 3; ++i)
    inject(sim_, {"devlink", "report", "mlx5_1", "tx", "--port", std::to_string(kPf1Uplink)});
  const Record error = next_devlink(d, "tx", "error");
  EXPECT_EQ(error.device, "mlx5_1");
  EXPECT_EQ(error.port, 0u);
  EXPECT_EQ(error.devlink->port_index, kPf1Uplink);
  std::vector<uint32_t> ports;
  for (const Record& r : degraded_verdicts(d, "mlx5_1", 2)) {
    EXPECT_EQ(r.reason, "queue_errors");
    EXPECT_EQ(r.errors_in_window, 3u);
    ports.push_back(r.port);
  }
  EXPECT_EQ(ports, (std::vector<uint32_t>{1, 2}));
}

}  // namespace
}  // namespace rdma_eventd::test
