// Which RDMA device and port a devlink health reporter concerns (docs/health.md, "devlink
// health"). Pure: the sysfs reading is devlink/sysfs_handles; here, the rule.
//
// A devlink instance is named by its bus device ("pci/0000:08:00.0", "auxiliary/mlx5_core.eth.0",
// "netdevsim/netdevsim1"). An RDMA device concerns the instances of its own parent device and
// that device's ancestors (mlx5: the auxiliary device mlx5_core.rdma.N and its PCI function), and
// each of its ports the instances of the parents of the port's netdev and their ancestors (an
// Ethernet function's auxiliary device and its PCI function; netdevsim's bus device for rxe on a
// netdevsim netdev). A reporter of the device's own chain is about the device (port 0): a
// firmware reporter judges every port; one reached only through a port's netdev is about that
// port. A port reporter (a devlink port index) of the device's own chain is about the one port
// whose netdev's chain has the instance too (multi-port RoCE: a PCI function per port), else,
// on a device with one port, that port, else the device.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace rdma_eventd::daemon {

struct DevlinkHandles {
  std::string device;     // the RDMA device's name
  std::string node_guid;  // as records print it
  uint32_t ports = 0;
  std::vector<std::string> device_handles;  // its parent device and that one's ancestors
  std::map<uint32_t, std::vector<std::string>> port_handles;  // by port: its netdev's chain
  friend bool operator==(const DevlinkHandles&, const DevlinkHandles&) = default;
};

struct DevlinkTarget {
  std::string device;
  std::string node_guid;
  uint32_t port = 0;  // 0: the device as a whole
  friend bool operator==(const DevlinkTarget&, const DevlinkTarget&) = default;
};

// Every RDMA device (and port) `handle` concerns, by device name; none: a devlink instance
// with no RDMA device.
std::vector<DevlinkTarget> devlink_targets(const std::vector<DevlinkHandles>& devices,
                                           std::string_view handle, int64_t port_index);

}  // namespace rdma_eventd::daemon
