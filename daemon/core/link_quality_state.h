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

using LinkQualityStateResult = std::variant<std::vector<DeviceLinkQualityState>, StateRejected>;

// The document: kLinkQualityStateFile.to_json(devices, boot_id, saved_at), one line of JSON, and
// kLinkQualityStateFile.from_json(text, boot_id, now), a LinkQualityStateResult; every port read
// back has been sampled.
extern const state_document::Format<PortLinkQualityState> kLinkQualityStateFile;

}  // namespace rdma_eventd::daemon
