// Which RDMA device and port a devlink instance concerns (core/devlink_map).
#include "core/devlink_map.h"

#include <gtest/gtest.h>

namespace rdma_eventd::daemon {
namespace {

// mlx5: the RDMA device on mlx5_core.rdma.0 under PCI function 08:00.0; its port's netdev on
// mlx5_core.eth.0 under the same function. rxe0 on a netdevsim netdev. A two-port device.
std::vector<DevlinkHandles> fabric() {
  return {
      {"mlx5_0",
       "0c42:a103:00f6:5e44",
       1,
       {"auxiliary/mlx5_core.rdma.0", "pci/0000:08:00.0"},
       {{1, {"auxiliary/mlx5_core.eth.0", "pci/0000:08:00.0"}}}},
      {"rxe0", "0000:0000:0000:0000", 1, {}, {{1, {"netdevsim/netdevsim1"}}}},
      {"mlx5_2", "0c42:a103:00f6:0002", 2, {"pci/0000:09:00.0"}, {}},
      {"rxe1",
       "0000:0000:0000:0001",
       2,
       {},
       {{1, {"netdevsim/netdevsim2"}}, {2, {"netdevsim/netdevsim2"}}}},
  };
}

TEST(DevlinkMap, ThePciFunctionOfAnRdmaDeviceIsTheDevice) {
  EXPECT_EQ(devlink_targets(fabric(), "pci/0000:08:00.0", -1),
            (std::vector<DevlinkTarget>{{"mlx5_0", "0c42:a103:00f6:5e44", 0}}));
  EXPECT_EQ(devlink_targets(fabric(), "auxiliary/mlx5_core.rdma.0", -1).size(), 1u);
}

TEST(DevlinkMap, AnInstanceReachedOnlyThroughAPortsNetdevIsThatPort) {
  EXPECT_EQ(devlink_targets(fabric(), "auxiliary/mlx5_core.eth.0", 0),
            (std::vector<DevlinkTarget>{{"mlx5_0", "0c42:a103:00f6:5e44", 1}}));
  EXPECT_EQ(devlink_targets(fabric(), "netdevsim/netdevsim1", -1),
            (std::vector<DevlinkTarget>{{"rxe0", "0000:0000:0000:0000", 1}}));
  // Under every port of a device: the device.
  EXPECT_EQ(devlink_targets(fabric(), "netdevsim/netdevsim2", -1),
            (std::vector<DevlinkTarget>{{"rxe1", "0000:0000:0000:0001", 0}}));
}

TEST(DevlinkMap, APortReporterOfAOnePortDeviceIsItsPortAndOfATwoPortDeviceTheDevice) {
  EXPECT_EQ(devlink_targets(fabric(), "pci/0000:08:00.0", 0)[0].port, 1u);
  EXPECT_EQ(devlink_targets(fabric(), "pci/0000:09:00.0", 1)[0].port, 0u);
}

// mlx5 multi-port RoCE: one RDMA device over two PCI functions, each port's netdev on its own;
// the first function is also the device's parent. Its port reporters (tx, rx) are about the
// port whose netdev is under it; the second function's, reached only through port 2, too; a
// reporter of the first function's own (fw) is about the device.
TEST(DevlinkMap, APortReporterOfAMultiPortDeviceIsThePortOfItsFunction) {
  const std::vector<DevlinkHandles> multiport = {
      {"mlx5_bond_0",
       "0c42:a103:00f6:0003",
       2,
       {"auxiliary/mlx5_core.rdma.0", "pci/0000:0b:00.0"},
       {{1, {"auxiliary/mlx5_core.eth.0", "pci/0000:0b:00.0"}},
        {2, {"auxiliary/mlx5_core.eth.1", "pci/0000:0b:00.1"}}}}};
  EXPECT_EQ(devlink_targets(multiport, "pci/0000:0b:00.0", 65535),
            (std::vector<DevlinkTarget>{{"mlx5_bond_0", "0c42:a103:00f6:0003", 1}}));
  EXPECT_EQ(devlink_targets(multiport, "pci/0000:0b:00.1", 131071),
            (std::vector<DevlinkTarget>{{"mlx5_bond_0", "0c42:a103:00f6:0003", 2}}));
  EXPECT_EQ(devlink_targets(multiport, "pci/0000:0b:00.0", -1),
            (std::vector<DevlinkTarget>{{"mlx5_bond_0", "0c42:a103:00f6:0003", 0}}));
}

TEST(DevlinkMap, AnInstanceOfNoRdmaDeviceHasNoTarget) {
  EXPECT_TRUE(devlink_targets(fabric(), "pci/0000:0a:00.0", -1).empty());
  EXPECT_TRUE(devlink_targets({}, "pci/0000:08:00.0", -1).empty());
}

}  // namespace
}  // namespace rdma_eventd::daemon
