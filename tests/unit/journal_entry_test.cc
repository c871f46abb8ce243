#include "core/journal_entry.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

namespace rdma_eventd::daemon {
namespace {

PortInfo ib(PortState state, uint32_t lid) {
  PortInfo p;
  p.port = 1;
  p.link_layer = LinkLayer::kInfiniband;
  p.state = state;
  p.lid = lid;
  p.sm_lid = 1;
  p.lanes = 4;
  p.speed = LinkSpeed::kHdr;
  return p;
}

Record port_record(EventKind kind, PortInfo before, PortInfo after) {
  Record r;
  r.seq = 7;
  r.stream = "s";
  r.event = kind;
  r.device = "mlx5_0";
  r.node_guid = "248a:0703:00a1:b2c0";
  r.port = 1;
  r.previous = before;
  r.port_info = after;
  return r;
}

TEST(Describe, LinkDownSaysWhatItWas) {
  EXPECT_EQ(describe(port_record(EventKind::kPortErr, ib(PortState::kActive, 17),
                                 ib(PortState::kDown, 0))),
            "mlx5_0 port 1: link down (ACTIVE -> DOWN), was 200 Gb/s 4X HDR");
}

TEST(Describe, LinkDownThatAlreadyRecoveredSaysSo) {
  EXPECT_EQ(describe(port_record(EventKind::kPortErr, ib(PortState::kActive, 17),
                                 ib(PortState::kActive, 17))),
            "mlx5_0 port 1: link down, already back up when queried (ACTIVE -> ACTIVE), "
            "200 Gb/s 4X HDR");
}

TEST(Describe, LinkUpLidAndSm) {
  EXPECT_EQ(describe(port_record(EventKind::kPortActive, ib(PortState::kDown, 0),
                                 ib(PortState::kActive, 17))),
            "mlx5_0 port 1: link up (DOWN -> ACTIVE), 200 Gb/s 4X HDR, LID 17");
  EXPECT_EQ(describe(port_record(EventKind::kLidChange, ib(PortState::kActive, 17),
                                 ib(PortState::kActive, 23))),
            "mlx5_0 port 1: LID changed 17 -> 23");
  PortInfo new_sm = ib(PortState::kActive, 17);
  new_sm.sm_lid = 5;
  EXPECT_EQ(describe(port_record(EventKind::kSmChange, ib(PortState::kActive, 17), new_sm)),
            "mlx5_0 port 1: subnet manager changed, SM LID 1 -> 5 (SL 0)");
}

TEST(Describe, GidAndPkeyChangesListTheEntries) {
  Record g =
      port_record(EventKind::kGidChange, ib(PortState::kActive, 0), ib(PortState::kActive, 0));
  g.gids_added = {{3, "::ffff:192.168.1.5", GidType::kRoceV2, "ens1f0"}};
  g.gids_removed = {{4, "fe80::2", GidType::kIb, ""}};
  EXPECT_EQ(describe(g),
            "mlx5_0 port 1: GID table changed: added ::ffff:192.168.1.5 (RoCE v2, ens1f0) at "
            "index 3; removed fe80::2 (IB) at index 4");
  Record p =
      port_record(EventKind::kPkeyChange, ib(PortState::kActive, 0), ib(PortState::kActive, 0));
  p.pkeys_added = {{2, 0x8002}};
  EXPECT_EQ(describe(p), "mlx5_0 port 1: P_Key table changed: added 0x8002 at index 2");
}

TEST(Describe, DeviceFatalListsEveryPortsLastState) {
  Record r;
  r.event = EventKind::kDeviceFatal;
  r.device = "mlx5_0";
  PortInfo p2 = ib(PortState::kDown, 0);
  p2.port = 2;
  r.ports = {ib(PortState::kActive, 17), p2};
  EXPECT_EQ(describe(r),
            "mlx5_0: device fatal error, last known: port 1 ACTIVE 200 Gb/s 4X HDR, port 2 DOWN");
}

TEST(Describe, DeviceLifeSaysWhatHappenedToTheDevice) {
  Record r;
  r.device = "mlx5_0";
  r.node_guid = "248a:0703:00a1:b2c0";
  r.event = EventKind::kDeviceAdded;
  EXPECT_EQ(describe(r), "mlx5_0: device added (node GUID 248a:0703:00a1:b2c0)");
  r.event = EventKind::kDeviceRemoved;
  r.ports = {ib(PortState::kActive, 17)};
  EXPECT_EQ(describe(r), "mlx5_0: device removed, last known: port 1 ACTIVE 200 Gb/s 4X HDR");
  r.event = EventKind::kDeviceRenamed;
  r.old_name = "mlx5_3";
  EXPECT_EQ(describe(r), "mlx5_3: device renamed to mlx5_0");
  r.event = EventKind::kDeviceRecovered;
  r.fatal_seq = 12;
  r.downtime_ms = 850;
  EXPECT_EQ(describe(r), "mlx5_0: device recovered after 850 ms (fatal error at seq 12)");
  r.downtime_ms = 12500;
  EXPECT_EQ(describe(r), "mlx5_0: device recovered after 12.5 s (fatal error at seq 12)");
  r.downtime_ms = 200000;
  EXPECT_EQ(describe(r), "mlx5_0: device recovered after 3 min 20 s (fatal error at seq 12)");
}

TEST(Describe, PortStateSaysTheStateAndWhatItWasWhenItDiffers) {
  EXPECT_EQ(describe(port_record(EventKind::kPortState, ib(PortState::kActive, 17),
                                 ib(PortState::kActive, 17))),
            "mlx5_0 port 1: ACTIVE, 200 Gb/s 4X HDR, LID 17");
  EXPECT_EQ(describe(port_record(EventKind::kPortState, ib(PortState::kActive, 17),
                                 ib(PortState::kDown, 0))),
            "mlx5_0 port 1: DOWN, 200 Gb/s 4X HDR, LID 0, was ACTIVE 200 Gb/s 4X HDR, LID 17");
}

TEST(JournalFields, CarryTheDocumentedKeysAndTheWholeRecord) {
  Record r = port_record(EventKind::kPortErr, ib(PortState::kActive, 17), ib(PortState::kDown, 0));
  r.severity = Severity::kError;
  r.event_type = 10;
  const auto fields = journal_fields(r, "{\"x\":1}", "rdma-eventd");
  const std::set<std::string> got(fields.begin(), fields.end());
  const std::set<std::string> want = {
      "MESSAGE=mlx5_0 port 1: link down (ACTIVE -> DOWN), was 200 Gb/s 4X HDR",
      "PRIORITY=3",
      "MESSAGE_ID=11b9171c80eb4233a8a8a39e9b93196c",
      "SYSLOG_IDENTIFIER=rdma-eventd",
      "RDMA_EVENT=port_err",
      "RDMA_EVENT_TYPE=10",
      "RDMA_SEVERITY=error",
      "RDMA_DEVICE=mlx5_0",
      "RDMA_NODE_GUID=248a:0703:00a1:b2c0",
      "RDMA_PORT=1",
      "RDMA_LINK_LAYER=infiniband",
      "RDMA_PORT_STATE=down",
      "RDMA_LID=0",
      "RDMA_SEQ=7",
      "RDMA_STREAM=s",
      "RDMA_RECORD={\"x\":1}",
  };
  EXPECT_EQ(got, want);
}

TEST(MessageIds, AreDistinct32HexDigits) {
  std::set<std::string_view> seen;
  for (int i = 0; i < kEventKindCount; ++i) {
    auto id = message_id(static_cast<EventKind>(i));
    EXPECT_EQ(id.size(), 32u);
    EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string_view::npos);
    seen.insert(id);
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(kEventKindCount));
}

}  // namespace
}  // namespace rdma_eventd::daemon

namespace rdma_eventd::daemon {
namespace {

TEST(Catalog, ExplainsEveryMessageId) {
  // journalctl -x finds an entry's explanation by MESSAGE_ID: every id needs its section.
  std::ifstream in(std::string(RDMA_EVENTD_SOURCE_DIR) + "/systemd/rdma-eventd.catalog");
  ASSERT_TRUE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string catalog = ss.str();
  for (int i = 0; i < kEventKindCount; ++i) {
    const std::string header = "-- " + std::string(message_id(static_cast<EventKind>(i))) + "\n";
    EXPECT_NE(catalog.find(header), std::string::npos)
        << event_name(static_cast<EventKind>(i)) << " has no catalog entry";
  }
}

}  // namespace
}  // namespace rdma_eventd::daemon
