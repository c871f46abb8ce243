// The one-line status the daemon reports to its service manager (STATUS=, shown by
// `systemctl status`): what it watches and who listens.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/device_view.h"

namespace rdma_eventd::daemon {

// "2 devices, 3 ports up, 1 down, 4 subscribers". A port is up when it is ACTIVE (or
// ACTIVE_DEFER) and down in any other state. `subscribers` is empty when the daemon has no
// subscriber socket; with no device open the line says that it waits for one.
std::string service_status_text(const std::vector<const DeviceView*>& devices,
                                std::optional<uint64_t> subscribers);

}  // namespace rdma_eventd::daemon
