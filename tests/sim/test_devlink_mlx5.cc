// mlx5's fw_fatal recovery and reloads (docs/simulator.md, "mlx5's fw_fatal recovery and
// reloads"): what devlink.sock carries, in order, and what happens to the RDMA device.
#include "devlink_notes.h"

namespace simtest {
namespace {

// The device's entry in `show --json`; null when it is not present.
json device_of(Sim& sim, const std::string& name) {
  const json shown = sim.show();
  for (const json& d : shown["devices"])
    if (d["name"] == name) return d;
  return nullptr;
}

json reporter_of(Sim& sim, const std::string& device, const std::string& name) {
  const json shown = sim.ctl_json({"devlink", "show", device});
  for (const json& r : shown["reporters"])
    if (r["reporter"] == name) return r;
  return nullptr;
}

// mlx5e's instance and port going (mlx5e_remove) and coming back (mlx5e_probe), on 6.8.
const std::vector<std::string> kAuxGone = {"PORT_NEW auxiliary/mlx5_core.eth.1/131071 eth",
                                           "PORT_NEW auxiliary/mlx5_core.eth.1/131071 notset",
                                           "PORT_DEL auxiliary/mlx5_core.eth.1/131071 notset",
                                           "DEL auxiliary/mlx5_core.eth.1"};
const std::vector<std::string> kAuxBack = {"NEW auxiliary/mlx5_core.eth.1",
                                           "PORT_NEW auxiliary/mlx5_core.eth.1/131071 notset",
                                           "PORT_NEW auxiliary/mlx5_core.eth.1/131071 eth",
                                           "PORT_NEW auxiliary/mlx5_core.eth.1/131071 eth eth2"};

std::vector<std::string> joined(std::initializer_list<std::vector<std::string>> parts) {
  std::vector<std::string> out;
  for (const auto& p : parts)
    out.insert(out.end(), p.begin(), p.end());
  return out;
}

// 6.1's pci/ instance, its uplink port on it, unbound and probed again.
const std::vector<std::string> kPciReprobe61 = {"PORT_DEL pci/0000:00:03.0/131071 eth eth2",
                                                "DEL pci/0000:00:03.0", "NEW pci/0000:00:03.0",
                                                "PORT_NEW pci/0000:00:03.0/131071 eth eth2"};

const std::string kError = "RECOVER pci/0000:00:03.0 fw_fatal error";
const std::string kHealthy = "RECOVER pci/0000:00:03.0 fw_fatal healthy";

// Runs `test` on each release's layout: the simulator of two_functions(kernel), and a client
// joined to its devlink "config" group.
template <typename Test>
void on_each_kernel(Test test) {
  for (const std::string kernel : {"6.1", "6.8"}) {
    SCOPED_TRACE(kernel);
    LayoutSim sim(two_functions(kernel));
    NetlinkClient c(socket_of(*sim));
    connected(*sim, c);
    test(kernel, sim, c);
  }
}

// The recovery unloads and loads the function inside the report: DEVICE_FATAL (port 1) first,
// the error, the RDMA device unregistered (disassociated) and registered again, then HEALTHY.
// On 6.8 (from 72ed5d5624af) mlx5e's auxiliary device is reloaded too; on 6.1 it is suspended.
TEST(DevlinkMlx5, FwFatalRecoveryReloadsTheRdmaDeviceBeforeTheHealthyNotification) {
  on_each_kernel([](const std::string& kernel, LayoutSim& sim, NetlinkClient& c) {
    const json before = device_of(*sim, "mlx5_1");
    const json reply = sim->ctl_json({"devlink", "report", "mlx5_1", "fw_fatal"});
    EXPECT_EQ(reply["recovered"], true);
    ASSERT_EQ(reply["events"].size(), 1u) << reply.dump();
    EXPECT_EQ(reply["events"][0]["type_name"], "device_fatal");
    EXPECT_EQ(reply["events"][0]["element"], 1);
    ASSERT_EQ(reply["unload_events"].size(), 1u) << reply.dump();  // the disassociation
    EXPECT_EQ(reply["unload_events"][0]["element"], 0);
    const std::vector<std::string> want = kernel == "6.1"
                                              ? std::vector<std::string>{kError, kHealthy}
                                              : joined({{kError}, kAuxGone, kAuxBack, {kHealthy}});
    EXPECT_EQ(drain(c), want);
    const json after = device_of(*sim, "mlx5_1");
    ASSERT_FALSE(after.is_null());
    EXPECT_EQ(after["state"], "live");
    EXPECT_NE(after["index"], before["index"]);  // registered again
    EXPECT_EQ(after["node_guid"], before["node_guid"]);
    EXPECT_EQ(reporter_of(*sim, "mlx5_1", "fw_fatal")["recover_count"], 1);
    // The function's auxiliary index stayed: mlx5_core.rdma.1 is back.
    EXPECT_EQ(real(sim->dir() + "/sys/bus/auxiliary/devices/mlx5_core.rdma.1"),
              sim->dir() + "/sys/devices/pci0000:00/0000:00:03.0/mlx5_core.rdma.1");
    EXPECT_EQ(real(sim->dir() + "/sys/class/net/eth2/device"),
              sim->dir() + "/sys/devices/pci0000:00/0000:00:03.0");
  });
}

// A second fatal within the grace period: the error, no recovery, and the driver unloads
// (mlx5_fw_fatal_reporter_err_work): the RDMA device goes, pci/ stays with fw_fatal in error.
// A reload then probes the function anew: fresh reporters, no health notification.
TEST(DevlinkMlx5, ASecondFatalInTheGracePeriodUnloadsTheDriverAndAReloadBringsItBack) {
  on_each_kernel([](const std::string& kernel, LayoutSim& sim, NetlinkClient& c) {
    sim->ctl_json({"devlink", "set", "mlx5_1", "fw_fatal", "--grace-period", "600000"});
    EXPECT_EQ(reporter_of(*sim, "mlx5_1", "fw_fatal")["grace_period_ms"], 600000);
    sim->ctl_json({"devlink", "report", "mlx5_1", "fw_fatal"});
    drain(c);
    const json second = sim->ctl_json({"devlink", "report", "mlx5_1", "fw_fatal"});
    EXPECT_EQ(second["result"], "ECANCELED");
    EXPECT_NE(second["message"].get<std::string>().find("mlx5_1 unloaded"), std::string::npos);
    const std::vector<std::string> unloaded =
        kernel == "6.1" ? std::vector<std::string>{kError} : joined({{kError}, kAuxGone});
    EXPECT_EQ(drain(c), unloaded);
    EXPECT_TRUE(device_of(*sim, "mlx5_1").is_null());
    const json fw_fatal = reporter_of(*sim, "mlx5_1", "fw_fatal");
    EXPECT_EQ(fw_fatal["state"], "error");
    EXPECT_EQ(fw_fatal["error_count"], 2);

    sim->ctl_json({"reload", "mlx5_1"});
    const std::vector<std::string> probed =
        kernel == "6.1"
            // 6.1's mlx5e was suspended, its port on pci/ kept: it goes at the unbind.
            ? kPciReprobe61
            : joined({{"DEL pci/0000:00:03.0", "NEW pci/0000:00:03.0"}, kAuxBack});
    EXPECT_EQ(drain(c), probed);
    EXPECT_EQ(device_of(*sim, "mlx5_1")["state"], "live");
    EXPECT_EQ(reporter_of(*sim, "mlx5_1", "fw_fatal")["state"], "healthy");
    EXPECT_EQ(reporter_of(*sim, "mlx5_1", "fw_fatal")["error_count"], 0);
  });
}

// `reload DEV`: the driver unbound and bound; instances and ports go and come back in the
// release's order, reporters fresh, no health notification, same node GUID.
TEST(DevlinkMlx5, AReloadRecreatesTheInstancesSilentlyForHealth) {
  for (const std::string kernel : {"6.1", "6.8"}) {
    SCOPED_TRACE(kernel);
    LayoutSim sim(two_functions(kernel));
    sim->ctl_json({"devlink", "report", "mlx5_1", "fw", "--recovery", "fail"});
    EXPECT_EQ(reporter_of(*sim, "mlx5_1", "fw")["state"], "error");
    NetlinkClient c(socket_of(*sim));
    connected(*sim, c);
    const json before = device_of(*sim, "mlx5_1");
    sim->ctl_json({"reload", "mlx5_1"});
    const std::vector<std::string> want =
        kernel == "6.1"
            ? kPciReprobe61
            : joined({kAuxGone, {"DEL pci/0000:00:03.0", "NEW pci/0000:00:03.0"}, kAuxBack});
    EXPECT_EQ(drain(c), want);
    const json after = device_of(*sim, "mlx5_1");
    EXPECT_EQ(after["node_guid"], before["node_guid"]);
    EXPECT_NE(after["index"], before["index"]);
    EXPECT_EQ(reporter_of(*sim, "mlx5_1", "fw")["state"], "healthy");
    EXPECT_EQ(sim->ctl({"reload", "mlx5_9"}).exit_code(), 1);
  }
}

}  // namespace
}  // namespace simtest
