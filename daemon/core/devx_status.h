// Where a device's mlx5 vendor events (DEVX) stand: the state the device source reports and
// the status reply shows. Plain values; what they mean is in docs/operations.md.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rdma_eventd::daemon {

// Where a device's DEVX vendor events stand (the status reply's devx.state).
enum class DevxState {
  kActive,      // a channel is open and subscribed
  kNotMlx5,     // another provider: no DEVX
  kRefused,     // mlx5, but the DEVX context was refused (no UCTX in firmware, no permission)
  kNoEventCap,  // firmware without event_cap: only PORT_CHANGE, which the async fd reports
  kNoEvents,    // the firmware's mask allows none of the events that matter
  kFailed,      // querying the capabilities, creating or subscribing the channel failed
  kClosed,      // the channel was destroyed under the daemon (hot-unplug) or failed to read
};
std::string_view devx_state_name(DevxState s);

struct DevxStatus {
  DevxState state = DevxState::kNotMlx5;
  std::vector<uint16_t> events;  // subscribed
  std::string reason;            // for a state other than active: why, for the log and status
};

}  // namespace rdma_eventd::daemon
