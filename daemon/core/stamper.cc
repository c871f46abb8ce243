#include "core/stamper.h"

#include <sys/random.h>

#include <cstdio>
#include <stdexcept>

namespace rdma_eventd::daemon {

SeverityMap default_severities() {
  SeverityMap m{};
  auto set = [&m](EventKind k, Severity s) { m[static_cast<size_t>(k)] = s; };
  set(EventKind::kPortActive, Severity::kNotice);
  set(EventKind::kPortErr, Severity::kError);
  set(EventKind::kLidChange, Severity::kNotice);
  set(EventKind::kPkeyChange, Severity::kNotice);
  set(EventKind::kSmChange, Severity::kNotice);
  set(EventKind::kClientReregister, Severity::kNotice);
  set(EventKind::kGidChange, Severity::kInfo);
  set(EventKind::kDeviceFatal, Severity::kCritical);
  set(EventKind::kUnknown, Severity::kWarning);
  set(EventKind::kDeviceAdded, Severity::kNotice);
  set(EventKind::kDeviceRemoved, Severity::kWarning);
  set(EventKind::kDeviceRenamed, Severity::kNotice);
  set(EventKind::kDeviceRecovered, Severity::kNotice);
  set(EventKind::kPortState, Severity::kInfo);
  set(EventKind::kAppReport, Severity::kError);
  set(EventKind::kPortHealth, Severity::kNotice);  // replaced by the verdict's (health_severity)
  set(EventKind::kModulePlugged, Severity::kNotice);
  set(EventKind::kModuleUnplugged, Severity::kWarning);
  set(EventKind::kModuleDisabled, Severity::kWarning);
  set(EventKind::kModuleError, Severity::kError);
  set(EventKind::kTemperatureWarning, Severity::kWarning);
  set(EventKind::kPciPowerChange, Severity::kWarning);
  set(EventKind::kFirmwareEvent, Severity::kNotice);
  set(EventKind::kVendorEvent, Severity::kNotice);
  set(EventKind::kVendorEventsLost, Severity::kWarning);
  set(EventKind::kLinkQuality, Severity::kWarning);  // replaced by the change's (link_severity)
  // Not a fault in itself (a bond's member link went or came back): the port_state records
  // that follow say what each port's rate became, and port health judges them.
  set(EventKind::kDeviceSpeedChange, Severity::kNotice);
  // A report's; a recovery is notice whatever this says (Daemon::publish_devlink).
  set(EventKind::kDevlinkHealth, Severity::kError);
  set(EventKind::kDevlinkEventsLost, Severity::kWarning);
  return m;
}

std::string new_stream_id() {
  unsigned char bytes[16];
  size_t got = 0;
  while (got < sizeof bytes) {
    const ssize_t n = getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0) throw std::runtime_error("getrandom failed");
    got += static_cast<size_t>(n);
  }
  std::string id;
  id.reserve(32);
  char buf[3];
  for (unsigned char b : bytes) {
    std::snprintf(buf, sizeof buf, "%02x", b);
    id += buf;
  }
  return id;
}

}  // namespace rdma_eventd::daemon
