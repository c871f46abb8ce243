// The texts people read (schema/record_text.h): the pieces both the journal's MESSAGE and
// rdma-eventctl use. The MESSAGE itself is pinned by journal_entry_test.cc.
#include "schema/record_text.h"

#include <gtest/gtest.h>

#include <cstdio>

#include "record_fixture.h"

namespace rdma_eventd {
namespace {

PortInfo edr_port(uint32_t number, PortState state) {
  PortInfo p;
  p.port = number;
  p.link_layer = LinkLayer::kEthernet;
  p.state = state;
  p.phys_state = state == PortState::kActive ? PhysState::kLinkUp : PhysState::kDisabled;
  p.active_mtu = 1024;
  p.lanes = 4;
  p.speed = LinkSpeed::kEdr;
  return p;
}

TEST(RecordText, ARateIsWrittenAsPrintfsPercentGWritesIt) {
  // Whole rates take a shortcut; every other one goes the general way. Both must be "%g".
  for (double gbps : {0.0, 1.0, 2.5, 5.0, 14.0625, 25.78125, 53.125, 56.25, 100.0, 106.25, 212.5,
                      400.0, 999999.0, 1000000.0, 1234567.0, 0.1, 1.0 / 3.0}) {
    char want[32];
    std::snprintf(want, sizeof want, "%g", gbps);
    EXPECT_EQ(gbps_text(gbps), want);
  }
  EXPECT_EQ(gbps_text(56.25), "56.25");
  EXPECT_EQ(gbps_text(1000000.0), "1e+06");
}

TEST(RecordText, RatesGidsPkeysAndDurations) {
  PortInfo p = edr_port(1, PortState::kActive);
  EXPECT_EQ(rate_text(p), "100 Gb/s 4X EDR");
  p.lanes = 1;
  p.speed = LinkSpeed::kSdr;
  EXPECT_EQ(rate_text(p), "2.5 Gb/s 1X SDR");
  p.speed = LinkSpeed::kUnknown;
  EXPECT_EQ(rate_text(p), "unknown rate");
  EXPECT_EQ(gid_text(GidEntry{4, "::ffff:10.1.2.3", GidType::kRoceV1, "ens1f1"}),
            "::ffff:10.1.2.3 (RoCE v1, ens1f1) at index 4");
  EXPECT_EQ(gid_text(GidEntry{0, "fe80::1", GidType::kIb, ""}), "fe80::1 (IB) at index 0");
  EXPECT_EQ(pkey_text(PkeyEntry{2, 0x8002}), "0x8002 at index 2");
  EXPECT_EQ(duration_text(999), "999 ms");
  EXPECT_EQ(duration_text(1000), "1.0 s");
  EXPECT_EQ(duration_text(61000), "1 min 1 s");
}

TEST(RecordText, FieldChangesNameEveryChangedFieldInWireOrderAsPeopleReadIt) {
  const PortInfo before = edr_port(2, PortState::kActive);
  PortInfo after = edr_port(2, PortState::kDown);
  after.lanes = 0;
  const std::vector<FieldChange> expected = {
      {"state", "ACTIVE", "DOWN"},
      {"phys_state", "link_up", "disabled"},
      {"width", "4x", "unknown"},
      {"rate_gbps", "100", "0"},
  };
  EXPECT_EQ(field_changes(before, after), expected);
  // The same fields changed_fields() names: one table drives both.
  std::vector<std::string_view> names;
  for (const auto& c : field_changes(before, after))
    names.push_back(c.name);
  EXPECT_EQ(names, changed_fields(before, after));
  EXPECT_TRUE(field_changes(before, before).empty());
}

// A state decoration, as rdma-eventctl's colours are one.
std::string bracketed(PortState s) {
  return "[" + plain_state_text(s) + "]";
}

TEST(RecordText, LastKnownStatesTakeTheCallersDecoration) {
  const std::vector<PortInfo> ports = {edr_port(1, PortState::kActive),
                                       edr_port(2, PortState::kDown)};
  EXPECT_EQ(last_known_text(ports), "port 1 ACTIVE 100 Gb/s 4X EDR, port 2 DOWN");
  EXPECT_EQ(last_known_text(ports, bracketed), "port 1 [ACTIVE] 100 Gb/s 4X EDR, port 2 [DOWN]");
  EXPECT_EQ(last_known_text({}), "no ports");
}

TEST(RecordText, SubjectAndEventMakeTheSentence) {
  Record fatal;
  fatal.event = EventKind::kDeviceFatal;
  fatal.device = "mlx5_1";
  EXPECT_EQ(subject_text(fatal), "mlx5_1");
  EXPECT_EQ(event_text(fatal), "device fatal error, last known: no ports");
  EXPECT_EQ(describe(fatal), "mlx5_1: device fatal error, last known: no ports");

  Record renamed;
  renamed.event = EventKind::kDeviceRenamed;
  renamed.device = "roce7";
  renamed.old_name = "mlx5_1";
  EXPECT_EQ(subject_text(renamed), "mlx5_1");
  EXPECT_EQ(event_text(renamed), "device renamed to roce7");

  // An event this version does not name: with a port block it says the port's state, without
  // one the raw element.
  Record unknown;
  unknown.event = EventKind::kUnknown;
  unknown.event_type = 21;
  unknown.device = "mlx5_0";
  unknown.port = 1;
  unknown.port_info = edr_port(1, PortState::kActive);
  unknown.previous = unknown.port_info;
  EXPECT_EQ(describe(unknown),
            "mlx5_0 port 1: async event type 21 (unknown to this version), port ACTIVE, "
            "100 Gb/s 4X EDR");
  EXPECT_EQ(event_text(unknown, bracketed),
            "async event type 21 (unknown to this version), port [ACTIVE], 100 Gb/s 4X EDR");
  unknown.port_info.reset();
  unknown.previous.reset();
  unknown.port = 9;
  EXPECT_EQ(describe(unknown), "mlx5_0: async event type 21 (unknown to this version), element 9");
}

TEST(RecordText, LinkQualitySaysWhatTheCountersShowed) {
  Record r = record_about(EventKind::kLinkQuality, Severity::kInfo, "mlx5_0", "", 1);
  r.link = LinkQualityEvent{.change = "bad",
                            .fault = "bit_errors",
                            .counter = "symbol_error",
                            .value = 1812,
                            .count = 4,
                            .allowed = 2,
                            .window_s = 720,
                            .rate_gbps = 400,
                            .ber = 4.0 / (400e9 * 720)};
  EXPECT_EQ(describe(r),
            "mlx5_0 port 1: link bad: bit_errors, symbol_error +4 in 720 s (at most 2 at 400 "
            "Gb/s), bit error rate 1.4e-14");
  r.link->change = "clean";
  EXPECT_EQ(describe(r),
            "mlx5_0 port 1: link clean again: bit_errors, symbol_error within its rule's "
            "allowance for the clean period");
  r.link->change = "pegged";
  r.link->fault.clear();
  r.link->value = 65535;
  EXPECT_EQ(describe(r),
            "mlx5_0 port 1: counter symbol_error at its maximum (65535): its errors are unknown "
            "until it is reset");
  r.link->change = "reset";
  r.link->value = 0;
  EXPECT_EQ(describe(r), "mlx5_0 port 1: counter symbol_error reset by another tool (now 0)");
  r.link->change = "hidden_down";
  r.link->counter = "hw_counters/link_downed";
  r.link->count = 2;
  r.link->value = 7;
  EXPECT_EQ(describe(r),
            "mlx5_0 port 1: 2 link downs too brief for an event (hw_counters/link_downed now 7), "
            "counted as downs");
}

TEST(RecordText, AnUnknownLinkQualitySaysWhyAndSinceWhenAndAJudgedOneEndsIt) {
  Record r = record_about(EventKind::kLinkQuality, Severity::kWarning, "mlx5_0", "", 1);
  const struct {
    LinkQualityEvent link;
    const char* text;
  } cases[] = {
      {{.change = "unknown",
        .counter = "symbol_error",
        .reason = "read_hung",
        .since_us = 1795342530123456},
       "mlx5_0 port 1: link quality unknown: a read of its counters has not returned "
       "(symbol_error) since 2026-11-22T10:15:30.123456Z"},
      {{.change = "unknown", .counter = "hw_counters/link_downed", .reason = "read_failing"},
       "mlx5_0 port 1: link quality unknown: its counters fail to read, read again after a "
       "backoff (hw_counters/link_downed)"},
      {{.change = "judged", .counter = "symbol_error", .reason = "read_hung"},
       "mlx5_0 port 1: link quality judged again: symbol_error read"},
  };
  for (const auto& c : cases) {
    r.link = c.link;
    EXPECT_EQ(describe(r), c.text);
  }
}

TEST(RecordText, PortHealthSaysTheVerdictWhatItWasAndWhy) {
  Record r = record_about(EventKind::kPortHealth, Severity::kInfo, "mlx5_0", "", 1);
  r.health = "flapping";
  r.previous_health = "healthy";
  r.reason = "flaps_in_window";
  r.downs_in_window = 5;
  r.window_s = 10;
  EXPECT_EQ(describe(r),
            "mlx5_0 port 1: health flapping (was healthy): flaps_in_window, 5 downs in 10 s");
  r.previous_health.clear();
  r.health = "healthy";
  r.reason = "first_seen";
  r.downs_in_window = 0;
  EXPECT_EQ(describe(r), "mlx5_0 port 1: health healthy: first_seen");
  r.previous_health = "healthy";
  r.health = "degraded";
  r.reason = "application_errors";
  r.errors_in_window = 10;
  EXPECT_EQ(
      describe(r),
      "mlx5_0 port 1: health degraded (was healthy): application_errors, 10 errors in window");
}

TEST(RecordText, DeviceRecordsAreTheFiveAboutADeviceAsAWhole) {
  int device_records = 0;
  for (int k = 0; k < kEventKindCount; ++k)
    device_records += is_device_record(static_cast<EventKind>(k));
  EXPECT_EQ(device_records, 5);
  EXPECT_TRUE(is_device_record(EventKind::kDeviceRecovered));
  EXPECT_FALSE(is_device_record(EventKind::kPortState));
}

}  // namespace
}  // namespace rdma_eventd
