// udev netlink messages for the simulated devices, so that programs following hot-plug with
// libudev (udev_monitor_new_from_netlink(udev, "udev")) see the simulator's devices come, go
// and get renamed, in the kernel's order (hotplug.h).
//
// Each message is what systemd-udevd broadcasts after processing a kernel uevent: the
// "libudev" header (magic 0xfeedcafe, the MurmurHash2 of the subsystem for the receivers'
// in-kernel filters) followed by the properties as NUL-terminated KEY=VALUE strings, sent to
// the "udev" multicast group (2) of NETLINK_KOBJECT_UEVENT. libudev accepts only messages whose
// sender credentials say uid 0, which the kernel attaches: the simulator must run as root.
//
// Every process in the network namespace that listens on that group receives these messages,
// the host's own udev clients included when the simulator runs in the host's namespace: so it
// refuses to, and runs only in a network namespace of its own, one with no interface but
// loopback, as `unshare --net` makes it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "hotplug.h"
#include "unique_fd.h"

namespace rdmasim {

class UdevEmitter final : public HotplugObserver {
 public:
  // Throws std::runtime_error (not root, a shared network namespace, no netlink socket).
  UdevEmitter();

  void ib_device_added(const DeviceModel& device, int32_t index) override;
  void uverbs_added(const DeviceModel& device, uint32_t uverbs) override;
  void uverbs_removed(const DeviceModel& device, uint32_t uverbs) override;
  void ib_device_removed(const DeviceModel& device, int32_t index) override;
  void ib_device_renamed(const std::string& old_name, const DeviceModel& device,
                         int32_t index) override;

  uint64_t sent() const { return sent_; }

 private:
  using Properties = std::vector<std::pair<std::string, std::string>>;
  void send(const std::string& action, const std::string& subsystem, const std::string& devpath,
            Properties extra);
  // The PCI function a device hangs off (DeviceModel::pci_function), as in DIR/sys/devices.
  static std::string parent_path(const DeviceModel& device);
  static Properties uverbs_properties(uint32_t uverbs);

  UniqueFd sock_;
  uint64_t seqnum_ = 0;
  uint64_t sent_ = 0;
  bool error_logged_ = false;
};

// MurmurHash2 (32-bit, seed 0) of a string, as udev hashes subsystem names for its filters.
uint32_t murmur_hash2(const std::string& text);

}  // namespace rdmasim
