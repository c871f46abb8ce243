// The 8-rail GPU host (sim/topologies/eight-rail.json) and its RoCE LAG device mlx5_bond_0
// (docs/simulator.md, "RoCE LAG"): what rdma-core's utilities see, the bond's sysfs and both
// PFs' devlink instances.
#include <unistd.h>

#include <algorithm>

#include "devlink_notes.h"

namespace simtest {
namespace {

std::string eight_rail() {
  return rdmatest::topology("eight-rail");
}

TEST(EightRail, IbvDevinfoSeesEightRailsAndTheBondAndNoPerPfDevice) {
  Sim sim(eight_rail());
  const rdmatest::CommandResult r = sim.run({"ibv_devinfo", "-l"});
  ASSERT_EQ(r.exit_code(), 0) << r.err;
  EXPECT_NE(r.out.find("9 HCAs found:"), std::string::npos) << r.out;
  for (const std::string name : {"mlx5_0", "mlx5_7", "mlx5_bond_0"})
    EXPECT_NE(r.out.find(name), std::string::npos) << r.out;
  const rdmatest::CommandResult ib = sim.run({"ibv_devinfo", "-d", "mlx5_3"});
  EXPECT_NE(ib.out.find("link_layer:\t\tInfiniBand"), std::string::npos) << ib.out;
  EXPECT_NE(ib.out.find("port_lid:\t\t14"), std::string::npos) << ib.out;
  EXPECT_NE(ib.out.find("sm_lid:\t\t\t1"), std::string::npos) << ib.out;
  EXPECT_NE(sim.ctl({"show", "mlx5_3"}).out.find("4x ndr"), std::string::npos);
}

TEST(EightRail, TheBondIsVirtualOverBothPfsNetdevsAndItsDeviceHangsOffPf0) {
  Sim sim(eight_rail());
  const std::string sys = sim.dir() + "/sys";
  const std::string pf0 = sys + "/devices/pci0000:00/0000:00:0a.0";
  const std::string pf1 = sys + "/devices/pci0000:00/0000:00:0b.0";
  EXPECT_EQ(real(sys + "/class/infiniband/mlx5_bond_0/device"), pf0);
  EXPECT_EQ(rdmatest::read_file(sys + "/class/infiniband/mlx5_bond_0/ports/1/gid_attrs/ndevs/0"),
            "bond0\n");
  EXPECT_EQ(real(sys + "/class/net/bond0"), sys + "/devices/virtual/net/bond0");
  EXPECT_NE(::access((sys + "/class/net/bond0/device").c_str(), F_OK), 0);  // virtual
  EXPECT_EQ(rdmatest::read_file(sys + "/class/net/bond0/ifindex"), "8\n");
  EXPECT_EQ(real(sys + "/class/net/bond0/lower_ens6f0np0"), pf0 + "/net/ens6f0np0");
  EXPECT_EQ(real(sys + "/class/net/bond0/lower_ens6f1np1"), pf1 + "/net/ens6f1np1");
  EXPECT_EQ(real(sys + "/class/net/ens6f1np1/device"), pf1);
  EXPECT_EQ(real(sys + "/class/net/ens6f1np1/upper_bond0"), sys + "/devices/virtual/net/bond0");
  // Each PF has its own Ethernet auxiliary device; the IB one is PF0's only.
  EXPECT_EQ(real(sys + "/bus/auxiliary/devices/mlx5_core.eth.8"), pf0 + "/mlx5_core.eth.8");
  EXPECT_EQ(real(sys + "/bus/auxiliary/devices/mlx5_core.eth.9"), pf1 + "/mlx5_core.eth.9");
  EXPECT_EQ(real(sys + "/bus/auxiliary/devices/mlx5_core.rdma.8"), pf0 + "/mlx5_core.rdma.8");
  EXPECT_NE(::access((sys + "/bus/auxiliary/devices/mlx5_core.rdma.9").c_str(), F_OK), 0);
}

// Both PFs have pci/ (fw, fw_fatal, vnic on 6.8) and mlx5e's instance, tx and rx on the uplink
// port that carries each PF's own netdev; an unplug of the bond takes all four instances.
TEST(EightRail, BothPfsHaveTheirInstancesAndPortsCarryingTheirOwnNetdevs) {
  Sim sim(eight_rail());
  NetlinkClient c(socket_of(sim));
  connected(sim, c);
  const json shown = sim.ctl_json({"devlink", "show", "mlx5_bond_0"});
  std::vector<std::string> instances;
  for (const json& i : shown["instances"]) {
    std::string line = i["handle"].get<std::string>();
    for (const json& p : i["ports"])
      line += " " + std::to_string(p["index"].get<uint32_t>()) + ":" +
              p["netdev"].get<std::string>() + ":" + std::to_string(p["number"].get<uint32_t>());
    instances.push_back(line);
  }
  EXPECT_EQ(instances, (std::vector<std::string>{
                           "pci/0000:00:0a.0", "auxiliary/mlx5_core.eth.8 589823:ens6f0np0:0",
                           "pci/0000:00:0b.0", "auxiliary/mlx5_core.eth.9 655359:ens6f1np1:1"}));
  EXPECT_EQ(shown["reporters"].size(), 10u);  // fw, fw_fatal, vnic and tx, rx, for each PF
  // PF1's reporters are named by their handle.
  EXPECT_EQ(sim.ctl_json({"devlink", "report", "auxiliary/mlx5_core.eth.9", "tx"})["handle"],
            "auxiliary/mlx5_core.eth.9");
  drain(c);
  inject(sim, {"unplug", "mlx5_bond_0"});
  const std::vector<std::string> gone = drain(c);
  EXPECT_EQ(std::count_if(gone.begin(), gone.end(),
                          [](const std::string& m) { return m.rfind("DEL ", 0) == 0; }),
            4)
      << ::testing::PrintToString(gone);
  EXPECT_NE(::access((sim.dir() + "/sys/class/net/bond0").c_str(), F_OK), 0);
}

TEST(EightRail, ALagIsTwoPfsOfAnMlx5DeviceWhoseOnePortIsTheBond) {
  const std::string one_pf = R"({"devices": [{"name": "mlx5_bond_0", "link_layer": "ethernet",
      "lag": [{"netdev": "p0"}], "ports": [{"netdev": "bond0"}]}]})";
  const std::string bond_is_pf = R"({"devices": [{"name": "mlx5_bond_0", "link_layer": "ethernet",
      "lag": [{"netdev": "bond0"}, {"netdev": "p1"}], "ports": [{"netdev": "bond0"}]}]})";
  const std::string ib = R"({"devices": [{"name": "mlx5_bond_0",
      "lag": [{"netdev": "p0"}, {"netdev": "p1"}], "ports": [{}]}]})";
  for (const std::string& text : {one_pf, bond_is_pf, ib}) {
    const auto r = start_with_topology(text);
    EXPECT_EQ(r.result.exit_code(), 78) << text;
    EXPECT_NE(r.result.err.find("devices[0].lag"), std::string::npos) << r.result.err;
  }
}

}  // namespace
}  // namespace simtest
