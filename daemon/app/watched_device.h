// One open device, as DeviceSet keeps it. Only the device_set*.cc files use it.
#pragma once

#include <time.h>

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

// One clock read per batch of events or per resync: every record of it has this time.
inline int64_t realtime_now_us() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

}  // namespace rdma_eventd::daemon
