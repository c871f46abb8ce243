// The port health state that survives a daemon restart, as a small JSON document (the file
// itself, its directory and when it is written are the caller's). Pure.
//
// Windows and deadlines are CLOCK_MONOTONIC times: that clock goes on across a restart of the
// daemon and starts again only when the host boots, which is exactly when the state must be
// dropped. So the document carries the boot id (/proc/sys/kernel/random/boot_id, passed in) and
// a document from another boot is rejected; wall time, which can jump, is only ever shown. A
// document that cannot be trusted is rejected with one reason: the caller logs it once and
// starts fresh. Never fatal.
#pragma once

#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/clock.h"
#include "core/port_health_types.h"
#include "core/state_document.h"

namespace rdma_eventd::daemon {

inline constexpr int kHealthStateVersion = 1;

// Beyond core/state_document's limits: the error times kept per port and source.
inline constexpr size_t kMaxStateErrorTimes = 10000;

using HealthStateRejected = StateRejected;
using HealthStateResult = std::variant<std::vector<DeviceHealthState>, HealthStateRejected>;

// The document: kHealthStateFile.to_json(devices, boot_id, saved_at), one line of JSON, and
// kHealthStateFile.from_json(text, boot_id, now), a HealthStateResult.
extern const state_document::Format<PortHealthState> kHealthStateFile;

}  // namespace rdma_eventd::daemon
