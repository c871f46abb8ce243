#include "core/journal_entry.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "core/journal_native.h"

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

TEST(NativeProtocol, AFieldWithoutANewlineIsKeyEqualsValueAndANewline) {
  std::string out;
  append_native_field(out, "RDMA_PORT", "1");
  append_native_field(out, "RDMA_HEALTH_REASON", "");
  append_native_field(out, "MESSAGE=a=b");  // split at the first '=' only
  EXPECT_EQ(out, "RDMA_PORT=1\nRDMA_HEALTH_REASON=\nMESSAGE=a=b\n");
  append_native_field(out, "NO_EQUALS_SIGN");
  EXPECT_EQ(out, "RDMA_PORT=1\nRDMA_HEALTH_REASON=\nMESSAGE=a=b\n") << "nothing to send";
}

TEST(NativeProtocol, APlainFieldIsWrittenAsItIs) {
  std::string out = "KEPT=1\n";
  append_plain_native_field(out, "RDMA_SEQ", "17");
  append_plain_native_field(out, "RDMA_EVENT", "");
  EXPECT_EQ(out, "KEPT=1\nRDMA_SEQ=17\nRDMA_EVENT=\n");
}

TEST(NativeProtocol, AValueWithANewlineGoesWithItsLengthInLittleEndian) {
  std::string out;
  append_native_field(out, "RDMA_REPORTER_COMM", "a\nb");
  EXPECT_EQ(out, std::string("RDMA_REPORTER_COMM\n\x03\0\0\0\0\0\0\0a\nb\n", 31));
  out.clear();
  const std::string long_value = std::string(300, 'x') + "\n";  // 301 = 0x012d
  append_native_field(out, "MESSAGE", long_value);
  EXPECT_EQ(out, std::string("MESSAGE\n\x2d\x01\0\0\0\0\0\0", 16) + long_value + "\n");
}

// The fields of a native datagram as "KEY=value" strings, read the way journald reads them.
std::vector<std::string> parse_native(std::string_view d) {
  std::vector<std::string> fields;
  while (!d.empty()) {
    const size_t nl = d.find('\n');
    const size_t eq = d.find('=');
    if (eq != std::string_view::npos && eq < nl) {
      fields.emplace_back(d.substr(0, nl));
      d.remove_prefix(nl + 1);
      continue;
    }
    const std::string_view key = d.substr(0, nl);
    uint64_t size = 0;
    for (int i = 7; i >= 0; --i)
      size = size << 8 | static_cast<unsigned char>(d[nl + 1 + i]);
    const std::string_view value = d.substr(nl + 9, size);
    EXPECT_EQ(d[nl + 9 + size], '\n');
    fields.push_back(std::string(key) + "=" + std::string(value));
    d.remove_prefix(nl + 9 + size + 1);
  }
  return fields;
}

TEST(JournalEntry, TheDatagramCarriesExactlyTheFieldsInTheirOrderForEveryKindOfRecord) {
  std::vector<Record> records;
  Record port =
      port_record(EventKind::kPortErr, ib(PortState::kActive, 17), ib(PortState::kDown, 0));
  port.severity = Severity::kError;
  port.event_type = 10;
  records.push_back(port);
  Record report;
  report.seq = 9;
  report.stream = "s";
  report.event = EventKind::kAppReport;
  report.event_type = 1;
  report.device = "mlx5_0";
  report.reporter = {.pid = 42, .uid = 1000, .gid = 1000, .comm = "odd\nname", .unit = "j.service"};
  report.detail = "job 17";
  records.push_back(report);
  Record health = port;
  health.event = EventKind::kPortHealth;
  health.health = "flapping";
  health.reason = "5 down transitions in 300 s";
  records.push_back(health);
  Record module = port;
  module.event = EventKind::kModuleError;
  module.vendor = VendorEvent{.type = 0x16, .module = 0, .error_type = "bad_cable"};
  records.push_back(module);

  for (const Record& r : records) {
    std::string described = "kept: ";
    append_description(described, r);
    EXPECT_EQ(described, "kept: " + describe(r)) << "appended, never replacing";
    // What the writer sends: the head, then the record's line (its JSON and newline) as it is.
    std::string datagram = "PREVIOUS=kept\n";  // appended to, never replaced
    append_journal_entry_head(datagram, r, "rdma-eventd");
    datagram += "{\"x\":1}\n";
    std::vector<std::string> want = journal_fields(r, "{\"x\":1}", "rdma-eventd");
    want.insert(want.begin(), "PREVIOUS=kept");
    EXPECT_EQ(parse_native(datagram), want) << event_name(r.event);
  }
  EXPECT_NE(journal_fields(report, "{}", "i")[0].find("odd\nname"), std::string::npos)
      << "the comm's newline is in the MESSAGE, so the datagram had to frame it by length";
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
