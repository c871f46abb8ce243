// The simulated fabric: its devices and every change to them. Each change is applied in the same
// order: validate (CommandError, nothing changed), update the model, publish it (shared memory,
// then sysfs), then queue the resulting events to the open contexts. A reader that sees an event
// therefore always finds the state that caused it.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "contexts.h"
#include "devx_channels.h"
#include "devx_eqe.h"
#include "hotplug.h"
#include "model.h"
#include "shm_region.h"
#include "sysfs_tree.h"
#include "topology.h"

namespace rdmasim {

// A control command that cannot be applied; what() is the one-line explanation for the user.
class CommandError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class DeviceState { kLive, kFatal, kRemoving };

struct DeviceEntry {
  DeviceModel model;     // current state
  DeviceModel original;  // as defined by the topology: what replug brings back
  int32_t index = -1;
  uint32_t uverbs = 0;
  int slot = -1;
  DeviceState state = DeviceState::kLive;
};

// One EQE a command raised on an mlx5 device, and what it did on the device's DEVX channels.
struct DevxDelivery {
  std::string device;
  uint8_t type;
  uint8_t subtype;
  DevxCounts counts;
};

// One event queued by a command: what the CLI reports. A port change on an mlx5 device with
// DEVX is also an EQE, which DEVX channels get first (the kernel hands it to DEVX in the
// interrupt and makes the verbs event in a work queue).
struct Delivery {
  std::string device;
  uint32_t type;
  uint64_t element;
  size_t contexts;
  std::optional<DevxDelivery> devx;
};

class Fabric {
 public:
  Fabric(Topology topology, ShmRegion& shm, SysfsTree& sysfs, ContextRegistry& contexts,
         ChannelRegistry& channels, HotplugObserver& hotplug);

  // --- lookups -------------------------------------------------------------------------------
  DeviceEntry& device(const std::string& name);  // a present device, or CommandError
  DeviceEntry* find(const std::string& name);
  DeviceEntry* find_index(int32_t index);
  // "DEV/PORT" -> the device and a validated port number.
  std::pair<DeviceEntry*, int> port(const std::string& target);
  NetdevTable& netdevs() { return netdevs_; }
  const std::vector<DeviceEntry>& devices() const { return devices_; }

  // --- lifecycle (hotplug.h) -----------------------------------------------------------------
  void register_device(const DeviceModel& model);
  // Default: disassociate (one DEVICE_FATAL element 0 per context, then silence). Otherwise the
  // removal stays pending until the device's last context closes.
  std::vector<Delivery> unplug(const std::string& name, bool disassociate);
  void replug(const std::string& name);
  void rename(const std::string& name, const std::string& new_name);
  // While set, an unplug and a replug are the function's driver unloading and loading it
  // (mlx5_unload_one, mlx5_load_one), not a PCI removal: the function keeps its auxiliary
  // index and its netdevs; only mlx5_core.rdma.<N> goes and comes back (from 6.4, with
  // 72ed5d5624af, mlx5_core.eth.<N> and the netdevs too).
  void function_stays(bool stays) { function_stays_ = stays; }
  void set_kernel(KernelVersion kernel) { kernel_ = kernel; }
  std::vector<Delivery> fatal(const std::string& name, uint64_t element);
  // A context of the device closed: completes a pending removal when it was the last one, and
  // then returns the device's name.
  std::optional<std::string> context_closed(int32_t index);
  bool removal_pending(const std::string& name) const;

  // --- port, GID and P_Key changes (port_commands.cc) ------------------------------------------
  std::vector<Delivery> port_down(const std::string& target, std::optional<uint8_t> phys);
  // The link comes up; at another width or speed when given (a link that retrained).
  struct Retrain {
    std::optional<uint8_t> width;   // ibv_port_attr active_width code
    std::optional<uint32_t> speed;  // the kernel's active_speed code (Port::speed)
  };
  std::vector<Delivery> port_up(const std::string& target, std::optional<uint16_t> lid,
                                std::optional<uint16_t> sm_lid, Retrain retrain = {});
  std::vector<Delivery> set_lid(const std::string& target, uint16_t lid);
  // A RoCE port's active MTU (bytes), as a netdev MTU change sets it: no event.
  std::vector<Delivery> set_active_mtu(const std::string& target, uint32_t mtu_bytes);
  std::vector<Delivery> set_sm(const std::string& target, uint16_t sm_lid,
                               std::optional<uint8_t> sl);
  std::vector<Delivery> reregister(const std::string& target);
  std::vector<Delivery> set_pkey(const std::string& target, int index, uint16_t value);
  std::vector<Delivery> gid_add(const std::string& target, const std::string& gid,
                                std::optional<int> index, std::optional<std::string> type,
                                std::optional<std::string> netdev);
  std::vector<Delivery> gid_del(const std::string& target, int index);
  std::vector<Delivery> gid_add_ip(const std::string& target, const std::string& ip,
                                   const std::string& netdev);
  std::vector<Delivery> gid_del_ip(const std::string& target, const std::string& ip);
  // The effective speed of the device's ports changed (a member link of its link aggregation
  // went down or came back): the one DEVICE_SPEED_CHANGE, element 0, that mlx5 sends for the
  // whole device. No port attribute changes: the effective speed is not among ibv_query_port's
  // (docs/simulator.md, "Where it differs from real hardware"). A link that retrained is port_down,
  // then port_up with a Retrain.
  std::vector<Delivery> speed_change(const std::string& name);

  // --- port counters (counter_commands.cc) -----------------------------------------------------
  // They change no state that verbs report and queue no event; the sysfs file changes at once.
  // What a counter command did: the port ("mlx5_0/1") and the counter as it is now.
  struct CounterChange {
    std::string port;
    Counter counter;
    bool saturated = false;  // an add that did not fit a counter that saturates
    bool wrapped = false;    // an add or set past the maximum of a counter that wraps
  };
  // Adds n, saturating at the counter's width, or modulo 2^bits for one that wraps.
  CounterChange counter_add(const std::string& target, const std::string& name, uint64_t n);
  // Refuses a value over the width of a counter that saturates; one that wraps takes it modulo
  // 2^bits, as its driver's read of the low bits shows it. 0 is what a reset by another tool
  // looks like.
  CounterChange counter_set(const std::string& target, const std::string& name, uint64_t value);
  // The counter's file reads as `fault` says (kNone: its value again); its value goes on.
  CounterChange counter_fail(const std::string& target, const std::string& name,
                             CounterFault fault);
  // Every counters/ counter of the port back to 0, as `perfquery -R` resets the PMA's; the
  // driver's hw_counters/ cannot be reset. Returns how many there are.
  size_t counter_reset(const std::string& target);
  // The ethtool PHY counters of a RoCE port's netdev ("ethtool/symbol_errors"): 64-bit, read
  // over generic netlink, no file. An InfiniBand port, or one whose netdev reports no PHY
  // statistics, is refused.
  struct PhyCounterChange {
    std::string port;
    std::string name;
    uint64_t value = 0;
    FecMode fec = FecMode::kUnsupported;
    bool saturated = false;
  };
  PhyCounterChange phy_counter_add(const std::string& target, const std::string& name, uint64_t n);
  PhyCounterChange phy_counter_set(const std::string& target, const std::string& name,
                                   uint64_t value);

  // --- raw events ------------------------------------------------------------------------------
  Delivery raw_event(const std::string& target, uint32_t type, std::optional<uint64_t> element,
                     std::optional<uint64_t> context_id);
  // Queues count events round-robin over (target, type) as fast as possible, without state
  // changes. Returns the number of deliveries (events times contexts).
  uint64_t storm(const std::vector<std::pair<DeviceEntry*, int>>& targets,
                 const std::vector<uint32_t>& types, uint64_t count);

  // --- DEVX events (devx_commands.cc) ------------------------------------------------------
  DeviceEntry& devx_device(const std::string& name);  // present, not fatal, and mlx5
  // Raises an EQE on a live mlx5 device: every DEVX channel subscribed to its type gets it.
  DevxDelivery raise_eqe(const std::string& device, const devx::Eqe& eqe);
  // "DEV/PORT": the port's module; "DEV" with `module`: that number.
  std::pair<DeviceEntry*, uint8_t> module_target(const std::string& target,
                                                 std::optional<uint8_t> module);
  // Raises count EQEs round-robin over the devices and types, each with its sequence number.
  // Returns the records queued.
  uint64_t devx_storm(const std::vector<DeviceEntry*>& devices, const std::vector<uint8_t>& types,
                      uint64_t count);
  // Arms allocation failures on one channel of the device or on all its data-mode channels.
  std::vector<uint64_t> destroy_channels(const std::string& device,
                                         std::optional<uint64_t> channel);
  std::vector<uint64_t> fail_allocations(const std::string& device, std::optional<uint64_t> channel,
                                         uint64_t count);

  nlohmann::json show(const std::string& only) const;

 private:
  DeviceEntry& modifiable(const std::string& name);  // present and not in fatal state
  // The port `target` names, with its device (modifiable): where a port change starts.
  struct PortRef {
    DeviceEntry& device;
    int port;
  };
  PortRef modifiable_port(const std::string& target);
  // The RoCE port `target` names (modifiable) and `ip` as a GID: where gid add-ip and del-ip
  // start.
  struct IpGid {
    DeviceEntry& device;
    int port;
    std::array<uint8_t, 16> raw;
  };
  IpGid ip_gid(const std::string& target, const std::string& ip);
  void publish(const DeviceEntry& e);
  // publish(e), then the sysfs files of its port `port`.
  void publish_port(const DeviceEntry& e, int port);
  Delivery deliver(const DeviceEntry& e, uint32_t type, uint64_t element);
  // A port event that the firmware raises as PORT_CHANGE: DEVX first, then the verbs event.
  Delivery deliver_port(const DeviceEntry& e, int port, uint32_t type, uint8_t subtype);
  Delivery gid_changed(const DeviceEntry& e, int port);
  // The counter `name` of port `target`, with its device and port number; CommandError if none.
  struct CounterRef {
    DeviceEntry& device;
    int port;
    Counter& counter;
  };
  CounterRef counter_ref(const std::string& target, const std::string& name);
  // The ethtool counter `name` of port `target`, with the port's name ("mlx5_1/1") and mode.
  uint64_t& phy_counter_ref(const std::string& target, const std::string& name,
                            PhyCounterChange* change);
  // A link lost: link_downed counts it in counters/ and, where the driver has one (rxe), in
  // hw_counters/.
  void count_link_down(DeviceEntry& e, int port);
  void finish_removal(size_t position);
  // The synthetic PCI function ("0000:00:02.0") of the device with this node GUID.
  std::string pci_function_of(uint64_t node_guid);
  // fabric_functions.cc: mlx5_adev_idx_alloc(), the lowest index no present function has;
  // what the function's driver puts beside the RDMA device in sysfs, and takes away.
  // `also`: a device being registered, whose indices count as taken.
  int free_adev_index(const DeviceModel* also) const;
  // mlx5: the auxiliary indices of the device's functions and, for a RoCE LAG device, its
  // member PFs' functions (PF0's is the device's own).
  void assign_functions(DeviceModel& m);
  // The PCI function of a scalable function's PF (present or unplugged); CommandError if none.
  std::string sf_function(const std::string& parent);
  void add_function_children(const DeviceModel& d);
  void remove_function_children(const DeviceModel& d);
  int free_slot() const;
  uint32_t free_uverbs() const;

  ShmRegion& shm_;
  SysfsTree& sysfs_;
  ContextRegistry& contexts_;
  ChannelRegistry& channels_;
  HotplugObserver& hotplug_;
  NetdevTable netdevs_;
  std::vector<DeviceEntry> devices_;              // present: live, fatal or removal pending
  std::map<std::string, DeviceModel> unplugged_;  // by name at unplug: what replug restores
  int32_t next_index_ = 0;
  std::map<uint64_t, int> pci_functions_;  // node GUID -> ordinal, in order of registration
  bool function_stays_ = false;
  KernelVersion kernel_;
};

// The kernel's IB_EVENT_DEVICE_SPEED_CHANGE (Linux 7.0). verbs.h names it from rdma-core 62
// only; the stand-in is rdma-core 44's libibverbs, which has no name for it.
inline constexpr uint32_t kDeviceSpeedChange = 20;

const char* event_type_name(uint32_t type);  // "port_err", ... or nullptr
bool parse_event_type(const std::string& text, uint32_t* type);

}  // namespace rdmasim
