// The counter fields of topology files: a device's "counters" and "hw_counters" groups and a
// port's "counter_values" (docs/simulator.md, "Port counters").
#pragma once

#include <string>
#include <vector>

#include "counters.h"
#include "json_fields.h"
#include "model.h"

namespace rdmasim {

// The groups a driver gives its ports when the topology does not say: mlx5 both (the extended
// PMA table, mlx5's hw_counters); mlx4 and ocrdma, which have process_mad, the basic PMA table;
// rxe only its hw_counters; the other providers none (their hw_counters are not modelled).
CounterSets default_counter_sets(devx::Provider provider);
// Reads "counters" and "hw_counters" of a device object.
CounterSets parse_counter_sets(JsonFields& device, devx::Provider provider);
// The counters of a port of a device with these groups, with the values of its
// "counter_values" ({"symbol_error": 12, "hw_counters/link_downed": 3}); `port` ("mlx5_0/1")
// names it in errors.
std::vector<Counter> parse_port_counters(JsonFields& port_fields, CounterSets sets,
                                         const std::string& port);
// An Ethernet port's "fec" (default_fec_mode) and the "ethtool/..." entries of its
// "counter_values"; both are refused on an InfiniBand port, which has no netdev.
EthtoolPhy parse_port_phy(JsonFields& port_fields, bool ethernet, devx::Provider provider);

}  // namespace rdmasim
