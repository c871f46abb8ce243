// Which RDMA device and port a devlink health reporter concerns (docs/health.md, "devlink
// health"). Pure: the sysfs reading is devlink/sysfs_handles; here, the rule.
//
// A devlink instance is named by its bus device ("pci/0000:08:00.0", "auxiliary/mlx5_core.eth.0",
// "netdevsim/netdevsim1"). The layouts this follows are the drivers' (docs/health.md says which
// kernel versions):
//  - mlx5: the RDMA device's parent is its PCI function (mlx5_ib: ib_dev.dev.parent =
//    mdev->device), and so is its Ethernet port's netdev (mlx5e: SET_NETDEV_DEV). The function's
//    instance pci/BDF has the device reporters (fw, fw_fatal); from Linux 6.2 the Ethernet port
//    reporters (tx, rx) are on the instance of the function's auxiliary child
//    auxiliary/mlx5_core.eth.N, on a devlink port that carries the port's netdev; before, on
//    the function's own instance, on the same kind of port.
//  - a scalable function's RDMA device hangs off its own auxiliary device
//    (auxiliary/mlx5_core.sf.N, a child of the PF) and has that instance: the PF's reporters are
//    not about it, nor its reporters about the PF.
//  - a RoCE LAG device (mlx5_bond_0): PF0 is its parent; its port's netdev is a bond whose lower
//    netdevs are each PF's: both PFs' reporters are about it.
//  - rxe on a netdevsim netdev: no parent; the netdev's bus device has the instance.
// The rule, for each device:
//  1. a port reporter whose devlink port carries a netdev is about the RDMA port(s) using that
//     netdev (itself or as a bond's lower netdev), and no other: one port, that port; several,
//     the device;
//  2. otherwise, an instance of the device's own parent, or of a child of it that is no other
//     RDMA device's parent, is about the device (port 0), a port reporter of it about the one
//     port whose netdev's function has the instance, else on a one-port device that port;
//  3. otherwise, an instance of a port's netdev's function (or a child of it) is about that
//     port; of every port's, the device.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace rdma_eventd::daemon {

// What a port's netdev reaches: its name(s) and the bus devices behind them.
struct PortDevlinkLinks {
  // The port's GID netdev and, for a bond, its lower netdevs.
  std::vector<std::string> netdevs;
  // The bus devices of those netdevs, as handles, and their bus children (auxiliary devices).
  std::vector<std::string> handles;
  friend bool operator==(const PortDevlinkLinks&, const PortDevlinkLinks&) = default;
};

struct DevlinkHandles {
  std::string device;     // the RDMA device's name
  std::string node_guid;  // as records print it
  uint32_t ports = 0;
  // The device's parent bus device, as a handle; "" for none (rxe, siw).
  std::string own;
  // Bus devices below `own` that are no RDMA device's or netdev's parent (mlx5_core.eth.N,
  // mlx5_core.rdma.N): their instances are the device's too.
  std::vector<std::string> own_children;
  std::map<uint32_t, PortDevlinkLinks> port_links;  // by port; none for an InfiniBand port
  friend bool operator==(const DevlinkHandles&, const DevlinkHandles&) = default;
};

struct DevlinkTarget {
  std::string device;
  std::string node_guid;
  uint32_t port = 0;  // 0: the device as a whole
  friend bool operator==(const DevlinkTarget&, const DevlinkTarget&) = default;
};

// A reporter in error as a complete read of every reporter found it, and a port or device it
// concerns: what port health may keep holding (PortHealthModel::confirm_devlink).
struct DevlinkInError {
  std::string device;
  uint32_t port = 0;  // 0: every port of the device
  std::string reporter;
  bool auto_recover = false;
  friend bool operator==(const DevlinkInError&, const DevlinkInError&) = default;
};

// Every RDMA device (and port) a reporter of instance `handle` concerns, by device name; none:
// a devlink instance with no RDMA device. `port_index`: a port reporter's devlink port (-1 for
// an instance's own reporter); `port_netdev`: the netdev that devlink port carries ("" when
// unknown or none).
std::vector<DevlinkTarget> devlink_targets(const std::vector<DevlinkHandles>& devices,
                                           std::string_view handle, int64_t port_index,
                                           std::string_view port_netdev = {});

// What an open device is mapped by: `fresh`, read from its sysfs now, unless that read found
// nothing of it while `before` (read when it was there, kept when the handles were last
// forgotten; nullptr: none) did under the same name and node GUID. The kernel removes a
// device's sysfs when it unregisters it, which the daemon reads only afterwards: mlx5's
// recovery from a fw_fatal report unregisters the RDMA device while its reporter speaks.
DevlinkHandles handles_or_before(DevlinkHandles fresh, const DevlinkHandles* before);

}  // namespace rdma_eventd::daemon
