// The devlink health reporters of the simulated host, with the rules of Linux 6.1's devlink
// (net/devlink/leftover.c: devlink_health_report, devlink_health_reporter_recover,
// devlink_nl_health_reporter_fill; docs/simulator.md, "devlink health"). Pure: what a report,
// a recovery or a setting does to a reporter, and which notifications the kernel would send;
// the stand-in socket (devlink_standin.h) encodes and sends them.
//
// Instances are kept in the order they were registered, reporters in the order their driver
// created them, as the kernel's dump lists them: every instance's own reporters first, then
// every instance's port reporters.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "hotplug.h"
#include "model.h"

namespace rdmasim {

struct DevlinkReporter {
  DevlinkReporterSpec spec;
  bool auto_recover = false;  // from ops->recover at creation; `devlink set` changes it
  bool auto_dump = false;     // from ops->dump likewise
  uint8_t state = 0;          // 0 healthy, 1 error (DEVLINK_HEALTH_REPORTER_STATE_*)
  uint64_t error_count = 0;
  uint64_t recovery_count = 0;
  int64_t last_recovery_ms = 0;  // monotonic ms of the last recovery; 0 none
  // The dump taken at a report (auto dump), kept until cleared: the kernel's dump_fmsg.
  bool dumped = false;
  uint32_t dump_ts_ms = 0;    // jiffies_to_msecs(jiffies) then: a 32-bit millisecond count
  uint64_t dump_real_ns = 0;  // ktime_get_real_ns() then
};

// A devlink port as devlink_nl_port_fill reports it (net/devlink/leftover.c in 6.1).
struct DevlinkPort {
  uint32_t index = 0;
  uint16_t type = 0;     // DEVLINK_PORT_TYPE_*: notset 0, eth 2
  uint16_t flavour = 0;  // DEVLINK_PORT_FLAVOUR_PHYSICAL
  uint32_t number = 0;   // attrs.phys.port_number
  std::string netdev;    // the netdev of an eth port; "" before it registers
  uint32_t ifindex = 0;
};

struct DevlinkInstance {
  std::string bus;
  std::string device;
  std::string rdma_device;  // the simulated device it belongs to; "" for none
  std::vector<DevlinkReporter> reporters;
  std::vector<DevlinkPort> ports;  // in the order they were registered
  // The reload actions its driver's ops have (BIT(DEVLINK_RELOAD_ACTION_*)) and whether they
  // include the limit no_reset: what DEVLINK_ATTR_DEV_STATS lists.
  uint8_t reload_actions = 0;
  bool reload_no_reset = false;
  std::string handle() const { return bus + "/" + device; }
};

// An instance or a port as a message carries it: DEVLINK_CMD_NEW/DEL (devlink_nl_fill) or
// DEVLINK_CMD_PORT_NEW/DEL (devlink_nl_port_fill).
struct DevlinkObject {
  uint8_t command = 0;
  std::string bus;
  std::string device;
  uint8_t reload_actions = 0;
  bool reload_no_reset = false;
  std::optional<DevlinkPort> port;
};

// A reporter as its driver creates it: auto recover and auto dump as its operations allow.
DevlinkReporter created_reporter(const DevlinkReporterSpec& spec);

// One reporter as a message carries it.
struct DevlinkFill {
  std::string bus;
  std::string device;
  DevlinkReporter reporter;
};

class DevlinkHealth final : public HotplugObserver {
 public:
  // The clocks: monotonic ms (grace periods, dump_ts) and real-time ns (dump_ts_ns).
  using Clock = std::function<int64_t()>;
  // Every notification the kernel multicasts to the config group.
  using Notify = std::function<void(const DevlinkFill&)>;
  // Every instance and port notification (NEW, DEL, PORT_NEW, PORT_DEL) to the config group.
  using NotifyObject = std::function<void(const DevlinkObject&)>;
  DevlinkHealth(Clock monotonic_ms, Clock real_ns, Notify notify);
  void on_objects(NotifyObject notify) { notify_object_ = std::move(notify); }
  // The release whose mlx5 layout the instances follow (before any device is added).
  void set_kernel(KernelVersion kernel) { kernel_ = kernel; }

  // What mlx5_core creates on each of a device's pci/ instances: fw and fw_fatal (and vnic
  // from 6.5). mlx5e's tx and rx come with its uplink port (add_device); a topology's
  // reporters are added on the first function's instance. Other providers: none of their own.
  std::vector<DevlinkReporterSpec> driver_reporters(const DeviceModel& d) const;

  // A device's instances registered (DEVLINK_CMD_NEW, then PORT_NEW for each port) or gone
  // (PORT_DEL for each port, then DEVLINK_CMD_DEL; their reporters go with no notification),
  // in the order mlx5 does it for the kernel release (devlink_instances.cc).
  void add_device(const DeviceModel& d);
  void remove_device(const std::string& rdma_device);
  void rename_device(const std::string& old_name, const std::string& new_name);
  // The fabric's hot-plug. Before 6.3 mlx5's PCI removal unregisters pci/ first (remove_one:
  // devlink_unregister), from 6.3 last (mlx5_uninit_one, after fe578cbb2f05); the Ethernet
  // auxiliary device's instance goes after the RDMA device (mlx5_unregister_device deletes
  // the auxiliary devices in reverse: rdma before eth).
  void ib_device_added(const DeviceModel& d, int32_t) override { add_device(d); }
  void uverbs_removed(const DeviceModel& d, uint32_t) override;
  void ib_device_removed(const DeviceModel& d, int32_t) override;
  void ib_device_renamed(const std::string& old_name, const DeviceModel& d, int32_t) override {
    rename_device(old_name, d.name);
  }
  // An instance with no RDMA device (the topology's devlink_instances).
  void add_instance(const std::string& bus, const std::string& device,
                    const std::vector<DevlinkReporterSpec>& reporters);

  // What a report or a recovery did: the kernel's return value (0, ECANCELED for a recovery
  // aborted by the state or the grace period, the driver's error, EOPNOTSUPP without a recover
  // operation), whether it recovered, and the notifications sent.
  struct Outcome {
    int error = 0;
    bool recovered = false;
    int notifications = 0;
    DevlinkReporter reporter;  // as it is afterwards
    std::string handle;
    std::string device;  // the instance's RDMA device; "" for none
  };
  // The driver's recover operation beyond the reporter's own (mlx5's fw_fatal unloads and loads
  // the function of this RDMA device): 0, or the error the recovery fails with.
  using DriverRecover = std::function<int(const std::string& rdma_device)>;
  // Which reporter a command means: `target` is an RDMA device's name or a handle; `port` a
  // devlink port index (a port reporter, as devlink(8)'s DEV/PORT_INDEX), or none: the
  // instance's own reporter of that name, else its only port reporter of that name.
  struct Address {
    std::string target;
    std::string name;
    std::optional<int64_t> port;
  };
  // devlink_health_report(); `recovery_error` is what the driver's recover returns (0: it works).
  Outcome report(const Address& a, int recovery_error, const DriverRecover& driver = {});
  // DEVLINK_CMD_HEALTH_REPORTER_RECOVER from user space (devlink health recover).
  Outcome recover(const Address& a, int recovery_error, const DriverRecover& driver = {});
  // The reporter a command means, without changing anything: its instance's handle and
  // device (CommandError when there is none).
  std::pair<std::string, std::string> instance_of(const Address& a) {
    auto [i, r] = find(a);
    return {i.handle(), i.rdma_device};
  }
  // While set, a device that leaves and comes back is the same function reloaded by its driver
  // (mlx5_unload_one, mlx5_load_one): pci/ stays, and mlx5e's auxiliary instance stays too
  // before 6.4 (suspended) and goes and comes back from 6.4 (72ed5d5624af).
  void function_stays(bool stays) { function_stays_ = stays; }
  // DEVLINK_CMD_HEALTH_REPORTER_SET (devlink health set): no notification.
  DevlinkReporter set(const Address& a, std::optional<uint64_t> grace_period_ms,
                      std::optional<bool> auto_recover, std::optional<bool> auto_dump);
  // DEVLINK_CMD_HEALTH_REPORTER_DUMP_CLEAR.
  void dump_clear(const Address& a);
  // A driver creates or destroys a reporter: any reporter of an instance with no RDMA device;
  // a port reporter (spec.port_index, a.port) of a device's instance too, as mlx5e creates and
  // destroys tx and rx with its netdev's devlink port. A device's own reporters are its
  // driver's for the device's life.
  void add_reporter(const std::string& handle, const DevlinkReporterSpec& spec);
  void remove_reporter(const Address& a);

  // Every reporter in the kernel's dump order.
  std::vector<DevlinkFill> dump() const;
  // Every devlink port in DEVLINK_CMD_PORT_GET's dump order: instance by instance, as they
  // registered, each one's ports by index.
  std::vector<DevlinkObject> port_dump() const;
  // The instances and their ports (`devlink show`, `devlink ports`); `only` as show's.
  nlohmann::json instances_json(const std::string& only) const;
  // `only`: a device's name or a handle ("" every instance); `port`: that port's reporters.
  nlohmann::json show(const std::string& only, std::optional<int64_t> port) const;

 private:
  struct Found {
    DevlinkInstance& instance;
    DevlinkReporter& reporter;
  };
  // CommandError when there is no such reporter, or several a port would tell apart.
  Found find(const Address& a);
  DevlinkInstance* instance(const std::string& handle);
  void notify(const DevlinkInstance& i, const DevlinkReporter& r, int* count);
  // devlink_health_reporter_recover(); notifies on success. Fills o->reporter.
  int do_recover(DevlinkInstance& i, DevlinkReporter& r, int recovery_error,
                 const DriverRecover& driver, Outcome* o);
  int finish_recovery(DevlinkInstance& i, DevlinkReporter& r, Outcome* o);

  // devlink_instances.cc: an instance registered or unregistered with its notifications.
  void register_instance(DevlinkInstance i);
  void unregister_instances(const std::string& rdma_device, const std::string& bus_only);
  void notify_object(uint8_t command, const DevlinkInstance& i, const DevlinkPort* port);
  // A port's PORT_NEW as its type and netdev change (devlink_port_netdevice_event).
  void port_changed(const DevlinkInstance& i, const DevlinkPort& p);

  Clock monotonic_ms_;
  Clock real_ns_;
  Notify notify_;
  NotifyObject notify_object_;
  KernelVersion kernel_;
  bool function_stays_ = false;
  std::vector<DevlinkInstance> instances_;
};

}  // namespace rdmasim
