// Which devices the daemon watches: include/exclude by name and GUID, no RDMA in the kernel,
// an empty fabric, and the manual rescan.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "daemon_process.h"
#include "paths.h"
#include "test_support.h"

namespace rdma_eventd::test {
namespace {

using nlohmann::json;
using rdmatest::SimFabric;
using rdmatest::topology;

std::set<std::string> opened_devices(const SimFabric& sim, int pid) {
  std::set<std::string> out;
  for (const auto& c : contexts_of(sim.stats(), pid))
    out.insert(c["device"]);
  return out;
}

TEST(Devices, ExcludedDevicesAreNeverOpened) {
  SimFabric sim(topology("two-adapters"));
  DaemonProcess daemon(sim, R"({"devices": {"include": ["mlx5_*"], "exclude": ["mlx5_0"]}})");
  EXPECT_EQ(opened_devices(sim, daemon.process().pid()), (std::set<std::string>{"mlx5_1"}));

  // Events of the excluded device produce nothing; the included one still reports.
  inject(sim, {"port", "down", "mlx5_0/1"});
  inject(sim, {"port", "down", "mlx5_1/1"});
  const Record r = daemon.next_record();
  EXPECT_EQ(r.device, "mlx5_1");
  EXPECT_EQ(r.event, EventKind::kPortErr);
}

TEST(Devices, IncludeByNodeGuidSelectsThatDeviceOnly) {
  SimFabric sim(topology("two-adapters"));
  DaemonProcess daemon(sim, R"({"devices": {"include": ["0c42:a103:006d:0b3a"]}})");
  EXPECT_EQ(opened_devices(sim, daemon.process().pid()), (std::set<std::string>{"mlx5_1"}));
  DaemonProcess by_hex(sim, R"({"devices": {"include": ["0x0c42a10300f65e44"]}})");
  EXPECT_EQ(opened_devices(sim, by_hex.process().pid()), (std::set<std::string>{"mlx5_0"}));
}

// The records a device's appearance makes: device_added, then one port_state per port.
std::vector<std::string> appearance(DaemonProcess& daemon, size_t ports) {
  std::vector<std::string> out;
  for (size_t i = 0; i < 1 + ports; ++i) {
    const Record r = daemon.next_record();
    out.push_back(r.device + " " + std::string(event_name(r.event)) + " " + std::to_string(r.port));
  }
  return out;
}

TEST(Devices, NoRdmaInTheKernelIsSaidOnceAndTheDaemonWaits) {
  SimFabric sim(topology("two-adapters"), rdmatest::SimOptions{.no_rdma = true});
  DaemonProcess daemon(sim);  // returns once the daemon logged "ready:"
  EXPECT_TRUE(daemon.logged("no RDMA support in the kernel (ENOSYS); waiting for devices"));
  EXPECT_TRUE(daemon.logged("ready: watching 0 devices"));
  // Rescanning while RDMA is still missing says nothing more.
  daemon.process().signal(SIGUSR1);
  daemon.require_log("SIGUSR1: rescanning");
  // Then RDMA appears; the next rescan opens the devices (they appeared: records say so) and
  // events flow.
  inject(sim, {"no-rdma", "off"});
  daemon.process().signal(SIGUSR1);
  daemon.require_log("mlx5_1: watching");
  std::vector<std::string> seen = appearance(daemon, 1);
  const std::vector<std::string> more = appearance(daemon, 2);
  seen.insert(seen.end(), more.begin(), more.end());
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, (std::vector<std::string>{"mlx5_0 device_added 0", "mlx5_0 port_state 1",
                                            "mlx5_1 device_added 0", "mlx5_1 port_state 1",
                                            "mlx5_1 port_state 2"}));
  inject(sim, {"port", "down", "mlx5_0/1"});
  EXPECT_EQ(daemon.next_record().event, EventKind::kPortErr);
  EXPECT_TRUE(daemon.process().running());
  int enosys_lines = 0;
  for (const auto& l : daemon.process().stderr_lines()) {
    if (l.find("ENOSYS") != std::string::npos) ++enosys_lines;
  }
  EXPECT_EQ(enosys_lines, 1) << daemon.process().stderr_text();
}

// mlx5_0 is plugged in again and a rescan (SIGUSR1) finds it: the daemon watches it and
// publishes its appearance, the device and its one port.
void replug_and_rescan(SimFabric& sim, DaemonProcess& daemon) {
  inject(sim, {"replug", "mlx5_0"});
  daemon.process().signal(SIGUSR1);
  daemon.require_log("mlx5_0: watching");
  EXPECT_EQ(appearance(daemon, 1),
            (std::vector<std::string>{"mlx5_0 device_added 0", "mlx5_0 port_state 1"}));
}

TEST(Devices, AnEmptyFabricIsSaidOnceAndDevicesAreFoundOnRescan) {
  SimFabric sim(topology("two-adapters"));
  inject(sim, {"unplug", "mlx5_0"});
  inject(sim, {"unplug", "mlx5_1"});
  DaemonProcess daemon(sim);
  EXPECT_TRUE(daemon.logged("no RDMA devices found; waiting for devices"));
  replug_and_rescan(sim, daemon);
  inject(sim, {"lid", "mlx5_0/1", "12"});
  const Record r = daemon.next_record();
  EXPECT_EQ(r.event, EventKind::kLidChange);
  EXPECT_EQ(r.port_info->lid, 12u);
}

TEST(Devices, AnUnplugIsARemovalNotAFatalErrorAndTheReplugIsFoundOnRescan) {
  SimFabric sim(topology("two-adapters"));
  DaemonProcess daemon(sim);
  inject(sim, {"unplug", "mlx5_0"});
  // The DEVICE_FATAL that ends an unplugged device's event stream is its removal.
  const Record removed = daemon.next_record();
  EXPECT_EQ(removed.event, EventKind::kDeviceRemoved);
  EXPECT_EQ(removed.event_type, -1);
  EXPECT_EQ(removed.ports.size(), 1u);
  daemon.require_log("mlx5_0: closing");
  replug_and_rescan(sim, daemon);
  inject(sim, {"port", "down", "mlx5_0/1"});
  const Record r = daemon.next_record();
  EXPECT_EQ(r.event, EventKind::kPortErr);
  EXPECT_EQ(r.device, "mlx5_0");
}

TEST(Devices, AFatalErrorWhileTheDeviceListFailsIsTakenAtItsWord) {
  SimFabric sim(topology("two-adapters"));
  DaemonProcess daemon(sim);
  // The list fails from now on; open contexts keep working.
  inject(sim, {"no-rdma", "on"});
  inject(sim, {"fatal", "mlx5_0"});
  // Without a list, nothing says the device is being removed: it failed.
  const Record fatal = daemon.next_record();
  EXPECT_EQ(fatal.event, EventKind::kDeviceFatal);
  EXPECT_EQ(fatal.device, "mlx5_0");
  EXPECT_EQ(fatal.event_type, 8);
  EXPECT_EQ(fatal.ports.size(), 1u);
  daemon.require_log("mlx5_0: fatal error; closing it, reopening it once it works again");
  daemon.require_log("no RDMA support in the kernel (ENOSYS)");  // the retry's list failed
  // The other device is still watched, and the failed one waits to be reopened.
  inject(sim, {"port", "down", "mlx5_1/1"});
  const Record next = daemon.next_record();
  EXPECT_EQ(next.event, EventKind::kPortErr);
  EXPECT_EQ(next.device, "mlx5_1");
  const json st = daemon.status();
  EXPECT_EQ(st["counters"]["devices_waiting"], 1);
  ASSERT_EQ(st["devices"].size(), 1u);
  EXPECT_EQ(st["devices"][0]["device"], "mlx5_1");
}

}  // namespace
}  // namespace rdma_eventd::test
