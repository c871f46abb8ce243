#include "seen_records.h"

#include <limits>

namespace rdma_eventd_fleet {

bool SeenRecords::seen_before(std::string_view stream, uint64_t seq) {
  if (seq == 0) return false;
  auto s = streams_.find(stream);
  if (s == streams_.end()) s = streams_.emplace(std::string(stream), Runs{}).first;
  Runs& runs = s->second;

  // The run that starts after seq, and the one before it, which may hold seq or end just below.
  auto next = runs.upper_bound(seq);
  if (next != runs.begin()) {
    auto prev = std::prev(next);
    if (prev->second >= seq) return true;
    if (prev->second + 1 == seq) {
      prev->second = seq;
      if (next != runs.end() && next->first == seq + 1) {  // seq closes the gap between two runs
        prev->second = next->second;
        runs.erase(next);
      }
      return false;
    }
  }
  if (next != runs.end() && seq != std::numeric_limits<uint64_t>::max() && next->first == seq + 1) {
    const uint64_t last = next->second;
    runs.erase(next);
    runs.emplace(seq, last);
    return false;
  }
  runs.emplace(seq, seq);
  if (runs.size() > max_runs_ && runs.size() >= 2) {
    const auto oldest = runs.begin();
    const auto second = std::next(oldest);
    oldest->second = second->second;
    runs.erase(second);
  }
  return false;
}

size_t SeenRecords::runs(std::string_view stream) const {
  const auto s = streams_.find(stream);
  return s == streams_.end() ? 0 : s->second.size();
}

}  // namespace rdma_eventd_fleet
