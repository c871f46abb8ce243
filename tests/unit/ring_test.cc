#include "hub/ring.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "schema/record_json.h"

namespace rdma_eventd::daemon {
namespace {

// A port_err record of port 1, built to be published.
Record port_err(uint64_t seq, std::string device) {
  Record r;
  r.seq = seq;
  r.event = EventKind::kPortErr;
  r.device = std::move(device);
  r.node_guid = "248a:0703:00a1:b2c0";
  r.port = 1;
  r.port_info = PortInfo{};
  return r;
}

RecordPtr published(uint64_t seq) {
  Record r;
  r.seq = seq;
  r.event = EventKind::kPortErr;
  r.device = "mlx5_0";
  r.port = 1;
  r.port_info = PortInfo{};
  return make_published(r, "{\"seq\":" + std::to_string(seq) + "}");
}

TEST(PublishedRecord, KeepsTheLineWithItsNewlineAndTheFilterKey) {
  const RecordPtr p = published(4);
  EXPECT_EQ(p->line, "{\"seq\":4}\n");
  const RecordKey k = p->key();
  EXPECT_EQ(k.event, EventKind::kPortErr);
  EXPECT_EQ(k.device, "mlx5_0");
  EXPECT_TRUE(k.port_scoped);
  // The line shares the record's buffer.
  const LinePtr line = line_of(p);
  EXPECT_EQ(line.get(), &p->line);
  EXPECT_EQ(p.use_count(), 2);
}

TEST(PublishedRecord, BuiltInASpareEqualsOneBuiltNew) {
  Record renamed;
  renamed.seq = 1;
  renamed.event = EventKind::kDeviceRenamed;
  renamed.device = "mlx5_renamed_with_a_long_name";
  renamed.old_name = "mlx5_0";
  renamed.node_guid = std::string(40, 'g');  // on the heap
  const Record port = port_err(2, "mlx5_1");
  const RecordPtr fresh = publish_record(port);
  EXPECT_EQ(fresh->line, to_json(port) + "\n");

  auto spare = std::const_pointer_cast<PublishedRecord>(publish_record(renamed));
  const PublishedRecord* where = spare.get();
  const RecordPtr reused = publish_record(port, std::move(spare));
  EXPECT_EQ(reused.get(), where) << "built in the spare";
  EXPECT_EQ(reused->line, fresh->line);
  EXPECT_EQ(reused->seq, 2u);
  // Nothing of the renamed record is left.
  EXPECT_EQ(reused->event, EventKind::kPortErr);
  EXPECT_EQ(reused->device, "mlx5_1");
  EXPECT_EQ(reused->key().node_guid, "248a:0703:00a1:b2c0");
  EXPECT_EQ(reused->key().old_name, "");
  EXPECT_TRUE(reused->port_scoped);
  EXPECT_EQ(reused->port, 1u);
}

// The replay ring keeps thousands of lines: each holds about its own length, not room for a
// longer record, and a spare's buffer is reused when the line fits in it.
TEST(PublishedRecord, ALineBufferIsAsLongAsItsLine) {
  const Record port = port_err(7, "mlx5_0");
  const Record longer = port_err(8, "mlx5_with_a_much_longer_name_than_the_first");

  // New records: each line's buffer within 32 bytes of its length, whether the one before was
  // longer, shorter or the same.
  constexpr size_t kSlack = 32;
  std::vector<RecordPtr> kept;
  for (const Record* r : {&longer, &port, &port, &longer, &longer, &port}) {
    kept.push_back(publish_record(*r));
    EXPECT_EQ(kept.back()->line, to_json(*r) + "\n");
    EXPECT_LE(kept.back()->line.capacity(), kept.back()->line.size() + kSlack);
  }
  auto first = std::const_pointer_cast<PublishedRecord>(kept.back());
  kept.clear();

  // Longer than the spare's buffer: a new buffer, exactly as long.
  auto grown = std::const_pointer_cast<PublishedRecord>(publish_record(longer, std::move(first)));
  EXPECT_EQ(grown->line, to_json(longer) + "\n");
  EXPECT_EQ(grown->line.capacity(), grown->line.size());

  // Shorter: built in the same buffer.
  const char* buffer = grown->line.data();
  const size_t capacity = grown->line.capacity();
  const RecordPtr reused = publish_record(port, std::move(grown));
  EXPECT_EQ(reused->line, to_json(port) + "\n");
  EXPECT_EQ(reused->line.data(), buffer);
  EXPECT_EQ(reused->line.capacity(), capacity);
}

TEST(PublishedRecord, KeepsTheNodeGuidOfAnyLength) {
  Record r;
  r.device = "mlx5_0";
  for (const std::string& guid :
       {std::string(), std::string("248a:0703:00a1:b2c0"), std::string(InlineText::kInline, 'g'),
        std::string(InlineText::kInline + 1, 'g'), std::string(300, 'x')}) {
    r.node_guid = guid;
    EXPECT_EQ(make_published(r, "{}")->key().node_guid, guid);
  }
  InlineText t;  // reassigned: from the heap back inline, and out again
  t.assign(std::string(40, 'a'));
  t.assign("short");
  EXPECT_EQ(t.view(), "short");
  t.assign(std::string(40, 'b'));
  EXPECT_EQ(t.view(), std::string(40, 'b'));
}

TEST(RecordRing, KeepsTheLastCapacityRecordsOldestFirst) {
  RecordRing ring(3);
  EXPECT_TRUE(ring.empty());
  EXPECT_EQ(ring.first_seq(), 0u);
  EXPECT_EQ(ring.push(published(1)), nullptr);
  EXPECT_EQ(ring.push(published(2)), nullptr);
  EXPECT_EQ(ring.push(published(3)), nullptr);
  const RecordPtr out = ring.push(published(4));
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->seq, 1u);
  EXPECT_EQ(ring.size(), 3u);
  EXPECT_EQ(ring.first_seq(), 2u);
  EXPECT_EQ(ring.last_seq(), 4u);
  EXPECT_EQ(ring.at(0)->seq, 2u);
  EXPECT_EQ(ring.at(2)->seq, 4u);
}

TEST(RecordRing, LowerBoundFindsTheFirstRecordAtOrAfterASeq) {
  RecordRing ring(4);
  for (uint64_t seq : {10, 11, 13, 14, 15, 20})  // wraps: holds 13, 14, 15, 20
    ring.push(published(seq));
  EXPECT_EQ(ring.lower_bound(0), 0u);
  EXPECT_EQ(ring.lower_bound(13), 0u);
  EXPECT_EQ(ring.lower_bound(14), 1u);
  EXPECT_EQ(ring.lower_bound(16), 3u);
  EXPECT_EQ(ring.at(ring.lower_bound(16))->seq, 20u);
  EXPECT_EQ(ring.lower_bound(21), 4u);
}

TEST(RecordRing, ACapacityOfZeroKeepsNothing) {
  RecordRing ring(0);
  const RecordPtr p = published(1);
  EXPECT_EQ(ring.push(p), p);
  EXPECT_TRUE(ring.empty());
}

}  // namespace
}  // namespace rdma_eventd::daemon
