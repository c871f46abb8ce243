#include "core/table_diff.h"

#include <algorithm>

namespace rdma_eventd::daemon {

GidDiff diff_gids(const std::vector<GidEntry>& before, const std::vector<GidEntry>& after) {
  GidDiff d;
  auto b = before.begin();
  auto a = after.begin();
  // A merge over two index-ordered lists.
  while (b != before.end() || a != after.end()) {
    if (a == after.end() || (b != before.end() && b->index < a->index)) {
      d.removed.push_back(*b++);
    } else if (b == before.end() || a->index < b->index) {
      d.added.push_back(*a++);
    } else {
      if (!(*b == *a)) {
        d.removed.push_back(*b);
        d.added.push_back(*a);
      }
      ++a;
      ++b;
    }
  }
  return d;
}

PkeyDiff diff_pkeys(const std::vector<uint16_t>& before, const std::vector<uint16_t>& after) {
  PkeyDiff d;
  const size_t n = std::max(before.size(), after.size());
  for (size_t i = 0; i < n; ++i) {
    const uint16_t old_key = i < before.size() ? before[i] : 0;
    const uint16_t new_key = i < after.size() ? after[i] : 0;
    if (old_key == new_key) continue;
    const auto index = static_cast<uint32_t>(i);
    if (old_key != 0) d.removed.push_back({index, old_key});
    if (new_key != 0) d.added.push_back({index, new_key});
  }
  return d;
}

}  // namespace rdma_eventd::daemon
