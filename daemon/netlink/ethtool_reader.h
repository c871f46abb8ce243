// A netdev's PHY error counters, read over the kernel's ethtool generic netlink family
// (core/ethtool_wire): FEC_GET with statistics and STATS_GET of the eth-phy group. Blocking,
// with a deadline: it runs in a counter read thread (app/counter_read_worker), never on the
// event loop. One reader per read: it opens its socket and resolves the family's id (given at
// run time) each time, three exchanges a RoCE port and interval.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "core/ethtool_wire.h"

namespace rdma_eventd::daemon::netlink {

struct PhyRead {
  std::optional<ethtool::PhyStats> stats;  // none when the read failed
  int error = 0;                           // why, an errno: EOPNOTSUPP (no FEC operations), ...
  std::string what;                        // which step failed, for the log
};

// `stand_in`: rdma-sim's generic netlink stand-in instead of the kernel ("" for the kernel).
PhyRead read_phy_stats(const std::string& netdev, const std::string& stand_in,
                       std::chrono::milliseconds timeout);

}  // namespace rdma_eventd::daemon::netlink
