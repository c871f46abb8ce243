// The "lag" field of a topology's device: a RoCE LAG device's member PFs.
#pragma once

#include <vector>

#include "json_fields.h"
#include "model.h"
#include "topology.h"

namespace rdmasim {

// Reads "lag" (absent: none), giving each member's netdev its ifindex in `netdevs`.
std::vector<LagMember> parse_lag(JsonFields& device, NetdevTable& netdevs);
// Once the ports are read: a LAG device is an mlx5 device with one Ethernet port, the bond.
void check_lag(JsonFields& device, const DeviceModel& d);

}  // namespace rdmasim
