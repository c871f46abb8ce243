// A source of journal entries in time order (a journal file, a run of a temporary file), and the
// merge of many by time: the core of reading any number of journal files.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "journal_query.h"

namespace rdma_eventd_fleet {

class EntryStream {
 public:
  virtual ~EntryStream() = default;
  // 1: `e` holds the next entry (its buffers reused); 0: there is none; < 0: -errno, reading
  // failed.
  virtual int next(JournalEntry& e) = 0;
};

// Calls `each` for every entry of `streams`, by time; equal times in the order of the streams,
// so that merging runs of consecutive streams gives what merging the streams would. Each
// stream's next few entries are read at once (at most about `read_ahead_in_all` entries held in
// all): reading one file's entries in a row keeps its pages and sd-journal's caches warm, where
// taking one entry at a time from files in turn was half as fast. A stream that fails is
// reported through `failed` (its index and the errno) and dropped; its entries read before stay.
void merge_by_time(const std::vector<EntryStream*>& streams, size_t read_ahead_in_all,
                   const std::function<void(const JournalEntry&)>& each,
                   const std::function<void(size_t stream, int error)>& failed);

}  // namespace rdma_eventd_fleet
