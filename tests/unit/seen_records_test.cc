// rdma-eventctl history's removal of copies (fleet/seen_records.cc): a record is its
// stream and seq; only an exact repeat of both is a copy.
#include "seen_records.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace rdma_eventd_fleet {
namespace {

using Entry = std::pair<std::string, uint64_t>;

// The entries `history` shows, in the order given.
std::vector<Entry> shown(SeenRecords& seen, const std::vector<Entry>& entries) {
  std::vector<Entry> out;
  for (const auto& [stream, seq] : entries) {
    if (!seen.seen_before(stream, seq)) out.push_back({stream, seq});
  }
  return out;
}

TEST(HistoryRepeats, OutOfOrderRecordsAreAllKept) {
  // Given records of one stream that reach the journal out of order,
  // every one of them is shown.
  SeenRecords seen;
  const std::vector<Entry> entries{{"a", 1}, {"a", 4}, {"a", 2}, {"a", 6}, {"a", 3}, {"a", 5}};
  EXPECT_EQ(shown(seen, entries), entries);
  EXPECT_EQ(seen.runs("a"), 1u);  // 1..6, all seen: one run
}

TEST(HistoryRepeats, ARepeatedBatchIsDroppedExactly) {
  // Given an upload that sends 5..7 again after 1..8, then goes on with 9 and 10,
  // the copies are dropped and nothing else.
  SeenRecords seen;
  const std::vector<Entry> entries{{"a", 1}, {"a", 2}, {"a", 3},  {"a", 4}, {"a", 5},
                                   {"a", 6}, {"a", 7}, {"a", 8},  {"a", 5}, {"a", 6},
                                   {"a", 7}, {"a", 9}, {"a", 10}, {"a", 8}};
  const std::vector<Entry> expected{{"a", 1}, {"a", 2}, {"a", 3}, {"a", 4}, {"a", 5},
                                    {"a", 6}, {"a", 7}, {"a", 8}, {"a", 9}, {"a", 10}};
  EXPECT_EQ(shown(seen, entries), expected);
}

TEST(HistoryRepeats, TheSameSeqOfAnotherStreamIsKept) {
  // Given two daemon runs whose seqs overlap, each run's records are shown, and a copy of one of
  // them is not.
  SeenRecords seen;
  const std::vector<Entry> entries{{"a", 1}, {"b", 1}, {"a", 2}, {"b", 2}, {"b", 1}};
  const std::vector<Entry> expected{{"a", 1}, {"b", 1}, {"a", 2}, {"b", 2}};
  EXPECT_EQ(shown(seen, entries), expected);
}

TEST(HistoryRepeats, AGapIsKeptUntilItFillsAndCopiesAroundItAreDropped) {
  // Given a window that starts mid-stream (--since) and a record older than the first one read,
  // both sides of the gap are kept, and copies from either side are dropped.
  SeenRecords seen;
  const std::vector<Entry> entries{{"a", 10}, {"a", 11}, {"a", 20}, {"a", 9},  {"a", 21},
                                   {"a", 11}, {"a", 20}, {"a", 9},  {"a", 12}, {"a", 19}};
  const std::vector<Entry> expected{{"a", 10}, {"a", 11}, {"a", 20}, {"a", 9},
                                    {"a", 21}, {"a", 12}, {"a", 19}};
  EXPECT_EQ(shown(seen, entries), expected);
  EXPECT_EQ(seen.runs("a"), 2u);  // 9..12 and 19..21
  for (uint64_t seq = 13; seq <= 18; ++seq)
    EXPECT_FALSE(seen.seen_before("a", seq)) << seq;
  EXPECT_EQ(seen.runs("a"), 1u);  // 9..21
}

TEST(HistoryRepeats, ALongContiguousStreamKeepsOneRun) {
  // Given a million records in order, then the whole stream once more,
  // every copy is dropped and the stream is held as one run.
  SeenRecords seen;
  constexpr uint64_t kCount = 1'000'000;
  for (uint64_t seq = 1; seq <= kCount; ++seq)
    ASSERT_FALSE(seen.seen_before("a", seq)) << seq;
  EXPECT_EQ(seen.runs("a"), 1u);
  for (uint64_t seq = 1; seq <= kCount; ++seq)
    ASSERT_TRUE(seen.seen_before("a", seq)) << seq;
  EXPECT_EQ(seen.runs("a"), 1u);
}

TEST(HistoryRepeats, EntriesWithoutASeqAreNeverCopies) {
  // Given entries that carry no RDMA_SEQ, they cannot be told apart: each is shown.
  SeenRecords seen;
  const std::vector<Entry> entries{{"", 0}, {"", 0}, {"a", 0}, {"a", 0}};
  EXPECT_EQ(shown(seen, entries), entries);
}

TEST(HistoryRepeats, TheHighestSeqDoesNotOverflow) {
  SeenRecords seen;
  constexpr uint64_t kMax = UINT64_MAX;
  EXPECT_FALSE(seen.seen_before("a", kMax));
  EXPECT_FALSE(seen.seen_before("a", kMax - 1));
  EXPECT_TRUE(seen.seen_before("a", kMax));
  EXPECT_TRUE(seen.seen_before("a", kMax - 1));
  EXPECT_EQ(seen.runs("a"), 1u);
}

}  // namespace
}  // namespace rdma_eventd_fleet
