// The DEVX fields of topology files: a device's "provider" and "devx" object, a port's "module"
// (docs/simulator.md, "Topology files").
#pragma once

#include "json_fields.h"
#include "model.h"

namespace rdmasim {

// Reads "provider" and "devx" of a device object.
DevxModel parse_devx(JsonFields& device);
// Reads "module" of a port object: the module behind port `port_num` (default: port - 1).
uint8_t parse_port_module(JsonFields& port, const DevxModel& devx, int port_num);

}  // namespace rdmasim
