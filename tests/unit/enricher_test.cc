#include "core/enricher.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <map>
#include <span>

#include "core/stamper.h"
#include "port_fixtures.h"
#include "record_fixture.h"
#include "schema/record_json.h"

namespace rdma_eventd::daemon {
namespace {

// A device whose answers the test sets, counting every query.
class FakeDevice : public DeviceQueries {
 public:
  explicit FakeDevice(uint32_t ports) : attrs(ports + 1), gids(ports), pkeys(ports + 1) {
    for (uint32_t p = 1; p <= ports; ++p) {
      attrs[p].info = active_ib(p, 16 + p);
      attrs[p].gid_tbl_len = 128;
      attrs[p].pkey_tbl_len = 4;
      pkeys[p] = {0xffff, 0, 0, 0};
    }
  }

  int query_port(uint32_t port, PortAttr& out) override {
    ++port_queries[port];
    if (port_error) return port_error;
    out = attrs.at(port);
    return 0;
  }
  int query_gids(std::span<const uint32_t> lens,
                 std::vector<std::vector<GidEntry>>& per_port) override {
    ++gid_queries;
    gid_tbl_lens.assign(lens.begin(), lens.end());
    per_port = gids;
    return 0;
  }
  int query_pkeys(uint32_t port, uint32_t len, std::vector<uint16_t>& out) override {
    ++pkey_queries[port];
    out = pkeys.at(port);
    out.resize(len);
    return 0;
  }
  // ibv_query_port_speed as the test sets it; none by default, as in rdma-core 44.
  EffectiveSpeed query_effective_speed(uint32_t port) override {
    ++speed_queries[port];
    return effective_speed_of(port, port_speed);
  }

  std::vector<PortAttr> attrs;               // index = port
  std::vector<std::vector<GidEntry>> gids;   // index = port - 1
  std::vector<std::vector<uint16_t>> pkeys;  // index = port
  std::map<uint32_t, int> port_queries;
  int gid_queries = 0;
  std::vector<uint32_t> gid_tbl_lens;  // as the last query_gids was given them
  std::map<uint32_t, int> pkey_queries;
  int port_error = 0;
  PortSpeedQuery port_speed;
  std::map<uint32_t, int> speed_queries;
};

class EnricherTest : public ::testing::Test {
 protected:
  EnricherTest() : stamper_("stream-1", "node17", default_severities()) {}

  void open(uint32_t ports) {
    dev_ = std::make_unique<FakeDevice>(ports);
    view_.name = "mlx5_0";
    view_.node_guid = 0x248a070300a1b2c0ull;
    ASSERT_TRUE(load_view(*dev_, ports, view_).empty());
    dev_->port_queries.clear();
    dev_->gid_queries = 0;
    dev_->pkey_queries.clear();
  }

  // Enriches, then stamps the records as the daemon does.
  BatchOutcome run(std::vector<RawEvent> events, FatalMeaning fatal = FatalMeaning::kFailure) {
    BatchOutcome out = enrich_batch(view_, events, *dev_, fatal);
    for (Record& r : out.records)
      stamper_.stamp(r, 1795342530123456);
    return out;
  }

  std::unique_ptr<FakeDevice> dev_;
  DeviceView view_;
  RecordStamper stamper_;
};

// A record as the test's device and stamper make it: the `seq`th of stream-1, made at the batch's
// time on node17, about mlx5_0 and its port `port` (0: the device).
Record device_record(uint64_t seq, EventKind event, int event_type, Severity severity,
                     uint32_t port) {
  Record r = stamped(record_about(event, severity, "mlx5_0", "248a:0703:00a1:b2c0", port), seq,
                     "stream-1", 1795342530123456, "node17");
  r.event_type = event_type;
  return r;
}

TEST_F(EnricherTest, PortErrorRecordCarriesStateAndWhatChanged) {
  // Given port 1 went down, the record shows the new state and old -> new for what changed.
  open(2);
  dev_->attrs[1].info.state = PortState::kDown;
  dev_->attrs[1].info.phys_state = PhysState::kPolling;
  dev_->attrs[1].info.lid = 0;
  dev_->attrs[1].info.sm_lid = 0;

  BatchOutcome out = run({{10, 1}});

  ASSERT_EQ(out.records.size(), 1u);
  const Record& r = out.records[0];
  EXPECT_EQ(r.event, EventKind::kPortErr);
  EXPECT_EQ(r.event_type, 10);
  EXPECT_EQ(r.severity, Severity::kError);
  EXPECT_EQ(r.device, "mlx5_0");
  EXPECT_EQ(r.node_guid, "248a:0703:00a1:b2c0");
  EXPECT_EQ(r.port, 1u);
  EXPECT_EQ(r.seq, 1u);
  EXPECT_EQ(r.stream, "stream-1");
  EXPECT_EQ(r.host, "node17");
  EXPECT_EQ(r.time_us, 1795342530123456);
  ASSERT_TRUE(r.port_info && r.previous);
  EXPECT_EQ(*r.port_info, dev_->attrs[1].info);
  EXPECT_EQ(*r.previous, active_ib(1, 17));
  EXPECT_EQ(changed_fields(*r.previous, *r.port_info),
            (std::vector<std::string_view>{"state", "phys_state", "lid", "sm_lid"}));
  EXPECT_EQ(view_.port(1)->info, dev_->attrs[1].info);  // the view moved forward
}

TEST_F(EnricherTest, ABurstQueriesEachAffectedPortOnce) {
  // Given 10,000 LID changes on port 1 and one on port 2 in one batch, each port is queried
  // once, and only the first record of each port carries the change.
  open(2);
  dev_->attrs[1].info.lid = 99;
  std::vector<RawEvent> burst(10000, RawEvent{11, 1});
  burst.push_back({11, 2});

  BatchOutcome out = run(burst);

  ASSERT_EQ(out.records.size(), 10001u);
  EXPECT_EQ(dev_->port_queries, (std::map<uint32_t, int>{{1, 1}, {2, 1}}));
  EXPECT_EQ(dev_->gid_queries, 0);
  EXPECT_TRUE(dev_->pkey_queries.empty());
  EXPECT_EQ(out.records[0].previous->lid, 17u);
  EXPECT_EQ(out.records[0].port_info->lid, 99u);
  EXPECT_EQ(*out.records[1].previous, *out.records[1].port_info);
  for (size_t i = 0; i < out.records.size(); ++i)
    EXPECT_EQ(out.records[i].seq, i + 1);
}

// The two entries the kernel adds for one IP address on ens1f0: RoCE v1 at index 2, RoCE v2 at
// index 3.
std::pair<GidEntry, GidEntry> roce_entries(const std::string& ip) {
  return {GidEntry{2, ip, GidType::kRoceV1, "ens1f0"}, GidEntry{3, ip, GidType::kRoceV2, "ens1f0"}};
}

TEST_F(EnricherTest, GidChangeReportsOneEntryPerEventInIndexOrder) {
  // Given a RoCE IP added (two entries, two GID_CHANGE events in one batch), each record
  // carries one of the entries, as the kernel sent one event per entry; one table query.
  open(1);
  const auto [v1, v2] = roce_entries("::ffff:192.168.1.5");
  dev_->gids[0] = {v1, v2};

  BatchOutcome out = run({{18, 1}, {18, 1}});

  ASSERT_EQ(out.records.size(), 2u);
  EXPECT_EQ(out.records[0].gids_added, (std::vector<GidEntry>{v1}));
  EXPECT_EQ(out.records[1].gids_added, (std::vector<GidEntry>{v2}));
  EXPECT_TRUE(out.records[0].gids_removed.empty());
  EXPECT_TRUE(out.records[1].gids_removed.empty());
  EXPECT_EQ(dev_->gid_queries, 1);
  EXPECT_EQ(view_.port(1)->gids, (std::vector<GidEntry>{v1, v2}));

  // Later, one entry goes away in its own batch.
  dev_->gids[0] = {v2};
  out = run({{18, 1}});
  EXPECT_EQ(out.records[0].gids_removed, (std::vector<GidEntry>{v1}));
  EXPECT_TRUE(out.records[0].gids_added.empty());
}

TEST_F(EnricherTest, MoreGidEntriesThanEventsGoToTheLastRecordAndNoneAreLost) {
  // Given four entries changed (an IP replaced) but only two events read in this batch, the
  // first record gets the first entry and the last record the rest.
  open(1);
  const auto [old_v1, old_v2] = roce_entries("::ffff:10.0.0.1");
  dev_->gids[0] = {old_v1, old_v2};
  run({{18, 1}, {18, 1}});
  const auto [new_v1, new_v2] = roce_entries("::ffff:10.0.0.2");
  dev_->gids[0] = {new_v1, new_v2};

  BatchOutcome out = run({{18, 1}, {18, 1}});

  ASSERT_EQ(out.records.size(), 2u);
  EXPECT_EQ(out.records[0].gids_removed, (std::vector<GidEntry>{old_v1}));
  EXPECT_TRUE(out.records[0].gids_added.empty());
  EXPECT_EQ(out.records[1].gids_added, (std::vector<GidEntry>{new_v1, new_v2}));
  EXPECT_EQ(out.records[1].gids_removed, (std::vector<GidEntry>{old_v2}));
}

TEST_F(EnricherTest, MoreEventsThanEntriesLeaveTheLaterRecordsEmpty) {
  open(1);
  const GidEntry v2 = roce_entries("::ffff:192.168.1.5").second;
  dev_->gids[0] = {v2};
  BatchOutcome out = run({{18, 1}, {18, 1}, {18, 1}});
  ASSERT_EQ(out.records.size(), 3u);
  EXPECT_EQ(out.records[0].gids_added, (std::vector<GidEntry>{v2}));
  EXPECT_TRUE(out.records[1].gids_added.empty());
  EXPECT_TRUE(out.records[2].gids_added.empty());
}

TEST_F(EnricherTest, PkeyChangeDiffsOnlyThePortThatChanged) {
  open(2);
  dev_->pkeys[2] = {0xffff, 0x8001, 0, 0};

  BatchOutcome out = run({{12, 2}});

  ASSERT_EQ(out.records.size(), 1u);
  EXPECT_EQ(out.records[0].pkeys_added, (std::vector<PkeyEntry>{{1, 0x8001}}));
  EXPECT_TRUE(out.records[0].pkeys_removed.empty());
  EXPECT_EQ(dev_->pkey_queries, (std::map<uint32_t, int>{{2, 1}}));
}

TEST_F(EnricherTest, DeviceFatalCarriesTheLastKnownStateWithoutQuerying) {
  open(2);
  dev_->attrs[2].info.state = PortState::kDown;  // not yet seen by the daemon
  BatchOutcome out = run({{8, 0}});
  ASSERT_EQ(out.records.size(), 1u);
  const Record& r = out.records[0];
  EXPECT_EQ(r.event, EventKind::kDeviceFatal);
  EXPECT_EQ(r.event_type, 8);
  EXPECT_EQ(r.severity, Severity::kCritical);
  EXPECT_EQ(r.port, 0u);
  EXPECT_FALSE(r.port_info);
  ASSERT_EQ(r.ports.size(), 2u);
  EXPECT_EQ(r.ports[0], active_ib(1, 17));
  EXPECT_EQ(r.ports[1], active_ib(2, 18));
  EXPECT_TRUE(dev_->port_queries.empty());
}

TEST_F(EnricherTest, ADeviceFatalThatIsARemovalBecomesDeviceRemovedWithTheLastKnownState) {
  // Given the device list showed the device gone, its DEVICE_FATAL is built as its removal:
  // a daemon record (type -1, port 0) with the removal's severity, and no query.
  open(2);
  BatchOutcome out = run({{10, 1}, {8, 0}}, FatalMeaning::kRemoval);
  ASSERT_EQ(out.records.size(), 2u);
  Record expected = device_record(2, EventKind::kDeviceRemoved, -1, Severity::kWarning, 0);
  expected.ports = {active_ib(1, 17), active_ib(2, 18)};
  EXPECT_TRUE(out.records[1] == expected) << to_json(out.records[1]);
  EXPECT_EQ(out.records[0].event, EventKind::kPortErr);
  EXPECT_EQ(dev_->port_queries, (std::map<uint32_t, int>{{1, 1}}));  // for the PORT_ERR only
}

TEST_F(EnricherTest, TheGidTableIsReadWithTheLengthsTheLastPortQueriesGave) {
  // The view holds each port's GID table length: one cache, handed to the table read.
  open(2);
  EXPECT_EQ(dev_->gid_tbl_lens, (std::vector<uint32_t>{128, 128}));
  dev_->attrs[2].gid_tbl_len = 256;
  run({{18, 2}});
  EXPECT_EQ(dev_->gid_tbl_lens, (std::vector<uint32_t>{128, 256}));
}

TEST_F(EnricherTest, UnknownTypeIsPublishedWithItsNumberAndPortState) {
  open(1);
  dev_->attrs[1].info.speed = LinkSpeed::kNdr;  // whatever a later kernel's type 21 would mean
  BatchOutcome out = run({{21, 1}, {1, 0xdeadbeef}});
  ASSERT_EQ(out.records.size(), 2u);
  EXPECT_EQ(out.records[0].event, EventKind::kUnknown);
  EXPECT_EQ(out.records[0].event_type, 21);
  EXPECT_EQ(out.records[0].severity, Severity::kWarning);
  ASSERT_TRUE(out.records[0].port_info);
  EXPECT_EQ(changed_fields(*out.records[0].previous, *out.records[0].port_info),
            (std::vector<std::string_view>{"speed", "rate_gbps"}));
  // An affiliated type (QP_FATAL) is decoded safely: no port, no state.
  EXPECT_EQ(out.records[1].event_type, 1);
  EXPECT_EQ(out.records[1].port, 0u);
  EXPECT_FALSE(out.records[1].port_info);
}

// The port_state record the daemon makes for a port whose attributes it found changed.
Record port_state_record(uint64_t seq, uint32_t port, const PortInfo& was, const PortInfo& now) {
  Record r = device_record(seq, EventKind::kPortState, -1, Severity::kInfo, port);
  r.previous = was;
  r.port_info = now;
  return r;
}

TEST_F(EnricherTest, ASpeedChangeRereadsEveryPortAndReportsEachThatChanged) {
  // Given a device of three ports where port 2 now runs at 1x and port 3 at EDR, one
  // DEVICE_SPEED_CHANGE (element 0) queries every port once and makes the device record, then
  // a port_state for ports 2 and 3, whose records carry the change; port 1 has none.
  open(3);
  dev_->attrs[2].info.lanes = 1;
  dev_->attrs[3].info.speed = LinkSpeed::kEdr;

  BatchOutcome out = run({{20, 0}});

  EXPECT_EQ(dev_->port_queries, (std::map<uint32_t, int>{{1, 1}, {2, 1}, {3, 1}}));
  EXPECT_EQ(dev_->gid_queries, 0);
  EXPECT_TRUE(dev_->pkey_queries.empty());
  ASSERT_EQ(out.records.size(), 3u);
  Record speed = device_record(1, EventKind::kDeviceSpeedChange, 20, Severity::kNotice, 0);
  speed.effective_speed = speeds_unknown(3);
  EXPECT_TRUE(out.records[0] == speed) << to_json(out.records[0]);
  const Record second = port_state_record(2, 2, active_ib(2, 18), dev_->attrs[2].info);
  EXPECT_TRUE(out.records[1] == second) << to_json(out.records[1]);
  const Record third = port_state_record(3, 3, active_ib(3, 19), dev_->attrs[3].info);
  EXPECT_TRUE(out.records[2] == third) << to_json(out.records[2]);
  EXPECT_EQ(view_.port(2)->info, dev_->attrs[2].info);  // the view moved forward
  EXPECT_EQ(view_.port(3)->info, dev_->attrs[3].info);
}

TEST_F(EnricherTest, ASpeedChangeThatChangedNoPortIsItsRecordAloneItsSpeedsUnknown) {
  // What mlx5 in link aggregation mostly sends: the effective speed changed, which is not
  // among ibv_query_port's attributes. Without ibv_query_port_speed (rdma-core 44) the record
  // says every port's is unknown, and no port_state is invented.
  open(2);
  BatchOutcome out = run({{20, 0}});
  EXPECT_EQ(dev_->port_queries, (std::map<uint32_t, int>{{1, 1}, {2, 1}}));
  EXPECT_EQ(dev_->speed_queries, (std::map<uint32_t, int>{{1, 1}, {2, 1}}));
  ASSERT_EQ(out.records.size(), 1u);
  EXPECT_EQ(out.records[0].event, EventKind::kDeviceSpeedChange);
  EXPECT_FALSE(out.records[0].port_info);
  EXPECT_EQ(out.records[0].effective_speed, speeds_unknown(2));
}

TEST_F(EnricherTest, ASpeedChangeCarriesEachPortsEffectiveSpeedWhereTheLibraryHasTheCall) {
  // A bond of two 200 Gb/s links: port 1 carries both (400), port 2's query fails. Two events
  // in one batch ask each port once, and both records carry the answers.
  open(2);
  dev_->port_speed = [](uint32_t port, uint64_t* speed) {
    *speed = 4000;
    return port == 1 ? 0 : EIO;
  };
  BatchOutcome out = run({{20, 0}, {20, 0}});
  EXPECT_EQ(dev_->speed_queries, (std::map<uint32_t, int>{{1, 1}, {2, 1}}));
  ASSERT_EQ(out.records.size(), 2u);
  const std::vector<EffectiveSpeed> want = {{1, 400.0, ""}, {2, std::nullopt, "query_failed"}};
  EXPECT_EQ(out.records[0].effective_speed, want);
  EXPECT_EQ(out.records[1].effective_speed, want);
  // A batch without a speed change asks nothing.
  run({{10, 1}});
  EXPECT_EQ(dev_->speed_queries, (std::map<uint32_t, int>{{1, 1}, {2, 1}}));
}

TEST_F(EnricherTest, APortChangeIsReportedOnceWhetherItsEventComesBeforeOrAfterASpeedChange) {
  // Port 1 went down and port 2 retrained at 2x. A PORT_ERR before the speed change carries
  // port 1's change, so the speed change reports port 2 only; a LID_CHANGE of port 2 after it
  // sees no change. Each port is queried once for the batch.
  open(2);
  dev_->attrs[1].info.state = PortState::kDown;
  dev_->attrs[2].info.lanes = 2;

  BatchOutcome out = run({{10, 1}, {20, 0}, {11, 2}, {20, 0}});

  EXPECT_EQ(dev_->port_queries, (std::map<uint32_t, int>{{1, 1}, {2, 1}}));
  ASSERT_EQ(out.records.size(), 5u);
  EXPECT_EQ(out.records[0].event, EventKind::kPortErr);
  EXPECT_EQ(changed_fields(*out.records[0].previous, *out.records[0].port_info),
            (std::vector<std::string_view>{"state"}));
  EXPECT_EQ(out.records[1].event, EventKind::kDeviceSpeedChange);
  const Record port2 = port_state_record(3, 2, active_ib(2, 18), dev_->attrs[2].info);
  EXPECT_TRUE(out.records[2] == port2) << to_json(out.records[2]);
  EXPECT_EQ(out.records[3].event, EventKind::kLidChange);
  EXPECT_EQ(*out.records[3].previous, *out.records[3].port_info);
  EXPECT_EQ(out.records[4].event, EventKind::kDeviceSpeedChange);  // the second: nothing new
}

TEST_F(EnricherTest, ASpeedChangeWhosePortQueryFailsKeepsThatPortsLastKnownState) {
  open(1);
  dev_->attrs[1].info.lanes = 1;
  dev_->port_error = EIO;
  BatchOutcome out = run({{20, 0}});
  ASSERT_EQ(out.records.size(), 1u);  // no port_state: nothing was learnt of the port
  EXPECT_EQ(out.records[0].event, EventKind::kDeviceSpeedChange);
  ASSERT_EQ(out.failures.size(), 1u);
  EXPECT_EQ(out.failures[0].what, QueryFailure::What::kPort);
  EXPECT_EQ(out.failures[0].port, 1u);
  EXPECT_EQ(view_.port(1)->info, active_ib(1, 17));
}

TEST_F(EnricherTest, AFailedQueryKeepsTheLastKnownStateAndIsReported) {
  open(1);
  dev_->port_error = EIO;
  BatchOutcome out = run({{10, 1}});
  ASSERT_EQ(out.records.size(), 1u);
  EXPECT_EQ(*out.records[0].port_info, active_ib(1, 17));
  ASSERT_EQ(out.failures.size(), 1u);
  EXPECT_EQ(out.failures[0].what, QueryFailure::What::kPort);
  EXPECT_EQ(out.failures[0].error, EIO);
}

TEST_F(EnricherTest, SeverityFollowsTheConfiguredMap) {
  open(1);
  SeverityMap m = default_severities();
  m[static_cast<size_t>(EventKind::kGidChange)] = Severity::kWarning;
  stamper_.set_severities(m);
  BatchOutcome out = run({{18, 1}});
  EXPECT_EQ(out.records[0].severity, Severity::kWarning);
}

// A record with every field set, as a batch before may have left it.
Record everything_set() {
  Record r;
  r.seq = 77;
  r.stream = std::string(40, 's');
  r.time_us = 1;
  r.host = std::string(40, 'h');
  r.event = EventKind::kAppReport;
  r.event_type = 3;
  r.severity = Severity::kCritical;
  r.device = std::string(40, 'd');
  r.node_guid = "ffff:ffff:ffff:ffff";
  r.port = 9;
  r.port_info = active_ib(9, 1);
  r.previous = active_ib(9, 2);
  r.gids_added = {GidEntry{1, "fe80::1", GidType::kRoceV2, "eth0"}};
  r.gids_removed = r.gids_added;
  r.pkeys_added = {{1, 0x8001}};
  r.pkeys_removed = r.pkeys_added;
  r.ports = {active_ib(1, 1)};
  r.old_name = "old";
  r.down_since_us = 5;
  r.downtime_ms = 6;
  r.fatal_seq = 7;
  r.object = "qp";
  r.object_id = 8;
  r.detail = "detail";
  r.reporter = Reporter{1, 2, 3, "comm", "unit", "cgroup"};
  r.health = "down";
  r.previous_health = "healthy";
  r.reason = "reason";
  r.since_us = 9;
  r.downs_in_window = 10;
  r.errors_in_window = 11;
  r.window_s = 12;
  r.quiet_s = 13;
  r.cause_seq = 14;
  r.vendor = VendorEvent{1, 2, "00", 3, "bad_cable", 4, {5}};
  return r;
}

TEST(ResetRecord, EveryFieldGoesBackToADefaultRecordsValue) {
  Record r = everything_set();  // every field differs from a new Record's
  reset_record(r);
  EXPECT_EQ(r, Record{});
}

TEST_F(EnricherTest, RecordsBuiltInRecycledOnesAreTheSameAsNewOnesAndKeepTheirBuffers) {
  // Given the records of an earlier batch handed back, the new batch's records are built in
  // them: once stamped (the stream and host are the stamper's to set: a recycled record keeps
  // them until then), equal to the records a batch without recycling builds, with nothing of
  // the old content left, and the GUID text written into the buffer the old record had.
  open(2);
  dev_->attrs[1].info.state = PortState::kDown;
  dev_->attrs[2].info.lanes = 1;  // the speed change's port_state is built in a recycled one
  dev_->gids[0] = {GidEntry{0, "fe80::248a:703:a1:b2c0", GidType::kIb, ""}};
  const std::vector<RawEvent> events = {{10, 1}, {18, 1}, {20, 0}, {12, 2}, {8, 0}};
  DeviceView fresh_view = view_;
  FakeDevice fresh_dev = *dev_;
  BatchOutcome expected = enrich_batch(fresh_view, events, fresh_dev);
  ASSERT_EQ(expected.records.size(), 6u);

  std::vector<Record> recycled(8, everything_set());  // more than the batch needs
  const void* guid_buffer = recycled[0].node_guid.data();
  BatchOutcome out =
      enrich_batch(view_, events, *dev_, FatalMeaning::kFailure, std::move(recycled));
  RecordStamper stamp_expected("44652e0f4db84037b3ef7fc0c6e8efef", "node17", default_severities());
  RecordStamper stamp_out("44652e0f4db84037b3ef7fc0c6e8efef", "node17", default_severities());
  for (Record& r : expected.records)
    stamp_expected.stamp(r, 1795342530000000);
  for (Record& r : out.records)
    stamp_out.stamp(r, 1795342530000000);

  ASSERT_EQ(out.records.size(), expected.records.size());
  for (size_t i = 0; i < out.records.size(); ++i)
    EXPECT_TRUE(out.records[i] == expected.records[i])
        << i << ": " << to_json(out.records[i]) << "\n"
        << to_json(expected.records[i]);
  EXPECT_EQ(out.records[0].node_guid.data(), guid_buffer);
}

TEST(EnrichScratch, KeptFromBatchToBatchOfTwoDevicesItChangesNothingInTheOutcome) {
  // One scratch for every batch, as the daemon keeps it, against a new one for each: batches
  // of two devices (2 and 4 ports, two GUIDs) in turns, with port, GID and P_Key changes, a
  // failed query and a fatal error, give the same records, failures and queries. The last
  // batch has GID and P_Key changes after one without: the scratch left from before serves.
  struct Device {
    FakeDevice dev;
    DeviceView view;
  };
  auto make = [](std::string name, uint64_t guid, uint32_t ports) {
    Device d{FakeDevice(ports), {}};
    d.view.name = std::move(name);
    d.view.node_guid = guid;
    EXPECT_TRUE(load_view(d.dev, ports, d.view).empty());
    return d;
  };
  std::vector<Device> kept = {make("mlx5_0", 0x248a070300a1b2c0ull, 2),
                              make("mlx5_1", 0x248a070300a1b2c8ull, 4)};
  std::vector<Device> fresh = kept;
  EnrichScratch scratch;

  // Changes the devices' answers before batch `step`, the same on both sides.
  auto change = [](std::vector<Device>& ds, int step) {
    FakeDevice& a = ds[0].dev;
    FakeDevice& b = ds[1].dev;
    switch (step) {
      case 1:
        a.attrs[1].info.state = PortState::kDown;
        a.gids[0] = {GidEntry{0, "fe80::248a:703:a1:b2c0", GidType::kIb, ""}};
        break;
      case 2:
        b.attrs[4].info.lid = 99;
        b.pkeys[3] = {0xffff, 0x8001, 0, 0};
        b.gids[2] = {GidEntry{1, "::ffff:192.168.1.5", GidType::kRoceV2, "ens1f0"}};
        break;
      case 3:
        a.attrs[1].info.state = PortState::kActive;
        a.pkeys[2] = {0xffff, 0x7fff, 0, 0};
        a.gids[0].clear();
        break;
      case 4:
        b.port_error = EIO;
        break;
      case 5:
        b.port_error = 0;
        b.attrs[1].info.state = PortState::kInit;
        break;
      case 6:
        a.gids[0] = {GidEntry{2, "fe80::248a:703:a1:b2c1", GidType::kIb, ""}};
        a.pkeys[2] = {0xffff, 0x8002, 0, 0};
        break;
    }
  };
  const std::vector<std::pair<size_t, std::vector<RawEvent>>> batches = {
      {0, {{10, 1}, {18, 1}, {12, 2}}},           // port_err, gid_change, pkey_change
      {1, {{11, 4}, {12, 3}, {18, 3}, {18, 3}}},  // lid_change, pkey_change, gid_change x2
      {0, {{9, 1}, {12, 2}, {18, 1}, {13, 2}}},   // port_active, pkey, gid, sm_change
      {1, {{10, 2}, {10, 4}}},                    // the port queries fail
      {1, {{10, 1}, {8, 0}}},                     // port_err, device_fatal
      {0, {{17, 2}}},                             // client_reregister
      {0, {{18, 1}, {12, 2}, {18, 1}}},           // after a batch with neither: gid, pkey, gid
  };
  for (size_t step = 0; step < batches.size(); ++step) {
    change(kept, static_cast<int>(step));
    change(fresh, static_cast<int>(step));
    const auto& [which, events] = batches[step];
    Device& k = kept[which];
    Device& f = fresh[which];
    const BatchOutcome got =
        enrich_batch(k.view, events, k.dev, FatalMeaning::kFailure, {}, &scratch);
    const BatchOutcome want = enrich_batch(f.view, events, f.dev);
    ASSERT_EQ(got.records.size(), want.records.size()) << "batch " << step;
    for (size_t i = 0; i < got.records.size(); ++i)
      EXPECT_TRUE(got.records[i] == want.records[i])
          << "batch " << step << ", record " << i << ": " << to_json(got.records[i]) << "\n"
          << to_json(want.records[i]);
    ASSERT_EQ(got.failures.size(), want.failures.size()) << "batch " << step;
    for (size_t i = 0; i < got.failures.size(); ++i) {
      EXPECT_EQ(got.failures[i].what, want.failures[i].what);
      EXPECT_EQ(got.failures[i].port, want.failures[i].port);
      EXPECT_EQ(got.failures[i].error, want.failures[i].error);
    }
    EXPECT_EQ(got.port_queries, want.port_queries) << "batch " << step;
    EXPECT_EQ(got.gid_queries, want.gid_queries) << "batch " << step;
    EXPECT_EQ(got.pkey_queries, want.pkey_queries) << "batch " << step;
  }
  // Both sides' views moved the same way.
  for (size_t d = 0; d < kept.size(); ++d) {
    for (uint32_t p = 1; p <= kept[d].view.num_ports(); ++p) {
      EXPECT_EQ(kept[d].view.port(p)->info, fresh[d].view.port(p)->info) << d << " " << p;
      EXPECT_EQ(kept[d].view.port(p)->gids, fresh[d].view.port(p)->gids) << d << " " << p;
      EXPECT_EQ(kept[d].view.port(p)->pkeys, fresh[d].view.port(p)->pkeys) << d << " " << p;
    }
  }
}

TEST_F(EnricherTest, FewerRecycledRecordsThanEventsAreToppedUpWithNewOnes) {
  open(1);
  std::vector<RawEvent> events(5, RawEvent{10, 1});
  BatchOutcome out = enrich_batch(view_, events, *dev_, FatalMeaning::kFailure,
                                  std::vector<Record>(2, everything_set()));
  ASSERT_EQ(out.records.size(), 5u);
  const Record recycled = everything_set();
  for (size_t i = 0; i < out.records.size(); ++i) {
    const Record& r = out.records[i];
    EXPECT_EQ(r.event, EventKind::kPortErr);
    // Unstamped: the two recycled ones still have the stream the stamper compares before it
    // writes its own, the new ones none; nothing else of the recycled record is left.
    EXPECT_EQ(r.stream, i < 2 ? recycled.stream : "");
    EXPECT_EQ(r.seq, 0u);
    EXPECT_FALSE(r.vendor);
  }
}

}  // namespace
}  // namespace rdma_eventd::daemon
