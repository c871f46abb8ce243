#include "entry_stream.h"

#include <algorithm>
#include <queue>
#include <utility>

namespace rdma_eventd_fleet {

void merge_by_time(const std::vector<EntryStream*>& streams, size_t read_ahead_in_all,
                   const std::function<void(const JournalEntry&)>& each,
                   const std::function<void(size_t stream, int error)>& failed) {
  if (streams.empty()) return;
  const size_t read_ahead = std::clamp<size_t>(read_ahead_in_all / streams.size(), 2, 256);
  struct Ahead {
    std::vector<JournalEntry> entries;
    size_t next = 0;
    bool done = false;  // the stream ended or failed: never asked again
  };
  std::vector<Ahead> ahead(streams.size());
  // Reads the next few entries of stream i; false when it has none left.
  const auto refill = [&](size_t i) {
    Ahead& a = ahead[i];
    a.entries.resize(read_ahead);
    size_t n = 0;
    int r = 1;
    while (n < read_ahead && (r = streams[i]->next(a.entries[n])) > 0)
      ++n;
    a.entries.resize(n);
    a.next = 0;
    a.done = r <= 0;
    if (r < 0) failed(i, -r);
    return n > 0;
  };
  // A min-heap of the streams by the time of their next entry, then by their order.
  using Head = std::pair<int64_t, size_t>;
  std::priority_queue<Head, std::vector<Head>, std::greater<>> heads;
  for (size_t i = 0; i < streams.size(); ++i) {
    if (refill(i)) heads.emplace(ahead[i].entries.front().realtime_us, i);
  }
  while (!heads.empty()) {
    const size_t i = heads.top().second;
    heads.pop();
    Ahead& a = ahead[i];
    each(a.entries[a.next++]);
    if (a.next == a.entries.size() && (a.done || !refill(i))) {
      a.entries = {};
      continue;
    }
    heads.emplace(a.entries[a.next].realtime_us, i);
  }
}

}  // namespace rdma_eventd_fleet
