// Differences between two GID tables or two P_Key tables, entry by entry.
#pragma once

#include <cstdint>
#include <vector>

#include "rdma_eventd/record.h"

namespace rdma_eventd::daemon {

struct GidDiff {
  std::vector<GidEntry> added;
  std::vector<GidEntry> removed;
};

// Both inputs hold non-empty entries in ascending index order. An index whose entry changed
// (another GID, type or netdev) appears as removed (old entry) and added (new entry).
GidDiff diff_gids(const std::vector<GidEntry>& before, const std::vector<GidEntry>& after);

struct PkeyDiff {
  std::vector<PkeyEntry> added;
  std::vector<PkeyEntry> removed;
};

// Whole tables, position = index; 0 is an empty slot and is never reported.
PkeyDiff diff_pkeys(const std::vector<uint16_t>& before, const std::vector<uint16_t>& after);

}  // namespace rdma_eventd::daemon
