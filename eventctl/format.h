// How rdma-eventctl shows records and status to people. Machines use --json.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "rdma_eventd/protocol.h"

namespace rdma_eventctl {

// One line each, without the newline:
//   2026-11-22T10:15:30.123456Z error    mlx5_0/1  port_err           ACTIVE -> DOWN; lid 7 -> 0
//   [seq 12]
std::string format_record(const rdma_eventd::Record& r, bool color);
std::string format_snapshot(const rdma_eventd::PortSnapshot& s, bool color);
std::string format_lost(const rdma_eventd::Lost& l, bool color);

// The status reply as a table of ports and a few lines of counters.
std::string format_status(const nlohmann::json& reply, bool color);

}  // namespace rdma_eventctl
