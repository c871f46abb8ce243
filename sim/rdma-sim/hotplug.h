// Device registration changes, reported in the kernel's order. This is the one place a later
// udev/netlink emitter hooks into: every add, remove and rename of a device goes through
// Fabric::register_device / unregister_device / rename_device, which call these.
//
// Kernel order, for reference:
//   add:     "infiniband" add (ib_device), then "infiniband_verbs" add (uverbsN)
//   remove:  "infiniband_verbs" remove (before any DEVICE_FATAL is queued), then, once the device
//            is released, "infiniband" remove
//   rename:  "infiniband" move (DEVPATH_OLD), uverbsN unchanged
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model.h"

namespace rdmasim {

class HotplugObserver {
 public:
  virtual ~HotplugObserver() = default;
  virtual void ib_device_added(const DeviceModel& /*device*/, int32_t /*index*/) {}
  virtual void uverbs_added(const DeviceModel& /*device*/, uint32_t /*uverbs*/) {}
  virtual void uverbs_removed(const DeviceModel& /*device*/, uint32_t /*uverbs*/) {}
  virtual void ib_device_removed(const DeviceModel& /*device*/, int32_t /*index*/) {}
  virtual void ib_device_renamed(const std::string& /*old_name*/, const DeviceModel& /*device*/,
                                 int32_t /*index*/) {}
};

// Hands every change to several observers in turn (the udev emitter, the devlink reporters, the
// RDMA netlink monitor).
class HotplugFanout final : public HotplugObserver {
 public:
  void add(HotplugObserver* o) { observers_.push_back(o); }
  void ib_device_added(const DeviceModel& d, int32_t index) override {
    each(&HotplugObserver::ib_device_added, d, index);
  }
  void uverbs_added(const DeviceModel& d, uint32_t uverbs) override {
    each(&HotplugObserver::uverbs_added, d, uverbs);
  }
  void uverbs_removed(const DeviceModel& d, uint32_t uverbs) override {
    each(&HotplugObserver::uverbs_removed, d, uverbs);
  }
  void ib_device_removed(const DeviceModel& d, int32_t index) override {
    each(&HotplugObserver::ib_device_removed, d, index);
  }
  void ib_device_renamed(const std::string& old_name, const DeviceModel& d,
                         int32_t index) override {
    each(&HotplugObserver::ib_device_renamed, old_name, d, index);
  }

 private:
  // The change `change` with these arguments, to every observer in the order they were added.
  template <typename... Params, typename... Args>
  void each(void (HotplugObserver::*change)(Params...), const Args&... args) {
    for (HotplugObserver* o : observers_)
      (o->*change)(args...);
  }

  std::vector<HotplugObserver*> observers_;
};

}  // namespace rdmasim
