// devlink health on the host the drivers build (sim/topologies/eight-rail.json: eight
// ConnectX-7 in InfiniBand mode and a RoCE LAG over a dual-port ConnectX-7, Linux 6.8's layout):
// the Ethernet port reporters on auxiliary/mlx5_core.eth.N reach the bond's port through their
// devlink port's netdev, both PFs' reporters reach the bond device, and mlx5's fw_fatal
// lifecycles (a recovery that re-registers the RDMA device before it is notified, a reload that
// recreates the reporters without a word, a second fatal within the grace period that unloads
// the driver) end in the verdict a real host needs. Hot-plug comes through the kernel's RDMA
// netlink monitor (the stand-in's), as on a 6.8 host without udev in the daemon's container.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <utility>

#include "daemon_process.h"
#include "devlink_fixture.h"
#include "paths.h"
#include "temp_dir.h"

namespace rdma_eventd::test {
namespace {

using rdmatest::topology;
using Verdict = std::pair<std::string, std::string>;

class DevlinkMlx5 : public ::testing::Test {
 protected:
  DaemonProcess& start() {
    DaemonOptions o = devlink_options(sim_, state_.path());
    for (const auto& [k, v] : sim_.rdma_netlink_env())
      o.env[k] = v;
    DaemonProcess& d = d_.emplace(sim_, o);
    next_port_verdict(d, "mlx5_bond_0/1", "healthy");
    wait_following(d);
    return d;
  }
  // mlx5_3's fw_fatal reports; its recovery works ("ok") or fails.
  void fw_fatal(const std::string& recovery = "ok") {
    inject(sim_, {"devlink", "report", "mlx5_3", "fw_fatal", "--recovery", recovery});
  }
  // mlx5_3's fw_fatal as the daemon's status shows it (null: not known).
  static json fw_fatal_status(DaemonProcess& d) {
    const json status = d.status();
    for (const json& r : status["devlink"]["reporters"])
      if (r["reporter"] == "fw_fatal" && r["ports"] == json::array({"mlx5_3"})) return r;
    return nullptr;
  }
  // The RDMA device's events (netlink) and its reporter's (devlink) come on two sockets, in
  // no order between them: what the port ends as is the verdict, whichever came first.
  static void wait_healthy_again(DaemonProcess& d) {
    ASSERT_TRUE(rdmatest::wait_until(
        [&] {
          const json r = fw_fatal_status(d);
          return port_health_of(d, "mlx5_3", 1).first == "healthy" && !r.is_null() &&
                 r["state"] == "healthy";
        },
        std::chrono::seconds(15)))
        << port_health_of(d, "mlx5_3", 1).second << " " << d.status()["devlink"].dump();
  }

  SimFabric sim_{topology("eight-rail"), rdmatest::SimOptions{.rdma_netlink = "monitor"}};
  rdmatest::TempDir state_{"rdma-devlink-mlx5"};
  std::optional<DaemonProcess> d_;
};

TEST_F(DevlinkMlx5, TheBondsPortReportersAndBothPfsReachTheBondDevice) {
  DaemonProcess& d = start();
  // PF1's Ethernet auxiliary instance, its uplink port carrying ens6f1np1, a lower of bond0.
  inject(sim_, {"devlink", "report", "auxiliary/mlx5_core.eth.9", "tx", "--recovery", "fail"});
  const Record tx = next_devlink(d, "tx", "error");
  EXPECT_EQ(tx.device, "mlx5_bond_0");
  EXPECT_EQ(tx.port, 1u);
  EXPECT_EQ(tx.node_guid, d.status()["devices"].back()["node_guid"]);
  EXPECT_EQ(tx.devlink->handle, "auxiliary/mlx5_core.eth.9");
  EXPECT_EQ(tx.devlink->port_index, 655359);
  // PF1's own firmware reporter: the bond's port too (its only one).
  inject(sim_, {"devlink", "report", "pci/0000:00:0b.0", "fw"});
  const Record fw = next_devlink(d, "fw", "error");
  EXPECT_EQ(fw.device, "mlx5_bond_0");
  EXPECT_EQ(fw.port, 1u);
  EXPECT_EQ(next_port_verdict(d, "mlx5_bond_0/1", "degraded").reason, "firmware_errors");
  // The status names the ports the daemon follows, with their netdevs as the kernel gave them.
  const json ports = d.status()["devlink"]["devlink_ports"];
  EXPECT_NE(std::find(ports.begin(), ports.end(),
                      json{{"handle", "auxiliary/mlx5_core.eth.9"},
                           {"index", 655359},
                           {"netdev", "ens6f1np1"}}),
            ports.end())
      << ports.dump();
}

// mlx5's recovery unregisters the RDMA device and registers it again inside the recover
// callback, before the HEALTHY notification.
TEST_F(DevlinkMlx5, AFatalErrorThatMlx5RecoversEndsHealthy) {
  DaemonProcess& d = start();
  fw_fatal();
  next_devlink(d, "fw_fatal", "error");
  EXPECT_EQ(next_port_verdict(d, "mlx5_3/1", "fatal").reason, "device_fatal");
  wait_healthy_again(d);
  EXPECT_EQ(fw_fatal_status(d)["recover_count"], 1);
}

// A reload (modprobe -r / modprobe, a rebind) destroys the reporters with their instance and
// creates them again, healthy, with no health notification.
TEST_F(DevlinkMlx5, AReloadThatRecreatesTheReportersSilentlyEndsHealthy) {
  DaemonProcess& d = start();
  fw_fatal("fail");
  EXPECT_EQ(next_port_verdict(d, "mlx5_3/1", "fatal").reason, "device_fatal");
  inject(sim_, {"reload", "mlx5_3"});
  // Released by DEVLINK_CMD_DEL (removed), or by the dump of the device's return finding the
  // recreated reporter healthy (recovered, its counts from 0), whichever the daemon read first.
  const Record released = next_record_where(
      d,
      [](const Record& r) {
        return r.event == EventKind::kDevlinkHealth && r.devlink &&
               r.devlink->reporter == "fw_fatal" &&
               (r.devlink->change == "removed" || r.devlink->change == "recovered");
      },
      "fw_fatal released");
  EXPECT_EQ(released.device, "mlx5_3");
  EXPECT_EQ(released.devlink->previous_state, "error");
  wait_healthy_again(d);
  EXPECT_EQ(fw_fatal_status(d)["error_count"], 0);
}

// A second fatal within the grace period of the first one's recovery: the kernel refuses the
// recovery and mlx5 unloads the driver. The port says so, not "removed".
TEST_F(DevlinkMlx5, ASecondFatalWithinTheGracePeriodIsARefusedRecoveryNotAHotUnplug) {
  DaemonProcess& d = start();
  fw_fatal();
  next_devlink(d, "fw_fatal", "recovered");
  next_port_verdict(d, "mlx5_3/1", "healthy");
  fw_fatal();
  const Record refused = next_devlink(d, "fw_fatal", "recovery_refused");
  EXPECT_EQ(refused.devlink->error_count, 2u);
  EXPECT_EQ(next_port_verdict(d, "mlx5_3/1", "fatal").reason, "recovery_refused");
  // The driver unloaded: the device is gone, the verdict stays.
  ASSERT_TRUE(rdmatest::wait_until([&] { return d.status()["devices"].size() == 8; },
                                   std::chrono::seconds(15)));
  EXPECT_EQ(port_health_of(d, "mlx5_3", 1), (Verdict{"fatal", "recovery_refused"}));
}

}  // namespace
}  // namespace rdma_eventd::test
