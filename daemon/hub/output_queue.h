// One subscriber's unsent output: a queue of shared lines with a bound on its bytes, and the
// accounting of what it lost.
//
// Records are droppable, other lines (hello, replies, errors, snapshot records) are not. When a
// record would take the queue past its bound, every queued record that has not started to go
// out is dropped, and one "lost" line takes the place of the first of them, naming the exact
// seq range and count. The record that did not fit follows it when it fits now, else it is
// lost too. A lost line not yet started absorbs later losses, so the subscriber reads one
// notice per gap. Control lines are bounded elsewhere: the hub stops reading a subscriber's
// requests while its queue is over the bound.
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "rdma_eventd/protocol.h"

namespace rdma_eventd::daemon {

class OutputQueue {
 public:
  using LinePtr = std::shared_ptr<const std::string>;

  struct Stats {
    uint64_t records_sent = 0;  // records written out completely
    uint64_t records_lost = 0;  // records dropped, here or before reaching the queue
    uint64_t lost_notices = 0;  // "lost" lines written out
    uint64_t bytes_sent = 0;
  };

  explicit OutputQueue(size_t max_bytes) : max_bytes_(max_bytes) {}

  // A record for the subscriber (its line ends with a newline).
  void push_record(uint64_t seq, LinePtr line);
  // A line that is never dropped.
  void push_control(LinePtr line);
  // Records that never reached the queue (a replay that fell behind the ring).
  void push_lost(const Lost& lost);

  bool empty() const { return entries_.empty(); }
  // Bytes not yet written.
  size_t bytes() const { return bytes_ - head_offset_; }
  void set_max_bytes(size_t max_bytes) { max_bytes_ = max_bytes; }
  size_t lines() const { return entries_.size(); }

  // Drops every line not yet started (records, replies, notices alike): the queue keeps only
  // the rest of a line partly written, so that what the client reads stays whole lines.
  void discard_unstarted();
  // Drops every line, the one partly written too: for a client that reads no more.
  void discard_all();

  // The unsent bytes, oldest first, as at most `max` iovecs.
  size_t gather(iovec* iov, size_t max) const;
  // `n` bytes of what gather() returned were written.
  void consume(size_t n);

  const Stats& stats() const { return stats_; }

 private:
  enum class Kind : uint8_t { kRecord, kControl, kLost };
  // 24 bytes: a queue at its bound holds thousands of them, for each of up to thousands of
  // subscribers, all pointing at the same lines. What sets an entry apart is one word: a
  // record's seq (from 1), or a tag for the other kinds. A lost notice's range is in lost_.
  struct Entry {
    LinePtr line;
    uint64_t tag = kControlTag;

    Kind kind() const {
      return tag == kControlTag ? Kind::kControl : tag == kLostTag ? Kind::kLost : Kind::kRecord;
    }
  };
  static constexpr uint64_t kControlTag = 0;
  static constexpr uint64_t kLostTag = UINT64_MAX;

  // Entry i can still be dropped or rewritten: nothing of it has been written.
  bool untouched(size_t i) const { return i > 0 || head_offset_ == 0; }
  void drop_backlog();
  void push_entry(Entry e);
  static Entry lost_entry(const Lost& lost);

  std::deque<Entry> entries_;
  std::vector<Lost> lost_;  // the range of each kLost entry, in the entries' order: a few at most
  size_t head_offset_ = 0;  // bytes of the first entry already written
  size_t bytes_ = 0;        // sum of the entries' sizes
  size_t max_bytes_;
  Stats stats_;
};

}  // namespace rdma_eventd::daemon
