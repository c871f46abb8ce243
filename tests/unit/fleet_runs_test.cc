// The fleet reader's parts that need no journal: the merge of entry streams by time
// (fleet/entry_stream.h) and the runs of a temporary file (fleet/entry_runs.h), which must give
// back exactly the entries written, so that reading in groups gives what reading at once does.
#include <gtest/gtest.h>

#include <cerrno>
#include <memory>
#include <string>
#include <vector>

#include "entry_runs.h"
#include "entry_stream.h"

namespace rdma_eventd_fleet {
namespace {

JournalEntry entry(int64_t t, const std::string& host, uint64_t seq = 1) {
  JournalEntry e;
  e.realtime_us = t;
  e.hostname = host;
  e.event = "port_err";
  e.device = "mlx5_0";
  e.port = "1";
  e.stream = "stream-" + host;
  e.seq = seq;
  return e;
}

bool same(const JournalEntry& a, const JournalEntry& b) {
  return a.realtime_us == b.realtime_us && a.hostname == b.hostname && a.record == b.record &&
         a.event == b.event && a.device == b.device && a.port == b.port && a.health == b.health &&
         a.link_change == b.link_change && a.stream == b.stream && a.seq == b.seq &&
         a.message == b.message;
}

// A stream of given entries that fails with `error` after `fail_after` of them (never: -1).
class Listed : public EntryStream {
 public:
  explicit Listed(std::vector<JournalEntry> entries, int fail_after = -1, int error = 0)
      : entries_(std::move(entries)), fail_after_(fail_after), error_(error) {}
  int next(JournalEntry& e) override {
    if (fail_after_ >= 0 && next_ == static_cast<size_t>(fail_after_)) return -error_;
    if (next_ == entries_.size()) return 0;
    e = entries_[next_++];
    return 1;
  }

 private:
  std::vector<JournalEntry> entries_;
  int fail_after_;
  int error_;
  size_t next_ = 0;
};

std::vector<std::string> merged(const std::vector<EntryStream*>& streams,
                                std::vector<std::string>* failures = nullptr) {
  std::vector<std::string> out;
  merge_by_time(
      streams, 4,
      [&](const JournalEntry& e) { out.push_back(std::to_string(e.realtime_us) + e.hostname); },
      [&](size_t i, int error) {
        if (failures) failures->push_back(std::to_string(i) + ":" + std::to_string(error));
      });
  return out;
}

TEST(FleetMerge, ByTimeThenByStreamAndAFailingStreamKeepsWhatItGave) {
  Listed a({entry(1, "a"), entry(5, "a"), entry(9, "a")});
  Listed b({entry(1, "b"), entry(2, "b"), entry(9, "b")});
  Listed c({entry(3, "c"), entry(4, "c"), entry(6, "c")}, /*fail_after=*/2, EBADMSG);
  std::vector<std::string> failures;
  EXPECT_EQ(merged({&a, &b, &c}, &failures),
            (std::vector<std::string>{"1a", "1b", "2b", "3c", "4c", "5a", "9a", "9b"}));
  EXPECT_EQ(failures, (std::vector<std::string>{"2:" + std::to_string(EBADMSG)}));
}

TEST(FleetRuns, RunsGiveBackExactlyWhatWasWritten) {
  std::string why;
  auto file = RunFile::create(&why);
  ASSERT_TRUE(file) << why;
  // Run 0: names repeated and new, a field equal to another of the same entry, a record longer
  // than the buffer read at a time, bytes of every value, times going back.
  std::vector<JournalEntry> first;
  for (int i = 0; i < 300; ++i) {
    JournalEntry e = entry(1'000'000 + i * 7, "node" + std::to_string(i % 13), i + 1);
    if (i % 5 == 0) e.device = e.hostname;
    if (i % 7 == 0) e.health = std::string("d\0\xff\n", 4);
    if (i % 11 == 0) e.link_change = i % 2 ? "hidden_down" : std::string("b\0\xfe", 3);
    if (i == 42) e.record = std::string(100'000, 'r');
    if (i == 43) e.message = "message";
    if (i == 44) e.realtime_us = -5;
    first.push_back(e);
  }
  // Run 1: more distinct names than the table keeps.
  std::vector<JournalEntry> second;
  for (int i = 0; i < static_cast<int>(RunFile::kMaxStrings) + 500; ++i)
    second.push_back(entry(i, "h" + std::to_string(i), 1));
  for (const auto* run : {&first, &second}) {
    file->begin_run();
    for (const auto& e : *run)
      ASSERT_TRUE(file->add(e)) << file->error();
    ASSERT_TRUE(file->end_run()) << file->error();
  }
  ASSERT_EQ(file->runs(), 2u);
  for (size_t r = 0; r < 2; ++r) {
    const auto& written = r == 0 ? first : second;
    auto reader = file->read_run(r, /*buffer_bytes=*/4096);
    JournalEntry e;
    size_t n = 0;
    int got;
    while ((got = reader->next(e)) > 0) {
      ASSERT_LT(n, written.size());
      EXPECT_TRUE(same(e, written[n])) << "run " << r << " entry " << n;
      ++n;
    }
    EXPECT_EQ(got, 0);
    EXPECT_EQ(n, written.size());
  }
}

}  // namespace
}  // namespace rdma_eventd_fleet
