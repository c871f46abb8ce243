// One open device, as DeviceSet keeps it: the handle and its watch. What the daemon knows about
// the device (its view, whether it is closing) is DeviceLifecycle's. Only the device_set*.cc
// files use it.
#pragma once

#include <array>
#include <memory>

#include "app/device_set.h"
#include "core/device_view.h"
#include "core/devx_status.h"
#include "loop/event_loop.h"

namespace rdma_eventd::daemon {

// Members are destroyed in reverse order: the watch goes before the device that owns the fd
// it watches.
struct DeviceSet::WatchedDevice {
  std::unique_ptr<OpenDevice> device;
  std::unique_ptr<IoWatch> watch;
  // The DEVX event channel's watch (mlx5 devices whose firmware allows the events): goes with
  // the device, before it.
  std::unique_ptr<IoWatch> devx_watch;
  DevxReport devx;            // its state and counters, for the status reply
  bool close_queued = false;  // paused, destroyed by deferred work (never inside its callback)
  std::array<bool, 3> query_error_logged{};  // per QueryFailure::What
};

}  // namespace rdma_eventd::daemon
