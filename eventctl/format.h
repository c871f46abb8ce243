// How rdma-eventctl shows records and status to people. Machines use --json. The texts
// themselves (rates, GIDs, P_Keys, what a device event means) are the journal's, from the schema
// library (schema/record_text.h); this file lays them out.
#pragma once

#include <string>

#include "rdma_eventd/protocol.h"
#include "schema/status_reply.h"

namespace rdma_eventctl {

// One line each, without the newline:
//   2026-11-22T10:15:30.123456Z error    mlx5_0/1  port_err          ACTIVE -> DOWN; lid 7 -> 0
//   [seq 12]
std::string format_record(const rdma_eventd::Record& r, bool color);
std::string format_snapshot(const rdma_eventd::PortSnapshot& s, bool color);
std::string format_lost(const rdma_eventd::Lost& l, bool color);

// The status reply (its blocks, and the reply's seq) as a table of ports and a few lines of
// counters.
std::string format_status(const rdma_eventd::StatusReply& status, uint64_t seq, bool color);
// The link_health block: the counters read and each port's verdict and estimate.
std::string format_link_health(const rdma_eventd::StatusReply::LinkHealth& l);
std::string format_devlink(const rdma_eventd::StatusReply::Devlink& d);

}  // namespace rdma_eventctl
