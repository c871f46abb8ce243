// The sysfs-like tree under DIR/sys, in the kernel's text formats, so that ibv_read_sysfs_file,
// rdma-core's sysfs-based P_Key query and programs reading sysfs themselves (GID netdevs) see
// what they would on a real host:
//   class/infiniband/<name>/{node_guid,sys_image_guid,node_type,fw_ver,board_id,hca_type,node_desc}
//   class/infiniband/<name>/ports/<p>/{state,phys_state,lid,sm_lid,sm_sl,lid_mask_count,rate,
//                                       link_layer,cap_mask,gids/<i>,pkeys/<i>,
//                                       gid_attrs/types/<i>,gid_attrs/ndevs/<i>}
//   class/infiniband/<name>/ports/<p>/counters/<counter>     (devices with a PMA table)
//   class/infiniband/<name>/ports/<p>/hw_counters/{<counter>,lifespan}
//   class/infiniband_verbs/abi_version, class/infiniband_verbs/uverbs<N>/{ibdev,abi_version,dev}
//   class/infiniband/<name>/device -> devices/pci0000:00/<function> (its PCI function, whose
//   `subsystem` is bus/pci and `driver` bus/pci/drivers/<driver>, with bus/pci/devices/<function>
//   and bus/pci/drivers/<driver>/<function> back to it): what a devlink instance pci/<function>
//   is found by, and the driver behind the device. rxe and siw devices have no `device`.
// Files are replaced atomically (write + rename), so a reader sees the old or the new value.
// A counter given a fault (rdma-sim counter fail) is absent, empty, garbage, a directory, whose
// read() fails with EISDIR, or a FIFO nobody writes, whose open() blocks (hang) until the fault
// is cleared, the device removed or the tree removed: then its readers read the counter's value
// (docs/simulator.md, "Port counters"). Nothing here opens a counter's file for reading.
//
// Where reading the kernel attribute fails (gid_attrs of an empty GID slot: ENODATA; the netdev of
// an IB GID: ENODEV), the file is absent: the read fails too, at open(), with ENOENT.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "model.h"

namespace rdmasim {

class FifoRelease;

class SysfsTree {
 public:
  explicit SysfsTree(std::string root) : root_(std::move(root)) {}

  // Removes whatever a previous simulator left and creates the empty class directories.
  void reset();
  // Removes the whole tree (simulator exit). Readers blocked on hung counters read their values.
  void remove_all();

  // The synthetic PCI function a device hangs off ("0000:00:02.0"), bound to `driver`
  // ("mlx5_core"); it stays for the tree's life, as the fabric gives it to that device again
  // when it is plugged back.
  void add_pci_function(const std::string& function, const std::string& driver);
  // Kernel order on registration: the ib_device, then its uverbs character device.
  void add_device(const DeviceModel& d, uint32_t uverbs);
  void write_port(const DeviceModel& d, int port);  // every per-port attribute but the tables
  void write_gid(const DeviceModel& d, int port, int index);
  void write_pkey(const DeviceModel& d, int port, int index);
  void write_counter(const DeviceModel& d, int port, const Counter& counter);
  void remove_uverbs(uint32_t uverbs);
  void remove_device(const std::string& name);
  void rename_device(const std::string& old_name, const std::string& new_name, uint32_t uverbs);

  std::string device_dir(const std::string& name) const;

  // sysfs_functions.cc: a function's netdevs (devices/pci0000:00/<fn>/net/<netdev>, with
  // `ifindex`, `device` and `subsystem`, and class/net/<netdev>) and auxiliary devices
  // (devices/pci0000:00/<fn>/<name>, with bus/auxiliary/devices/<name> and the driver's link).
  std::string function_dir(const std::string& function) const;
  void add_netdev(const std::string& function, const std::string& netdev, uint32_t ifindex);
  void remove_netdev(const std::string& function, const std::string& netdev);
  void add_aux_device(const std::string& function, const std::string& name,
                      const std::string& driver);
  void remove_aux_device(const std::string& function, const std::string& name,
                         const std::string& driver);
  // A bond over netdevs of PCI functions: devices/virtual/net/<bond> (no `device`), with
  // `ifindex`, `lower_<netdev>` for each (function, netdev) and `upper_<bond>` back.
  void add_bond(const std::string& bond, uint32_t ifindex,
                const std::vector<std::pair<std::string, std::string>>& lowers);
  void remove_bond(const std::string& bond);

 private:
  // Takes the hung counters whose paths start with `prefix` out of hung_, into `release`.
  void take_hung(const std::string& prefix, FifoRelease& release);

  std::string root_;
  // The hung counters' FIFOs in the tree, by path, with the text their readers are to read (the
  // counter's value, kept up to date while it counts).
  std::map<std::string, std::string> hung_;
};

}  // namespace rdmasim
