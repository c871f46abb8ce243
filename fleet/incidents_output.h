// How rdma-eventctl history --incidents prints incidents: a few lines each for a person, or one
// JSON object each for tools. Pure. Names from the journal are any bytes: the text shows them
// with printable(), JSON with json_text() (escape.h), so that neither a terminal nor a JSON
// reader sees anything but text.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "incident.h"

namespace rdma_eventd_fleet {

// An incident for a person, ending in a newline:
//   2026-11-28T10:15:30.123Z  1.2 s  fabric  3 hosts, 3 ports down within 0.4 s; ...
//     node01  mlx5_0/1  1 port_err, 1 sm_change, 1 port_health down
// At most `max_hosts` host lines, then how many more.
std::string format_incident(const Incident& incident, size_t max_hosts = 10);

// {"start", "end", "duration_s", "class", "evidence", "records", "late_records", "port_downs",
//  "link_losses": {"hosts", "ports", "within_s"}, "sm_notices": {"hosts", "ports", "within_s"},
//  "events", "hosts": [{"host", "first", "last", "devices", "ports", "sm_ports", "events"}]}
nlohmann::ordered_json incident_json(const Incident& incident);

}  // namespace rdma_eventd_fleet
