// One open device, as DeviceSet keeps it. Only the device_set*.cc files use it.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "app/device_set.h"
#include "core/device_view.h"
#include "loop/event_loop.h"
#include "verbs/verbs.h"

namespace rdma_eventd::daemon {

// Members are destroyed in reverse order: the watch goes before the context that owns the fd
// it watches.
struct DeviceSet::WatchedDevice {
  std::unique_ptr<verbs::Context> context;
  DeviceView view;
  std::unique_ptr<IoWatch> watch;
  bool closing = false;  // paused, destroyed by deferred work (never inside its own callback)
  bool read_error_logged = false;
  std::vector<bool> query_error_logged = std::vector<bool>(3, false);  // per QueryFailure::What
};

}  // namespace rdma_eventd::daemon
