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

}  // namespace rdma_eventd
