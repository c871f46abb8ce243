// Which of the records `rdma-eventctl history` reads it has already taken: a journal may hold a
// record twice (systemd-journal-upload sends again, when it starts, what it sent after the last
// cursor it saved, and systemd 252 the entry at that cursor itself).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace rdma_eventd_fleet {

// A record is its stream (one daemon run) and its seq: two entries with both equal are copies of
// one record, and only those are. A record that comes after a higher seq of its stream (out of
// order) is a record of its own and is kept. Memory grows with the gaps between the seqs seen,
// not with their number: each stream keeps the runs of consecutive seqs it has seen.
class SeenRecords {
 public:
  // At most `max_runs` runs per stream: past that, the two oldest runs become one (the seqs
  // between them count as seen), so memory stays bounded however sparse the seqs seen are; only
  // a record that arrives after max_runs newer gaps of its stream can be mistaken for a copy.
  explicit SeenRecords(size_t max_runs = SIZE_MAX) : max_runs_(max_runs) {}

  // Whether this (stream, seq) was seen before; marks it seen. An entry without a seq (0) cannot
  // be told from another, so it is never a copy.
  bool seen_before(std::string_view stream, uint64_t seq);

  // The runs kept for `stream` (for tests): how much memory it holds.
  size_t runs(std::string_view stream) const;

 private:
  using Runs = std::map<uint64_t, uint64_t>;  // first seq of a run -> its last seq
  size_t max_runs_;
  std::map<std::string, Runs, std::less<>> streams_;
};

}  // namespace rdma_eventd_fleet
