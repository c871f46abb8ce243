// The device capabilities of a topology device: ConnectX-6-like defaults and the "device_attr"
// object that overrides them.
#pragma once

#include <infiniband/verbs.h>

#include "json_fields.h"

namespace rdmasim {

ibv_device_attr_ex default_device_attr();
// Applies a "device_attr" object (fields of struct ibv_device_attr by name, plus a few of
// struct ibv_device_attr_ex) to *ex.
void parse_device_attr(JsonFields& o, ibv_device_attr_ex* ex);

}  // namespace rdmasim
