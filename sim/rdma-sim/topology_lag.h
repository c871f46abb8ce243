// The "lag" and "sf" fields of a topology's device: a RoCE LAG device's member PFs, a
// scalable function's PF.
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
// "sf": {"parent": PF device, "id": N}; checked against the devices listed before it.
void parse_sf(JsonFields& device, DeviceModel* d);
void check_sf(JsonFields& device, const DeviceModel& d, const std::vector<DeviceModel>& before);

}  // namespace rdmasim
