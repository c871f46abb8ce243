// Devices that come, go, get renamed, fail and recover, end to end: the simulator announces
// hot-plug with udev netlink messages (rdma-sim --udev) that the daemon receives through the
// real libudev, in a network namespace of the test's own; records are read back from the
// daemon's output and the journal.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <thread>
#include <utility>

#include "daemon_process.h"
#include "harness.h"
#include "journal_sandbox.h"
#include "paths.h"
#include "proc_info.h"
#include "process.h"
#include "test_support.h"

namespace rdma_eventd::test {
namespace {

using nlohmann::json;
using rdmatest::SimFabric;
using rdmatest::topology;
using namespace std::chrono_literals;

// The journal sandbox (a private /run), a network namespace of the test's own, and udev
// "running" or not in it (/run/udev/control).
void hotplug_sandbox(bool udev_running) {
  JournalSandbox::instance();
  rdmatest::enter_private_network();
  rdmatest::set_udev_running(udev_running);
}

class Hotplug : public ::testing::Test {
 protected:
  struct Sandbox {
    Sandbox() { hotplug_sandbox(true); }
  };
  Sandbox sandbox_;  // before the simulator, which refuses to broadcast outside of it
  SimFabric sim_{topology("two-adapters"), rdmatest::SimOptions{.udev = true}};
};

json next_json(DaemonProcess& d) {
  return json::parse(d.next_record_line());
}

json device_record(const std::string& event, const std::string& severity,
                   const std::string& device) {
  return record(event, -1, severity, device, 0);
}

json port_state(const std::string& device, int port, const json& block,
                const json& changes = json::object()) {
  return port_record("port_state", -1, "info", device, port, block, changes);
}

json with_ports(json r, const std::vector<json>& blocks) {
  r["ports"] = json::array();
  for (size_t i = 0; i < blocks.size(); ++i) {
    json p = blocks[i];
    p["port"] = i + 1;
    r["ports"].push_back(p);
  }
  return r;
}

TEST_F(Hotplug, UnplugReplugAndRenameArePublishedFromUdevEvents) {
  // The kernel's RDMA netlink monitor is there too, and left alone: udev says when a device's
  // node is ready, and only it tells early of the removal of a device that cannot disassociate.
  DaemonProcess daemon(sim_, DaemonOptions{.env = sim_.rdma_netlink_env()});
  EXPECT_TRUE(daemon.logged("hot-plug: following udev events"));

  inject(sim_, {"unplug", "mlx5_1"});
  EXPECT_EQ(
      stable_part(next_json(daemon)),
      with_ports(device_record("device_removed", "warning", "mlx5_1"), {roce_port(), roce_port()}));

  inject(sim_, {"replug", "mlx5_1"});
  EXPECT_EQ(stable_part(next_json(daemon)), device_record("device_added", "notice", "mlx5_1"));
  EXPECT_EQ(stable_part(next_json(daemon)), port_state("mlx5_1", 1, roce_port()));
  EXPECT_EQ(stable_part(next_json(daemon)), port_state("mlx5_1", 2, roce_port()));

  // A subscriber that names the device is told of its rename, and then hears nothing more of
  // it under a name no device has (docs/protocol.md says to subscribe again).
  rdmatest::LineClient by_name(daemon.socket());
  by_name.require_json(10s, "the hello");
  by_name.send(R"({"op":"subscribe","id":1,"ports":["mlx5_0/1"]})"
               "\n");
  by_name.read_until(rdmatest::reply_to(1), 10s);

  // A renamed device keeps its GUID and its context; records use the new name from now on, and
  // its P_Key table (read from sysfs, under the new name) still works.
  inject(sim_, {"rename", "mlx5_0", "ib7"});
  json renamed = device_record("device_renamed", "notice", "ib7");
  renamed["node_guid"] = "0c42:a103:00f6:5e44";
  renamed["old_name"] = "mlx5_0";
  EXPECT_EQ(stable_part(next_json(daemon)), renamed);
  inject(sim_, {"pkey", "ib7/1", "2", "0x8002"});
  const Record pkey = daemon.next_record();
  EXPECT_EQ(pkey.event, EventKind::kPkeyChange);
  EXPECT_EQ(pkey.device, "ib7");
  EXPECT_EQ(pkey.pkeys_added, (std::vector<PkeyEntry>{{2, 0x8002}}));
  EXPECT_EQ(stable_part(by_name.require_json(10s, "the rename")), renamed);
  by_name.send(R"({"op":"ping","id":2})"
               "\n");
  const std::vector<json> after = by_name.read_until(rdmatest::reply_to(2), 10s);
  EXPECT_EQ(after.size(), 1u) << "records after the rename: " << json(after).dump();

  const json st = daemon.status();
  EXPECT_EQ(st["hotplug"]["source"], "udev");
  EXPECT_GE(st["hotplug"]["udev_events"].get<uint64_t>(), 5u);
  EXPECT_EQ(st["hotplug"]["udev_overflows"], 0);
  EXPECT_EQ(st["hotplug"]["netlink_events"], 0);
  EXPECT_EQ(sim_.stats()["rdma_netlink"]["connections"], 0);
  EXPECT_EQ(st["devices"][0]["device"], "ib7");

  // The journal has them too, with their own MESSAGE_IDs and sentences.
  const auto entries = daemon.journal_entries(6);
  ASSERT_EQ(entries.size(), 6u);
  expect_entry_fields(
      entries,
      {{0,
        {{"MESSAGE",
          "mlx5_1: device removed, last known: port 1 ACTIVE 100 Gb/s 4X EDR, port 2 ACTIVE "
          "100 Gb/s 4X EDR"},
         {"MESSAGE_ID", "fac2b940c46c450bbe58c2d204c1b595"}}},
       {1,
        {{"MESSAGE", "mlx5_1: device added (node GUID 0c42:a103:006d:0b3a)"},
         {"MESSAGE_ID", "0b30106622d24a9f8b5c288b3e62c4b1"}}},
       {2, {{"MESSAGE", "mlx5_1 port 1: ACTIVE, 100 Gb/s 4X EDR"}, {"RDMA_EVENT", "port_state"}}},
       {4, {{"MESSAGE", "mlx5_0: device renamed to ib7"}, {"RDMA_EVENT_TYPE", "-1"}}}});
}

TEST_F(Hotplug, ADriverThatCannotDisassociateIsReleasedAtOnce) {
  // Such a driver sends no DEVICE_FATAL: the removal waits for every user to close the
  // device, and only udev tells the daemon to.
  DaemonProcess daemon(sim_);
  const rdmatest::CommandResult r =
      sim_.ctl({"unplug", "mlx5_1", "--no-disassociate", "--wait", "10"});
  EXPECT_EQ(r.exit_code(), 0) << r.err;
  EXPECT_NE(r.out.find("removal complete"), std::string::npos) << r.out;
  EXPECT_EQ(
      stable_part(next_json(daemon)),
      with_ports(device_record("device_removed", "warning", "mlx5_1"), {roce_port(), roce_port()}));
  EXPECT_TRUE(daemon.logged("mlx5_1: removed (udev remove uverbs1); closing it"));
  for (const auto& c : contexts_of(sim_.stats(), daemon.process().pid()))
    EXPECT_TRUE(c["device"] == "mlx5_0" || !c["open"].get<bool>()) << c.dump();
}

TEST_F(Hotplug, AFatalErrorIsFollowedByRecoveryWithItsDowntimeAndWhatChanged) {
  DaemonProcess daemon(sim_);
  inject(sim_, {"lid", "mlx5_0/1", "9"});
  EXPECT_EQ(daemon.next_record().event, EventKind::kLidChange);

  // The test's steady_clock is CLOCK_MONOTONIC, the clock the daemon measures downtimes with.
  using Clock = std::chrono::steady_clock;
  const auto failed_at = Clock::now();
  inject(sim_, {"fatal", "mlx5_0", "--port", "1"});
  const Record fatal = daemon.next_record();
  const auto fatal_seen = Clock::now();
  EXPECT_EQ(fatal.event, EventKind::kDeviceFatal);
  EXPECT_EQ(fatal.port, 1u);
  daemon.require_log("mlx5_0: fatal error; closing it, reopening it once it works again");
  // The device is still listed but cannot be opened: retried with backoff, said once.
  daemon.require_log("mlx5_0: cannot open: Input/output error; retrying");
  EXPECT_EQ(daemon.status()["counters"]["devices_waiting"], 1);

  // The driver resets the device: it is unregistered and registered again (a new index).
  const auto unplugged_at = Clock::now();
  inject(sim_, {"unplug", "mlx5_0"});
  EXPECT_EQ(
      stable_part(next_json(daemon)),
      with_ports(device_record("device_removed", "warning", "mlx5_0"), {ib_port({{"lid", 9}})}));
  inject(sim_, {"replug", "mlx5_0"});
  const json recovered = next_json(daemon);
  const auto recovered_seen = Clock::now();
  EXPECT_EQ(recovered["event"], "device_recovered");
  EXPECT_EQ(recovered["severity"], "notice");
  EXPECT_EQ(recovered["fatal_seq"], fatal.seq);
  EXPECT_EQ(recovered["down_since"], format_rfc3339_us(fatal.time_us));
  // The downtime runs from the device_fatal record (made after failed_at, before fatal_seen)
  // to the reopening (after the unplug began: the reopening resync comes after the one that
  // published the removal; before recovered_seen).
  const auto downtime_ms = recovered["downtime_ms"].get<int64_t>();
  auto ms = [](Clock::duration d) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
  };
  EXPECT_GE(downtime_ms, ms(unplugged_at - fatal_seen));
  EXPECT_LE(downtime_ms, ms(recovered_seen - failed_at));
  // Each record's time was read with the monotonic time the downtime is measured from, so the
  // records' own times agree with it (to the rounding, while the wall clock is not stepped).
  const auto recovered_time_us = parse_rfc3339_us(recovered["time"].get<std::string>());
  ASSERT_TRUE(recovered_time_us);
  EXPECT_NEAR(static_cast<double>(downtime_ms),
              static_cast<double>(*recovered_time_us - fatal.time_us) / 1000.0, 2.0);
  // Its port now, and what differs from before the failure: the replugged device came back
  // with the topology's LID.
  EXPECT_EQ(stable_part(next_json(daemon)),
            port_state("mlx5_0", 1, ib_port(), {{"lid", change(9, 7)}}));
  EXPECT_EQ(daemon.status()["counters"]["devices_waiting"], 0);

  // Nothing is down any more: no retry timer, no periodic rescan. Once it has finished with
  // the status request's connection, the daemon sleeps. Idleness can only be watched for a
  // while: 300 ms is longer than the first retry (100 ms), the timer a recovered device could
  // leave behind; that nothing is left to retry is unit-tested (DeviceLifecycleTest).
  const pid_t pid = daemon.process().pid();
  const uint64_t before = settled_wakeups(pid, std::chrono::milliseconds(100));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(rdmatest::main_thread_wakeups(pid), before);

  inject(sim_, {"port", "down", "mlx5_0/1"});
  EXPECT_EQ(daemon.next_record().event, EventKind::kPortErr);
}

TEST_F(Hotplug, AfterTheUdevMonitorOverflowsOnlyRealChangesArePublished) {
  DaemonProcess daemon(sim_);
  // The daemon stops reading; a driver reloads in a loop, far more udev messages than the
  // monitor's socket holds. mlx5_1 does not change at all.
  daemon.process().signal(SIGSTOP);
  inject(sim_, {"cycle", "mlx5_0", "--count", "400"});
  daemon.process().signal(SIGCONT);
  daemon.require_log("the udev monitor overflowed and lost events");
  // The net effect: mlx5_0 went (its last context's removal) and came back.
  EXPECT_EQ(stable_part(next_json(daemon)),
            with_ports(device_record("device_removed", "warning", "mlx5_0"), {ib_port()}));
  EXPECT_EQ(stable_part(next_json(daemon)), device_record("device_added", "notice", "mlx5_0"));
  EXPECT_EQ(stable_part(next_json(daemon)), port_state("mlx5_0", 1, ib_port()));
  // And nothing else: the next record is the next event's.
  inject(sim_, {"port", "down", "mlx5_1/2"});
  const Record next = daemon.next_record();
  EXPECT_EQ(next.event, EventKind::kPortErr);
  EXPECT_EQ(next.device, "mlx5_1");
  EXPECT_GE(daemon.status()["hotplug"]["udev_overflows"].get<uint64_t>(), 1u);
}

TEST_F(Hotplug, AHundredUnplugsAndReplugsLeakNothing) {
  DaemonProcess daemon(sim_);
  const pid_t pid = daemon.process().pid();
  // A first record, journaled: libsystemd opens its journal socket on the first entry.
  inject(sim_, {"port", "down", "mlx5_1/1"});
  EXPECT_EQ(daemon.next_record().event, EventKind::kPortErr);
  daemon.journal_entries(1);
  const size_t fds = rdmatest::open_fds(pid);
  for (int i = 0; i < 100; ++i) {
    // Half of them like a driver without disassociate: the unplug completes only once the
    // daemon has closed the device.
    if (i % 2) {
      inject(sim_, {"unplug", "mlx5_0", "--no-disassociate", "--wait", "10"});
    } else {
      inject(sim_, {"unplug", "mlx5_0"});
    }
    Record r = daemon.next_record();
    ASSERT_EQ(r.event, EventKind::kDeviceRemoved) << "cycle " << i;
    inject(sim_, {"replug", "mlx5_0"});
    ASSERT_EQ(daemon.next_record().event, EventKind::kDeviceAdded) << "cycle " << i;
    r = daemon.next_record();
    ASSERT_EQ(r.event, EventKind::kPortState) << "cycle " << i;
    EXPECT_EQ(r.seq, 3u * i + 4);
  }
  // Each device open once, no descriptor left behind, and every record in the journal.
  inject(sim_, {"port", "down", "mlx5_0/1"});
  EXPECT_EQ(daemon.next_record().seq, 302u);
  size_t open = 0;
  for (const auto& c : contexts_of(sim_.stats(), pid))
    open += c["open"].get<bool>() ? 1 : 0;
  EXPECT_EQ(open, 2u);
  EXPECT_EQ(rdmatest::open_fds(pid), fds);
  const auto entries = daemon.journal_entries(302);
  EXPECT_EQ(entries.size(), 302u);
}

TEST(HotplugWithoutUdev, DevicesAreFoundByAPeriodicRescan) {
  hotplug_sandbox(false);
  SimFabric sim(topology("two-adapters"));
  DaemonProcess daemon(sim);
  EXPECT_TRUE(daemon.logged(
      "hot-plug: udev is not running here (no /run/udev/control); rescanning for RDMA devices "
      "every 5 s instead"));
  // A driver without disassociate: nothing but the rescan can tell the daemon.
  inject(sim, {"unplug", "mlx5_1", "--no-disassociate"});
  EXPECT_EQ(
      stable_part(next_json(daemon)),
      with_ports(device_record("device_removed", "warning", "mlx5_1"), {roce_port(), roce_port()}));
  EXPECT_TRUE(daemon.logged("mlx5_1: removed (periodic rescan); closing it"));
  inject(sim, {"replug", "mlx5_1"});
  EXPECT_EQ(stable_part(next_json(daemon)), device_record("device_added", "notice", "mlx5_1"));
  EXPECT_EQ(daemon.status()["hotplug"]["source"], "rescan");
}

// A daemon that follows the simulator's RDMA netlink monitor and logs at debug (its messages).
DaemonOptions on_the_monitor_with_debug_log(const SimFabric& sim) {
  return DaemonOptions{.extra_args = {"--log-level", "debug"}, .env = sim.rdma_netlink_env()};
}

// Renames two-adapters' mlx5_0 to ib7: its device_renamed record, and the note that says which
// resync found it (`found_by`).
void rename_mlx5_0_to_ib7(const SimFabric& sim, DaemonProcess& daemon,
                          const std::string& found_by) {
  inject(sim, {"rename", "mlx5_0", "ib7"});
  json renamed = device_record("device_renamed", "notice", "ib7");
  renamed["node_guid"] = "0c42:a103:00f6:5e44";
  renamed["old_name"] = "mlx5_0";
  EXPECT_EQ(stable_part(next_json(daemon)), renamed);
  EXPECT_TRUE(daemon.logged("mlx5_0: renamed to ib7 (" + found_by + ")"));
}

// What the daemon logs where udev does not run and the kernel has the RDMA netlink monitor.
constexpr const char* kMonitorFollowed =
    "hot-plug: udev is not running here (no /run/udev/control); following the kernel's RDMA "
    "netlink monitor, and rescanning for RDMA devices every 5 s only while a device is open "
    "whose removal it cannot announce in time (one whose driver waits for its users to close "
    "it: rxe, siw)";

// A container on Linux 6.12 or later: no udev, and the kernel announces devices over its RDMA
// netlink monitor. Adds and renames are published from its messages, at once; the rescan runs
// only for a removal the kernel announces too late (below), which mlx5's is not.
TEST(HotplugWithoutUdev, TheKernelsRdmaNetlinkMonitorTellsOfDevicesAndRenames) {
  hotplug_sandbox(false);
  SimFabric sim(topology("two-adapters"), rdmatest::SimOptions{.rdma_netlink = "monitor"});
  DaemonProcess daemon(sim, on_the_monitor_with_debug_log(sim));
  EXPECT_TRUE(daemon.logged(kMonitorFollowed));

  // A removal with disassociation: DEVICE_FATAL tells the daemon, the kernel's UNREGISTER
  // follows once the daemon has closed the device.
  inject(sim, {"unplug", "mlx5_1"});
  EXPECT_EQ(
      stable_part(next_json(daemon)),
      with_ports(device_record("device_removed", "warning", "mlx5_1"), {roce_port(), roce_port()}));
  daemon.require_log("rdma netlink: unregister mlx5_1 (index 1)", 10s);

  inject(sim, {"replug", "mlx5_1"});
  EXPECT_EQ(stable_part(next_json(daemon)), device_record("device_added", "notice", "mlx5_1"));
  EXPECT_EQ(stable_part(next_json(daemon)), port_state("mlx5_1", 1, roce_port()));
  EXPECT_EQ(stable_part(next_json(daemon)), port_state("mlx5_1", 2, roce_port()));
  // The REGISTER made them (logged before the records); the ports' NETDEV_ATTACH follow, each
  // its own datagram, as the kernel sends them.
  EXPECT_TRUE(daemon.logged("rdma netlink: register mlx5_1 (index 2)"));
  daemon.require_log("rdma netlink: netdev_attach mlx5_1 port 2 ens1f1 (ifindex 5)", 10s);

  // The rename is taken from the kernel's RENAME: the note says which resync found it.
  rename_mlx5_0_to_ib7(sim, daemon, "rdma netlink rename ib7 (index 0)");

  const json st = daemon.status();
  EXPECT_EQ(st["hotplug"]["source"], "rdma_netlink");
  // UNREGISTER, REGISTER, two NETDEV_ATTACH, RENAME.
  EXPECT_EQ(st["hotplug"]["netlink_events"], 5);
  EXPECT_EQ(st["hotplug"]["netlink_overruns"], 0);
  EXPECT_EQ(st["hotplug"]["udev_events"], 0);
  EXPECT_EQ(st["hotplug"]["rescanning"], false);
  EXPECT_EQ(st["hotplug"]["rescan_for"], json::array());
  EXPECT_EQ(sim.stats()["rdma_netlink"]["connections_open"], 1);
  // And as rdma-eventctl says it.
  const rdmatest::CommandResult text = rdmatest::run_command(
      {rdmatest::bin("rdma-eventctl"), "--socket", daemon.socket(), "status", "--color", "never"});
  ASSERT_EQ(text.exit_code(), 0) << text.err;
  EXPECT_NE(text.out.find("\nhot-plug: the kernel's RDMA netlink monitor, 5 messages, 0 overruns; "
                          "no rescan (udev does not run)\n"),
            std::string::npos)
      << text.out;
}

// Linux 6.12: the monitor, but no RENAME. The rescan runs throughout, and finds a rename.
TEST(HotplugWithoutUdev, OnLinux612TheRescanRunsForRenamesWhichItsMonitorDoesNotAnnounce) {
  hotplug_sandbox(false);
  SimFabric sim(topology("two-adapters"), rdmatest::SimOptions{.rdma_netlink = "rename-less"});
  DaemonProcess daemon(sim, DaemonOptions{.env = sim.rdma_netlink_env()});
  EXPECT_TRUE(daemon.logged(
      "hot-plug: udev is not running here (no /run/udev/control); following the kernel's RDMA "
      "netlink monitor, and rescanning for RDMA devices every 5 s: this kernel (6.12.0) "
      "announces no rename (Linux 6.13 and later do)"));
  const json st = daemon.status();
  EXPECT_EQ(st["hotplug"]["source"], "rdma_netlink");
  EXPECT_EQ(st["hotplug"]["rescanning"], true);
  EXPECT_EQ(st["hotplug"]["rescan_for"], json::array());
  rename_mlx5_0_to_ib7(sim, daemon, "periodic rescan");
}

// The same container, idle: with every device's removal announced, nothing wakes the daemon
// (link health off: its timer is the one other); the rescan alone wakes it every 5 s.
TEST(HotplugWithoutUdev, WithEveryRemovalAnnouncedTheIdleDaemonNeverWakes) {
  hotplug_sandbox(false);
  const std::string quiet = R"({"health":{"enabled":false},"link_health":{"enabled":false}})";
  SimFabric monitored(topology("two-adapters"), rdmatest::SimOptions{.rdma_netlink = "monitor"});
  DaemonProcess idle(monitored,
                     DaemonOptions{.config_json = quiet, .env = monitored.rdma_netlink_env()});
  SimFabric alone(topology("two-adapters"), rdmatest::SimOptions{.rdma_netlink = "none"});
  DaemonProcess rescanning(alone,
                           DaemonOptions{.config_json = quiet, .env = alone.rdma_netlink_env()});
  ASSERT_TRUE(idle.logged(kMonitorFollowed));
  // Both measured over the same span, longer than the rescan's period.
  const pid_t idle_pid = idle.process().pid();
  const pid_t rescanning_pid = rescanning.process().pid();
  const uint64_t idle_before = settled_wakeups(idle_pid, std::chrono::milliseconds(200));
  const uint64_t rescanning_before =
      settled_wakeups(rescanning_pid, std::chrono::milliseconds(200));
  std::this_thread::sleep_for(std::chrono::milliseconds(5500));  // a span to measure, not a wait
  EXPECT_EQ(rdmatest::main_thread_wakeups(idle_pid) - idle_before, 0u);
  EXPECT_GE(rdmatest::main_thread_wakeups(rescanning_pid) - rescanning_before, 1u);
}

// A driver that cannot disassociate its users (rxe in Debian 12's kernel): the kernel
// unregisters the device, and says so, only once the daemon has closed it. The rescan runs while
// such a device is open, finds it gone, and stops with the last of them; then the UNREGISTER
// comes, and publishes nothing more. Devices of other drivers than mlx5's and mlx4's are not
// trusted to announce their removal either.
TEST(HotplugWithoutUdev, WithTheMonitorTheRescanRunsWhileADeviceThatWaitsForItsUsersIsOpen) {
  hotplug_sandbox(false);
  SimFabric sim(topology("devx-variants"), rdmatest::SimOptions{.rdma_netlink = "monitor"});
  DaemonProcess daemon(sim, on_the_monitor_with_debug_log(sim));
  EXPECT_TRUE(daemon.logged(kMonitorFollowed));
  EXPECT_TRUE(daemon.logged(
      "hot-plug: rescanning every 5 s while rxe0 is open: the kernel may announce its removal "
      "only once its users have closed it (it has no parent device: a software device such as "
      "rxe or siw)"));
  EXPECT_TRUE(daemon.logged(
      "hot-plug: rescanning every 5 s while bnxt_re0 is open: the kernel may announce its "
      "removal only once its users have closed it (its parent's driver, bnxt_en, is not known "
      "to disassociate its users)"));
  json st = daemon.status();
  EXPECT_EQ(st["hotplug"]["source"], "rdma_netlink");
  EXPECT_EQ(st["hotplug"]["rescanning"], true);
  EXPECT_EQ(st["hotplug"]["rescan_for"], json::parse(R"(["rxe0","bnxt_re0","irdma0"])"));

  inject(sim, {"unplug", "rxe0", "--no-disassociate"});
  Record removed = daemon.next_record();
  EXPECT_EQ(removed.event, EventKind::kDeviceRemoved);
  EXPECT_EQ(removed.device, "rxe0");
  EXPECT_TRUE(daemon.logged("rxe0: removed (periodic rescan); closing it"));
  daemon.require_log("rdma netlink: unregister rxe0", 10s);

  // The other two go with disassociation: their DEVICE_FATAL tells, and the rescan stops.
  for (const char* device : {"bnxt_re0", "irdma0"}) {
    inject(sim, {"unplug", device});
    removed = daemon.next_record();
    EXPECT_EQ(removed.event, EventKind::kDeviceRemoved);
    EXPECT_EQ(removed.device, device);
  }
  daemon.require_log(
      "hot-plug: no rescan: the kernel announces the removal of every open RDMA device", 10s);
  st = daemon.status();
  EXPECT_EQ(st["hotplug"]["rescanning"], false);
  EXPECT_EQ(st["hotplug"]["rescan_for"], json::array());
  // Nothing else was published: the next record is the next change's.
  inject(sim, {"port", "down", "mlx5_0/1"});
  const Record next = daemon.next_record();
  EXPECT_EQ(next.event, EventKind::kPortErr);
  EXPECT_EQ(next.device, "mlx5_0");
}

// The kernel's side of the socket goes away (a stand-in ends): one warning, a resync for what
// may have been missed, and the rescan alone from then on, without spinning on the dead socket.
TEST(HotplugWithoutUdev, WhenTheMonitorFailsTheRescanGoesOnAlone) {
  hotplug_sandbox(false);
  SimFabric sim(topology("two-adapters"), rdmatest::SimOptions{.rdma_netlink = "monitor"});
  DaemonProcess daemon(sim, DaemonOptions{.env = sim.rdma_netlink_env()});
  ASSERT_EQ(daemon.status()["hotplug"]["source"], "rdma_netlink");
  EXPECT_EQ(sim.ctl_json({"rdma-netlink", "close"})["closed"], 1);
  daemon.require_log(
      "hot-plug: reading the RDMA netlink monitor failed: the stand-in went away; rescanning "
      "for RDMA devices every 5 s from now on",
      10s);
  ASSERT_TRUE(
      rdmatest::wait_until([&] { return daemon.status()["hotplug"]["source"] == "rescan"; }, 10s));
  const pid_t pid = daemon.process().pid();
  const uint64_t before = rdmatest::cpu_ticks(pid);
  std::this_thread::sleep_for(std::chrono::seconds(2));  // a span to measure, not a wait
  EXPECT_LE(rdmatest::cpu_ticks(pid) - before, 10u);     // at most 0.1 s of CPU in 2 s
  // The rescan still finds what changes.
  inject(sim, {"unplug", "mlx5_1", "--no-disassociate"});
  EXPECT_EQ(
      stable_part(next_json(daemon)),
      with_ports(device_record("device_removed", "warning", "mlx5_1"), {roce_port(), roce_port()}));
  EXPECT_TRUE(daemon.logged("mlx5_1: removed (periodic rescan); closing it"));
  int warnings = 0;
  for (const std::string& l : daemon.process().stderr_lines())
    warnings += l.find("reading the RDMA netlink monitor failed") != std::string::npos;
  EXPECT_EQ(warnings, 1);
}

// Debian 12's kernel (6.1): the system query has no monitor mode; the rescan alone.
TEST(HotplugWithoutUdev, AKernelWithoutTheMonitorIsSaidAndTheRescanGoesOn) {
  hotplug_sandbox(false);
  SimFabric sim(topology("two-adapters"), rdmatest::SimOptions{.rdma_netlink = "none"});
  DaemonProcess daemon(sim, DaemonOptions{.env = sim.rdma_netlink_env()});
  EXPECT_TRUE(daemon.logged(
      "hot-plug: this kernel has no RDMA netlink monitor (Linux 6.12 and later have one)"));
  EXPECT_TRUE(daemon.logged(
      "hot-plug: udev is not running here (no /run/udev/control); rescanning for RDMA devices "
      "every 5 s instead"));
  EXPECT_EQ(daemon.status()["hotplug"]["source"], "rescan");
  EXPECT_EQ(sim.stats()["rdma_netlink"]["connections_open"], 0);
}

}  // namespace
}  // namespace rdma_eventd::test
