// The link quality of every port (core/link_quality) that survives a daemon restart on the same
// boot, as a small JSON document (the file, its directory and when it is written are the
// caller's). Pure.
//
// Modelled on the port health state (core/health_state_file): the windows' steps and the clean
// periods are CLOCK_MONOTONIC times, so a document from another boot is rejected (the counters
// count from the driver's load, and a boot reloads it); a document that cannot be trusted is
// rejected with one reason (core/state_document), which the caller logs once before it starts
// every port from a new baseline. Never fatal.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/clock.h"
#include "core/device_state.h"
#include "core/link_quality.h"
#include "core/state_document.h"

namespace rdma_eventd::daemon {

inline constexpr int kLinkQualityStateVersion = 1;

// Beyond core/state_document's limits (devices, ports, bytes): what a port may hold.
inline constexpr size_t kMaxStateCounters = 64;  // counters read per port, and per fault
inline constexpr size_t kMaxStateCounterName = 255;
inline constexpr size_t kMaxStateSteps = PortLinkQuality::kMaxSteps;  // per counter

struct PortLinkQualityState {
  uint32_t port = 0;
  LinkQualityState state;
  friend bool operator==(const PortLinkQualityState&, const PortLinkQualityState&) = default;
};

using DeviceLinkQualityState = DeviceState<PortLinkQualityState>;

// One line of JSON.
std::string link_quality_state_to_json(const std::vector<DeviceLinkQualityState>& devices,
                                       std::string_view boot_id, Instant saved_at);

using LinkQualityStateResult = std::variant<std::vector<DeviceLinkQualityState>, StateRejected>;

// Accepts only a document of this version, written on this boot (`boot_id`), no later than
// `now` on the monotonic clock, and whole: every key present with its type, within its bounds.
// Every port read back has been sampled.
LinkQualityStateResult link_quality_state_from_json(std::string_view text, std::string_view boot_id,
                                                    Instant now);

}  // namespace rdma_eventd::daemon
