#include "core/journal_entry.h"

#include <gtest/gtest.h>

#include <set>

#include "core/journal_native.h"
#include "rdma_eventd/internal/small_file.h"
#include "schema/record_text.h"

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

// The fields of the datagram the writer sends for `r`: its head, then the record's line.
std::vector<std::string> entry_fields(const Record& r, std::string datagram = {}) {
  append_journal_entry_head(datagram, r, "rdma-eventd");
  datagram += "{\"x\":1}\n";
  return native_fields(datagram);
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

TEST(Describe, ADeviceSpeedChangeSaysTheEffectiveSpeedOrThatItIsUnknown) {
  Record r;
  r.device = "mlx5_1";
  r.event = EventKind::kDeviceSpeedChange;
  r.event_type = 20;
  r.effective_speed = {{1, std::nullopt, "not_in_libibverbs"},
                       {2, std::nullopt, "not_in_libibverbs"}};
  EXPECT_EQ(describe(r),
            "mlx5_1: device speed change; effective speed unknown (libibverbs has no "
            "ibv_query_port_speed)");
  r.effective_speed = {{1, 400.0, ""}, {2, std::nullopt, "query_failed"}};
  EXPECT_EQ(describe(r),
            "mlx5_1: device speed change; effective speed: port 1 400 Gb/s, port 2 unknown (its "
            "query failed)");
  r.effective_speed = {{1, 200.0, ""}, {2, 12.5, ""}};
  EXPECT_EQ(describe(r),
            "mlx5_1: device speed change; effective speed: port 1 200 Gb/s, port 2 12.5 Gb/s");
  r.effective_speed.clear();  // a record of a daemon before the key
  EXPECT_EQ(describe(r), "mlx5_1: device speed change; effective speed not read");
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
  const std::vector<std::string> want = {
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
  EXPECT_EQ(entry_fields(r), want);
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

TEST(NativeProtocol, AWriterThatFillsItsBufferManyTimesOverWritesEveryFieldWhole) {
  // The writer goes through a 2 KiB buffer: fields that cross its end, values larger than it,
  // framed and plain, after what the string held before, are each written whole, in order.
  // The protocol, written out plainly.
  const auto field = [](std::string_view key, std::string_view value) {
    std::string f(key);
    if (value.find('\n') == std::string_view::npos) return f + "=" + std::string(value) + "\n";
    f += '\n';
    for (int i = 0; i < 8; ++i)
      f += static_cast<char>((value.size() >> (8 * i)) & 0xff);
    return f + std::string(value) + "\n";
  };
  std::string got = "BEFORE=1\n";
  std::string want = got;
  {
    NativeFieldWriter w(got);
    for (const size_t size : {0, 1, 7, 100, 1000, 2030, 2047, 2048, 2049, 4100, 3, 9000, 5}) {
      const std::string value(size, static_cast<char>('a' + size % 26));
      std::string framed = value;
      if (!framed.empty()) framed[framed.size() / 2] = '\n';
      w.plain("PLAIN", value);
      w.text("TEXT", value);
      w.text("FRAMED", framed);
      w.raw("RAW=");
      want += field("PLAIN", value) + field("TEXT", value) + field("FRAMED", framed) + "RAW=";
    }
  }  // flushed when it goes
  ASSERT_EQ(got.size(), want.size());
  EXPECT_TRUE(got == want);
}

TEST(NativeProtocol, FieldsReadBackAsTheyWereWrittenAndACutShortOneEndsThem) {
  std::string d;
  append_native_field(d, "A", "1");
  append_native_field(d, "B", "two\nlines");
  append_plain_native_field(d, "C", "");
  append_native_field(d, "D", "\n");
  EXPECT_EQ(native_fields(d), (std::vector<std::string>{"A=1", "B=two\nlines", "C=", "D=\n"}));
  // Cut inside the framed value, inside its length, and before a field's newline.
  const size_t b_at = d.find("B\n");
  EXPECT_EQ(native_fields(d.substr(0, b_at + 12)), std::vector<std::string>{"A=1"});
  EXPECT_EQ(native_fields(d.substr(0, b_at + 5)), std::vector<std::string>{"A=1"});
  EXPECT_EQ(native_fields("A=1\nB=2"), std::vector<std::string>{"A=1"});
  // A length past the end.
  EXPECT_EQ(native_fields(std::string("K\n\xff\0\0\0\0\0\0\0x\n", 13)), std::vector<std::string>{});
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

  // Each kind's own fields, besides those every entry has.
  const std::vector<std::vector<std::string>> own = {
      {"RDMA_LINK_LAYER=infiniband", "RDMA_PORT_STATE=down", "RDMA_LID=0"},
      {"RDMA_REPORTER_PID=42", "RDMA_REPORTER_UID=1000", "RDMA_REPORTER_COMM=odd\nname",
       "RDMA_REPORTER_UNIT=j.service"},
      {"RDMA_LINK_LAYER=infiniband", "RDMA_PORT_STATE=down", "RDMA_LID=0", "RDMA_HEALTH=flapping",
       "RDMA_HEALTH_REASON=5 down transitions in 300 s"},
      {"RDMA_LINK_LAYER=infiniband", "RDMA_PORT_STATE=down", "RDMA_LID=0", "RDMA_VENDOR_TYPE=22",
       "RDMA_MODULE=0", "RDMA_MODULE_ERROR=bad_cable"},
  };
  for (size_t i = 0; i < records.size(); ++i) {
    const Record& r = records[i];
    std::string described = "kept: ";
    append_description(described, r);
    EXPECT_EQ(described, "kept: " + describe(r)) << "appended, never replacing";
    // What the writer sends: the head, then the record's line (its JSON and newline) as it is,
    // appended to what the buffer held.
    std::vector<std::string> want = {"PREVIOUS=kept",
                                     "MESSAGE=" + describe(r),
                                     "PRIORITY=" + std::to_string(syslog_priority(r.severity)),
                                     "MESSAGE_ID=" + std::string(message_id(r.event)),
                                     "SYSLOG_IDENTIFIER=rdma-eventd",
                                     "RDMA_EVENT=" + std::string(event_name(r.event)),
                                     "RDMA_EVENT_TYPE=" + std::to_string(r.event_type),
                                     "RDMA_SEVERITY=" + std::string(severity_name(r.severity)),
                                     "RDMA_DEVICE=mlx5_0",
                                     "RDMA_NODE_GUID=" + r.node_guid,
                                     "RDMA_PORT=" + std::to_string(r.port)};
    want.insert(want.end(), own[i].begin(), own[i].end());
    want.push_back("RDMA_SEQ=" + std::to_string(r.seq));
    want.push_back("RDMA_STREAM=s");
    want.push_back("RDMA_RECORD={\"x\":1}");
    EXPECT_EQ(entry_fields(r, "PREVIOUS=kept\n"), want) << event_name(r.event);
  }
  EXPECT_NE(describe(report).find("odd\nname"), std::string::npos)
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
  const internal::SmallFile file = internal::read_small_file(
      std::string(RDMA_EVENTD_SOURCE_DIR) + "/systemd/rdma-eventd.catalog", 1 << 20);
  ASSERT_TRUE(file.ok());
  const std::string& catalog = file.text;
  for (int i = 0; i < kEventKindCount; ++i) {
    const std::string header = "-- " + std::string(message_id(static_cast<EventKind>(i))) + "\n";
    EXPECT_NE(catalog.find(header), std::string::npos)
        << event_name(static_cast<EventKind>(i)) << " has no catalog entry";
  }
}

}  // namespace
}  // namespace rdma_eventd::daemon
