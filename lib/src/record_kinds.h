// Which keys a record carries beyond the common ones, by its event: what record.cc writes and
// record_read.cc reads back.
#pragma once

#include "rdma_eventd/record.h"

namespace rdma_eventd {

// Device-wide records that carry the last known state of every port.
inline bool has_ports_array(EventKind kind) {
  return kind == EventKind::kDeviceFatal || kind == EventKind::kDeviceRemoved;
}

// Records read from a DEVX event channel: they carry the "vendor" object.
inline bool has_vendor_object(EventKind kind) {
  return kind >= EventKind::kModulePlugged && kind <= EventKind::kVendorEvent;
}

inline bool is_module_record(EventKind kind) {
  return kind >= EventKind::kModulePlugged && kind <= EventKind::kModuleError;
}

// Records with keys of their own event after the port block (record.cc, write_event_keys):
// the others end with their port block and changes.
inline bool has_event_keys(EventKind kind) {
  switch (kind) {
    case EventKind::kGidChange:
    case EventKind::kPkeyChange:
    case EventKind::kDeviceSpeedChange:
    case EventKind::kDeviceRenamed:
    case EventKind::kDeviceRecovered:
    case EventKind::kAppReport:
    case EventKind::kPortHealth:
    case EventKind::kLinkQuality:
    case EventKind::kDevlinkHealth:
      return true;
    default:
      return has_ports_array(kind) || has_vendor_object(kind);
  }
}

}  // namespace rdma_eventd
