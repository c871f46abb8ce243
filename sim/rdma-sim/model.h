// The simulated fabric as plain data: what a topology file describes and what the control
// commands change. No I/O here; the simulator publishes it to shared memory and sysfs.
#pragma once

#include <infiniband/verbs.h>

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/devx.h"
#include "counters.h"
#include "ethtool_phy.h"

namespace rdmasim {

struct Gid {
  std::array<uint8_t, 16> raw{};
  uint32_t type = IBV_GID_TYPE_IB;  // enum ibv_gid_type
  std::string netdev;               // empty: no netdev (IB GIDs)
  uint32_t ifindex = 0;
  bool valid = false;
};

struct Port {
  ibv_port_attr attr{};
  // The kernel's active_speed (ib_port_speed, include/rdma/ib_verbs.h: SDR 1 ... XDR 0x100).
  // attr.active_speed is its low 8 bits, as uverbs' copy_port_attr_to_resp copies it into the
  // u8 of the response: 0 for XDR. sysfs `rate` (rate_show) prints this one.
  uint32_t speed = 0;
  void set_speed(uint32_t code) {
    speed = code;
    attr.active_speed = static_cast<uint8_t>(code & 0xff);
  }
  std::string netdev;  // Ethernet ports: the netdev RoCE GIDs use by default
  uint32_t netdev_ifindex = 0;
  std::vector<uint16_t> pkeys;  // pkey_tbl_len entries, 0 = empty
  std::vector<Gid> gids;        // gid_tbl_len entries
  // What "port up" gives back to an IB port that "port down" left without LID and SM LID.
  uint16_t saved_lid = 0;
  uint16_t saved_sm_lid = 0;
  // mlx5: the cable or optical module of this port, as PORT_MODULE_EVENT numbers it.
  uint8_t module = 0;
  // The counters/ and hw_counters/ files of the port (the device's CounterSets).
  std::vector<Counter> counters;
  // Ethernet ports: what ethtool reports of the netdev's PHY (ETHTOOL_MSG_FEC_GET, STATS_GET).
  EthtoolPhy phy;

  bool is_ethernet() const { return attr.link_layer == IBV_LINK_LAYER_ETHERNET; }
};

// The device's driver, and for mlx5 what its firmware offers DEVX (docs/simulator.md, "DEVX").
// The default is an mlx5 device whose firmware has no UCTX (log_max_uctx 0): no DEVX context can
// be created, so no DEVX event reaches anyone, as before the simulator knew DEVX.
struct DevxModel {
  devx::Provider provider = devx::Provider::kMlx5;
  uint32_t log_max_uctx = 0;
  bool event_cap = false;
  bool port_module_event = true;
  bool temp_warn_event = true;
  bool general_notification_event = true;
  uint64_t user_unaffiliated_events[4] = {};

  bool is_mlx5() const { return provider == devx::Provider::kMlx5; }
  bool has_devx() const { return is_mlx5() && log_max_uctx > 0; }
};

// A devlink health reporter as a driver creates it (docs/simulator.md, "devlink health"): the
// operations it has decide which attributes the kernel reports and what a report does.
struct DevlinkReporterSpec {
  std::string name;
  bool recover = true;  // ops->recover: auto recovery, GRACEFUL_PERIOD, AUTO_RECOVER
  bool dump = true;     // ops->dump: a dump taken at a report, AUTO_DUMP
  uint64_t grace_period_ms = 0;
  int64_t port_index = -1;  // a port reporter's devlink port index; -1: the instance's own
};

// A member PF of a RoCE LAG device (mlx5_bond_N, the topology's "lag"): its netdev, a lower of
// the bond, and, given at registration, its PCI function and auxiliary index.
struct LagMember {
  std::string netdev;
  uint32_t ifindex = 0;
  std::string pci_function;
  int adev_index = -1;
};

struct DeviceModel {
  std::string name;
  uint64_t node_guid = 0;  // host order
  uint64_t sys_image_guid = 0;
  ibv_node_type node_type = IBV_NODE_CA;
  std::string fw_ver;
  std::string board_id;
  std::string hca_type;
  std::string node_desc;
  uint32_t num_comp_vectors = 0;
  ibv_device_attr_ex attr{};  // node GUIDs, fw_ver and phys_port_cnt filled by finalize()
  DevxModel devx;
  CounterSets counters;  // which counter groups its ports have
  std::vector<Port> ports;
  // The synthetic PCI function the device hangs off ("0000:00:02.0"), given by the fabric when
  // the device is first registered: its sysfs parent and its devlink instance pci/<function>.
  // None for a provider without a parent device (rxe, siw: parent_driver_of()).
  std::string pci_function;
  // Reporters the topology adds to the driver's own (devlink_reporters).
  std::vector<DevlinkReporterSpec> devlink_reporters;
  // mlx5: the index mlx5_core gave the function's auxiliary devices (mlx5_core.eth.<N>,
  // mlx5_core.rdma.<N>): mlx5_adev_idx_alloc(), the lowest free in one IDA for every mlx5
  // function, taken when the function is probed and freed when it is removed. -1: none yet.
  int adev_index = -1;
  // A RoCE LAG device: its PFs, PF0 first (PF0's function is pci_function). The port's netdev
  // is the bond. Empty: none.
  std::vector<LagMember> lag;
  // A scalable function (the topology's "sf"): the mlx5 device whose PCI function it is carved
  // from (pci_function is then that function), and the id of its auxiliary device
  // mlx5_core.sf.<sf_id>, the RDMA device's parent and its devlink instance. -1: not an SF.
  std::string sf_parent;
  int sf_id = -1;
  // The RDMA device's parent below its PCI function ("mlx5_core.sf.2"), or "" for the function.
  std::string parent_subdir() const {
    return sf_id < 0 ? "" : "mlx5_core.sf." + std::to_string(sf_id);
  }

  // Copies the device-level fields into attr.orig_attr the way the verbs API reports them.
  void finalize();
};

ibv_transport_type transport_for(ibv_node_type type);
// The RoCE GID types the kernel adds, in this order, for the default GID and each IP address of a
// RoCE port of this provider (each its own GID_CHANGE): roce_gid_type_mask_support() in the
// kernel's roce_gid_mgmt.c follows the port's core capabilities, and rxe's port is RoCE v2 (UDP
// encapsulation) only, where mlx5 and the other RoCE drivers modelled have v1 and v2.
std::vector<uint32_t> roce_gid_types(devx::Provider provider);
// What the shared state and the stand-in libmlx5 see of the device's DEVX.
ShmDevx devx_caps(const DeviceModel& d);
// The driver of the PCI function a provider's RDMA device hangs off (sysfs device/driver), as
// each kernel driver sets the ib_device's parent: mlx5_ib the function mlx5_core drives,
// bnxt_re bnxt_en's, irdma ice's, and so on. nullptr for rxe and siw: software devices with no
// parent at all in current kernels, under /sys/devices/virtual.
const char* parent_driver_of(devx::Provider provider);

// The kernel release the simulated host runs (the topology's "kernel"): what decides mlx5's
// devlink layout (docs/simulator.md, "mlx5's sysfs and devlink layout").
struct KernelVersion {
  int major = 6;
  int minor = 1;
  bool at_least(int ma, int mi) const { return major > ma || (major == ma && minor >= mi); }
  std::string text() const { return std::to_string(major) + "." + std::to_string(minor); }
};

// Text forms shared by the sysfs tree, `show` and the CLI.
std::string guid_to_string(uint64_t guid);                              // "0c42:a103:00f6:5e44"
std::string gid_to_sysfs(const std::array<uint8_t, 16>& raw);           // "fe80:0000:...:5e44"
std::string gid_to_text(const std::array<uint8_t, 16>& raw);            // inet_ntop form
bool parse_gid(const std::string& text, std::array<uint8_t, 16>* raw);  // IPv6 text or sysfs form
// An IPv4 or IPv6 address as the GID RoCE derives from it (IPv4: ::ffff:a.b.c.d).
bool ip_to_gid(const std::string& ip, std::array<uint8_t, 16>* raw);
bool parse_guid(const std::string& text, uint64_t* guid);  // "xxxx:xxxx:xxxx:xxxx" or 0x...

const char* gid_type_name(uint32_t type);  // "ib", "roce-v1", "roce-v2"
bool parse_gid_type(const std::string& name, uint32_t* type);

// The names topology files and commands give port states, physical states, widths and speeds, with
// their ibv_port_attr codes; rdma-sim prints the same names.
using CodeNames = std::map<std::string, uint32_t>;
const CodeNames& port_state_codes();  // down 1 ... active_defer 5
const CodeNames& phys_state_codes();  // sleep 1 ... phy_test 7
const CodeNames& width_codes();       // 1x 1, 4x 2, 8x 4, 12x 8, 2x 16
const CodeNames& speed_codes();       // sdr 1 ... ndr 128, xdr 256
// The name of a code in names, "unknown" for none.
const char* code_name(const CodeNames& names, uint32_t code);

const char* port_state_name(uint32_t state);  // "down", "active", ..., "nop" for 0
const char* phys_state_name(uint32_t phys);   // "polling", "linkup", ...
const char* width_name(uint8_t width);        // "4x"
const char* speed_name(uint32_t speed);       // "hdr"

}  // namespace rdmasim
