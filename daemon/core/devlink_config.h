// The configuration's "devlink_health" section (docs/configuration.md; docs/health.md,
// "devlink health"). What the reporters mean for port health is in "health"
// (HealthConfig::devlink_roles and the firmware and queue error thresholds).
#pragma once

namespace rdma_eventd::daemon {

struct DevlinkConfig {
  bool enabled = true;   // follow the kernel's devlink health reporters
  bool unmapped = true;  // publish reporters of devlink instances with no RDMA device
  friend bool operator==(const DevlinkConfig&, const DevlinkConfig&) = default;
};

}  // namespace rdma_eventd::daemon
