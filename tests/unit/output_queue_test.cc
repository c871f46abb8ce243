#include "hub/output_queue.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace rdma_eventd::daemon {
namespace {

using LinePtr = OutputQueue::LinePtr;

// A record line of exactly `size` bytes (newline included) that says its seq.
LinePtr record(uint64_t seq, size_t size = 100) {
  std::string s = "{\"seq\":" + std::to_string(seq) + "}";
  s.resize(size - 1, ' ');
  return std::make_shared<const std::string>(s + "\n");
}

LinePtr control(const std::string& text) {
  return std::make_shared<const std::string>(text + "\n");
}

// Records `first` to `last`, 100 bytes each, in seq order.
void push_records(OutputQueue& q, uint64_t first, uint64_t last) {
  for (uint64_t seq = first; seq <= last; ++seq)
    q.push_record(seq, record(seq));
}

// Writes out up to `n` bytes (everything by default) and returns them.
std::string write_out(OutputQueue& q, size_t n = SIZE_MAX) {
  std::string out;
  while (!q.empty() && out.size() < n) {
    iovec iov[3];
    const size_t count = q.gather(iov, 3);
    size_t took = 0;
    for (size_t i = 0; i < count && out.size() < n; ++i) {
      const size_t len = std::min(iov[i].iov_len, n - out.size());
      out.append(static_cast<const char*>(iov[i].iov_base), len);
      took += len;
    }
    q.consume(took);
  }
  return out;
}

// The lines written, with record padding trimmed.
std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t nl = text.find('\n', pos);
    std::string line = text.substr(pos, nl - pos);
    line.erase(line.find_last_not_of(' ') + 1);
    lines.push_back(line);
    pos = nl + 1;
  }
  return lines;
}

TEST(OutputQueue, LinesGoOutInOrderAcrossPartialWrites) {
  OutputQueue q(1 << 20);
  q.push_control(control("{\"type\":\"hello\"}"));
  q.push_record(1, record(1));
  q.push_record(2, record(2));
  EXPECT_EQ(q.bytes(), 17u + 200u);
  std::string out = write_out(q, 50);  // stops inside record 1
  EXPECT_EQ(q.bytes(), 217u - 50u);
  out += write_out(q);
  EXPECT_EQ(lines_of(out),
            (std::vector<std::string>{"{\"type\":\"hello\"}", "{\"seq\":1}", "{\"seq\":2}"}));
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.stats().records_sent, 2u);
  EXPECT_EQ(q.stats().bytes_sent, 217u);
  EXPECT_EQ(q.stats().records_lost, 0u);
}

TEST(OutputQueue, OverflowDropsTheBacklogAndSaysExactlyWhatWasLost) {
  // Given a bound of 1000 bytes and records of 100 bytes that are never written, the eleventh
  // record drops the ten queued before it, and the subscriber reads one notice for seq 1-10,
  // then record 11.
  OutputQueue q(1000);
  push_records(q, 1, 11);
  EXPECT_EQ(q.stats().records_lost, 10u);
  EXPECT_EQ(lines_of(write_out(q)),
            (std::vector<std::string>{R"({"type":"lost","first_seq":1,"last_seq":10,"records":10})",
                                      "{\"seq\":11}"}));
  EXPECT_EQ(q.stats().records_sent, 1u);
  EXPECT_EQ(q.stats().lost_notices, 1u);
}

TEST(OutputQueue, ARecordAlreadyStartedIsFinishedNotDropped) {
  OutputQueue q(1000);
  push_records(q, 1, 10);
  std::string out = write_out(q, 30);  // record 1 has started
  push_records(q, 11, 12);
  out += write_out(q);
  EXPECT_EQ(lines_of(out),
            (std::vector<std::string>{"{\"seq\":1}",
                                      R"({"type":"lost","first_seq":2,"last_seq":10,"records":9})",
                                      "{\"seq\":11}", "{\"seq\":12}"}));
}

TEST(OutputQueue, DiscardingKeepsOnlyTheRestOfALinePartlyWritten) {
  // Record 1 has started (30 of its 100 bytes written), then a reply, records 2-3 and a loss
  // notice wait: discarding leaves the other 70 bytes of record 1 and nothing else; a line
  // pushed afterwards follows it.
  OutputQueue q(1000);
  q.push_record(1, record(1));
  q.push_control(control("{\"type\":\"reply\"}"));
  q.push_record(2, record(2));
  q.push_lost(Lost{3, 4, 2});
  std::string out = write_out(q, 30);
  q.discard_unstarted();
  EXPECT_EQ(q.bytes(), 70u);
  EXPECT_EQ(q.lines(), 1u);
  q.push_control(control("{\"type\":\"error\"}"));
  out += write_out(q);
  EXPECT_EQ(lines_of(out), (std::vector<std::string>{"{\"seq\":1}", "{\"type\":\"error\"}"}));
  EXPECT_EQ(q.stats().records_sent, 1u);

  // With nothing started, nothing is left.
  OutputQueue fresh(1000);
  fresh.push_record(1, record(1));
  fresh.push_control(control("{\"type\":\"reply\"}"));
  fresh.discard_unstarted();
  EXPECT_TRUE(fresh.empty());
  EXPECT_EQ(fresh.bytes(), 0u);
}

TEST(OutputQueue, ControlLinesStayInPlaceAndTheNoticeTakesTheFirstLostRecordsPlace) {
  OutputQueue q(1000);
  q.push_record(1, record(1));
  q.push_control(control("{\"type\":\"reply\",\"op\":\"ping\",\"seq\":1}"));
  push_records(q, 2, 11);
  EXPECT_EQ(lines_of(write_out(q)),
            (std::vector<std::string>{R"({"type":"lost","first_seq":1,"last_seq":9,"records":9})",
                                      R"({"type":"reply","op":"ping","seq":1})", "{\"seq\":10}",
                                      "{\"seq\":11}"}));
}

TEST(OutputQueue, AnUntouchedNoticeAbsorbsLaterLosses) {
  // A subscriber that never reads gets one notice for the whole gap, not one per overflow.
  OutputQueue q(1000);
  push_records(q, 1, 40);
  const std::vector<std::string> lines = lines_of(write_out(q));
  // Each overflow leaves the notice (56 bytes) and nine records; the fourth one came at 38.
  EXPECT_EQ(lines,
            (std::vector<std::string>{R"({"type":"lost","first_seq":1,"last_seq":37,"records":37})",
                                      "{\"seq\":38}", "{\"seq\":39}", "{\"seq\":40}"}));
  EXPECT_EQ(q.stats().records_lost, 37u);
  EXPECT_EQ(q.stats().records_sent, 3u);
  EXPECT_EQ(q.stats().lost_notices, 1u);
}

TEST(OutputQueue, WhenControlLinesFillTheQueueTheRecordItselfIsLost) {
  OutputQueue q(1000);
  q.push_control(std::make_shared<const std::string>(std::string(999, 'x') + "\n"));
  q.push_record(7, record(7));
  q.push_record(8, record(8));
  const auto lines = lines_of(write_out(q));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1], R"({"type":"lost","first_seq":7,"last_seq":8,"records":2})");
  EXPECT_EQ(q.stats().records_lost, 2u);
}

TEST(OutputQueue, LossesBeforeTheQueueMergeWithATrailingNotice) {
  OutputQueue q(1000);
  q.push_record(3, record(3));
  q.push_lost(Lost{4, 4, 1});
  q.push_lost(Lost{5, 7, 2});
  q.push_record(8, record(8));
  EXPECT_EQ(lines_of(write_out(q)),
            (std::vector<std::string>{"{\"seq\":3}",
                                      R"({"type":"lost","first_seq":4,"last_seq":7,"records":3})",
                                      "{\"seq\":8}"}));
  EXPECT_EQ(q.stats().records_lost, 3u);
}

TEST(OutputQueue, EachNoticeKeepsItsOwnRangeThroughOverflowsAndPartialWrites) {
  // Two notices with a reply between them; the first has started to go out when the queue
  // overflows: it is finished as it was, and the second absorbs the records dropped after it.
  OutputQueue q(1000);
  q.push_lost(Lost{1, 2, 2});
  q.push_control(control("{\"type\":\"reply\"}"));
  q.push_lost(Lost{3, 3, 1});
  std::string out = write_out(q, 10);
  push_records(q, 4, 13);  // 12 overflows: 4-11 are dropped
  out += write_out(q);
  EXPECT_EQ(lines_of(out),
            (std::vector<std::string>{R"({"type":"lost","first_seq":1,"last_seq":2,"records":2})",
                                      R"({"type":"reply"})",
                                      R"({"type":"lost","first_seq":3,"last_seq":11,"records":9})",
                                      "{\"seq\":12}", "{\"seq\":13}"}));
  EXPECT_EQ(q.stats().records_lost, 11u);
  EXPECT_EQ(q.stats().lost_notices, 2u);
  EXPECT_EQ(q.stats().records_sent, 2u);

  // The notices written are forgotten: a new one merges only with what comes after it, here
  // as a loss before the queue and then in an overflow (25 overflows: 16-24 are dropped).
  q.push_lost(Lost{14, 14, 1});
  q.push_lost(Lost{15, 15, 1});
  push_records(q, 16, 25);
  EXPECT_EQ(lines_of(write_out(q)),
            (std::vector<std::string>{
                R"({"type":"lost","first_seq":14,"last_seq":24,"records":11})", "{\"seq\":25}"}));
}

}  // namespace
}  // namespace rdma_eventd::daemon
