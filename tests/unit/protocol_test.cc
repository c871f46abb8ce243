#include "rdma_eventd/protocol.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "record_fixture.h"
#include "schema/protocol_json.h"

namespace rdma_eventd {
namespace {

using nlohmann::json;

RequestError error_of(std::string_view line) {
  auto r = parse_request(line);
  EXPECT_TRUE(std::holds_alternative<RequestError>(r)) << line;
  return std::holds_alternative<RequestError>(r) ? std::get<RequestError>(r) : RequestError{};
}

Request request_of(std::string_view line) {
  auto r = parse_request(line);
  if (auto* e = std::get_if<RequestError>(&r)) ADD_FAILURE() << line << ": " << e->message;
  return std::holds_alternative<Request>(r) ? std::get<Request>(r) : Request{};
}

Filter filter_of(std::string_view line) {
  return request_of(line).filter;
}

TEST(ParseRequest, EveryOpWithAndWithoutAnId) {
  EXPECT_EQ(request_of(R"({"op":"ping"})"), (Request{Op::kPing}));
  EXPECT_EQ(request_of(R"({"op":"status","id":7})"), (Request{Op::kStatus, "7"}));
  EXPECT_EQ(request_of(R"({"op":"snapshot","id":"a b"})"), (Request{Op::kSnapshot, "\"a b\""}));
  Request since{Op::kSince, "", {}, 41, "abc"};
  EXPECT_EQ(request_of(R"({"op":"since","seq":41,"stream":"abc"})"), since);
  EXPECT_EQ(request_of(R"({"op":"subscribe"})"), (Request{Op::kSubscribe}));
  EXPECT_EQ(request_of(R"({"op":"inventory"})"), (Request{Op::kInventory}));
  Request retire{Op::kRetire};
  retire.adapter = "mlx5_0";
  EXPECT_EQ(request_of(R"({"op":"retire","adapter":"mlx5_0"})"), retire);
  EXPECT_EQ(request_of(request_json(retire)), retire);
}

TEST(ParseRequest, ARetireNamesOneAdapterInPrintableText) {
  EXPECT_EQ(error_of(R"({"op":"retire"})"),
            (RequestError{ErrorCode::kBadRequest, "adapter: missing", "", "retire"}));
  EXPECT_EQ(error_of(R"({"op":"retire","adapter":""})"),
            (RequestError{ErrorCode::kBadRequest, "adapter: expected a node GUID or a name", "",
                          "retire"}));
  EXPECT_EQ(error_of(R"({"op":"retire","adapter":"mlx5_0\u001b[2J"})"),
            (RequestError{ErrorCode::kBadRequest, "adapter: control characters are not allowed", "",
                          "retire"}));
  EXPECT_EQ(error_of(R"({"op":"inventory","adapter":"mlx5_0"})").message,
            "adapter: unknown key for inventory (known: op, id)");
}

TEST(ParseRequest, AFilterWithEveryKey) {
  const Filter f =
      filter_of(R"({"op":"subscribe","events":["port_err","port_active"],"devices":["mlx5_*"],)"
                R"("ports":["mlx5_0/1","0c42:a103:00f6:5e44/2"],"min_severity":"warning"})");
  EXPECT_EQ(f.events, (std::vector<EventKind>{EventKind::kPortErr, EventKind::kPortActive}));
  ASSERT_EQ(f.devices.size(), 1u);
  EXPECT_EQ(f.devices[0].text(), "mlx5_*");
  ASSERT_EQ(f.ports.size(), 2u);
  EXPECT_EQ(f.ports[0].text(), "mlx5_0/1");
  EXPECT_EQ(f.ports[1].port, 2u);
  EXPECT_EQ(f.min_severity, Severity::kWarning);
  EXPECT_EQ(filter_json(f),
            R"({"events":["port_err","port_active"],"devices":["mlx5_*"],)"
            R"("ports":["mlx5_0/1","0c42:a103:00f6:5e44/2"],"min_severity":"warning"})");
}

TEST(Protocol, NumbersTooLargeAndInvalidUtf8AreInvalidJsonNeverAnException) {
  EXPECT_EQ(error_of(R"({"op":"ping","id":1e400})"),
            (RequestError{ErrorCode::kInvalidJson, "invalid JSON: number overflow parsing '1e400'",
                          "", ""}));
  const RequestError utf8 = error_of("{\"op\":\"ping\",\"id\":\"\xff\"}");
  EXPECT_EQ(utf8.code, ErrorCode::kInvalidJson);
  EXPECT_NE(utf8.message.find("ill-formed UTF-8 byte"), std::string::npos) << utf8.message;
}

TEST(Protocol, EveryErrorCodeHasItsWireName) {
  const std::vector<std::string_view> names = {
      "invalid_json",     "bad_request",          "unknown_op",    "bad_filter",
      "request_too_long", "too_many_subscribers", "access_denied", "too_many_filters",
      "rate_limited",     "bad_report",           "report_denied", "too_many_reporters",
      "reports_only"};
  for (size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(error_code_name(static_cast<ErrorCode>(i)), names[i]);
    EXPECT_EQ(error_code_from_name(names[i]), static_cast<ErrorCode>(i));
  }
}

TEST(Protocol, TheReportSocketIsBesideTheEventsSocket) {
  // Derived from the events socket's path alone, so that a reporter finds it without asking.
  EXPECT_EQ(report_socket_path(kDefaultSocketPath), "/run/rdma-eventd/events.sock.report");
  EXPECT_EQ(report_socket_path("/tmp/d/x"), "/tmp/d/x.report");
}

TEST(ParseRequest, ErrorsNameWhatIsWrongAndEchoTheIdWhenThereIsOne) {
  RequestError e = error_of(R"({"op":"ping",)");
  EXPECT_EQ(e.code, ErrorCode::kInvalidJson);
  EXPECT_EQ(e.message.rfind("invalid JSON: parse error at line 1, column 14: syntax error", 0), 0u)
      << e.message;

  EXPECT_EQ(error_of("[1]"),
            (RequestError{ErrorCode::kBadRequest, "a request is a JSON object", "", ""}));
  EXPECT_EQ(error_of(R"({"id":3})"),
            (RequestError{ErrorCode::kBadRequest,
                          "op: missing (subscribe, snapshot, since, status, ping, report, health, "
                          "inventory, retire)",
                          "3", ""}));
  EXPECT_EQ(error_of(R"({"op":5})"),
            (RequestError{ErrorCode::kBadRequest, "op: expected a string", "", ""}));
  EXPECT_EQ(
      error_of(R"({"op":"dance","id":"x"})"),
      (RequestError{ErrorCode::kUnknownOp,
                    "unknown op 'dance' (subscribe, snapshot, since, status, ping, report, health, "
                    "inventory, retire)",
                    "\"x\"", ""}));
  EXPECT_EQ(error_of(R"({"op":"ping","idd":1})"),
            (RequestError{ErrorCode::kBadRequest, "idd: unknown key for ping (known: op, id)", "",
                          "ping"}));
  EXPECT_EQ(error_of(R"({"op":"ping","id":[1]})").message,
            "id: expected an integer or a string of at most 128 characters");
  EXPECT_EQ(error_of(R"({"op":"since","id":1})"),
            (RequestError{ErrorCode::kBadRequest, "seq: missing", "1", "since"}));
  EXPECT_EQ(error_of(R"({"op":"since","seq":-1})").message, "seq: expected an unsigned integer");
  EXPECT_EQ(error_of(R"({"op":"since","seq":1,"stream":2})").message, "stream: expected a string");
}

TEST(ParseRequest, BadFiltersAreBadFilterErrors) {
  auto bad = [](std::string_view line, std::string_view message) {
    const RequestError e = error_of(line);
    EXPECT_EQ(e.code, ErrorCode::kBadFilter) << line;
    EXPECT_EQ(e.op, "subscribe");
    EXPECT_EQ(e.message, message);
  };
  bad(R"({"op":"subscribe","events":["port_down"]})",
      "events[0]: unknown event 'port_down' (port_active, port_err, lid_change, pkey_change, "
      "sm_change, client_reregister, gid_change, device_fatal, unknown, device_added, "
      "device_removed, device_renamed, device_recovered, port_state, app_report, port_health, "
      "module_plugged, module_unplugged, module_disabled, module_error, temperature_warning, "
      "pci_power_change, firmware_event, vendor_event, vendor_events_lost, link_quality, "
      "device_speed_change, devlink_health, devlink_events_lost)");
  bad(R"({"op":"subscribe","events":"port_err"})", "events: expected an array of strings");
  bad(R"({"op":"subscribe","events":[]})",
      "events: empty list (leave the key out to match everything)");
  bad(R"({"op":"subscribe","devices":["mlx5_0",1]})", "devices[1]: expected a string");
  bad(R"({"op":"subscribe","devices":[""]})", "devices[0]: empty device pattern");
  bad(R"({"op":"subscribe","ports":["mlx5_0"]})",
      "ports[0]: 'mlx5_0': expected DEV/PORT, e.g. mlx5_0/1");
  bad(R"({"op":"subscribe","ports":["mlx5_0/0"]})",
      "ports[0]: 'mlx5_0/0': the port must be a number from 1 to 255");
  bad(R"({"op":"subscribe","ports":["mlx5_0/1x"]})",
      "ports[0]: 'mlx5_0/1x': the port must be a number from 1 to 255");
  bad(R"({"op":"subscribe","min_severity":"loud"})",
      "min_severity: unknown severity 'loud' (debug, info, notice, warning, error, critical)");
}

TEST(RequestJson, EveryRequestReadsBackTheSame) {
  Request sub{Op::kSubscribe, "12"};
  sub.filter = filter_of(
      R"({"op":"subscribe","events":["gid_change"],"ports":["mlx5_1/2"],"min_severity":"info"})");
  Request since{Op::kSince, "\"s\"", {}, 99, "0123abcd"};
  for (const Request& r : {sub, since, Request{Op::kPing}, Request{Op::kStatus, "3"}}) {
    EXPECT_EQ(request_of(request_json(r)), r) << request_json(r);
  }
  EXPECT_EQ(request_json(since), R"({"op":"since","id":"s","seq":99,"stream":"0123abcd"})");
}

RecordKey key(EventKind e, Severity s, std::string_view dev, uint32_t port, bool scoped = true) {
  return RecordKey{e, s, dev, "0c42:a103:00f6:5e44", port, scoped};
}

TEST(Filter, AnEmptyFilterMatchesEverything) {
  const Filter f;
  EXPECT_TRUE(f.matches_everything());
  EXPECT_TRUE(f.matches(key(EventKind::kUnknown, Severity::kDebug, "x", 0, false)));
  EXPECT_TRUE(f.matches_port("x", "", 9));
}

TEST(Filter, ListsCombineWithAndEntriesWithOr) {
  const Filter f =
      filter_of(R"({"op":"subscribe","events":["port_err","port_active"],"devices":["mlx5_*"],)"
                R"("min_severity":"notice"})");
  EXPECT_TRUE(f.matches(key(EventKind::kPortErr, Severity::kError, "mlx5_0", 1)));
  EXPECT_TRUE(f.matches(key(EventKind::kPortActive, Severity::kNotice, "mlx5_3", 2)));
  EXPECT_FALSE(f.matches(key(EventKind::kGidChange, Severity::kError, "mlx5_0", 1)));  // event
  EXPECT_FALSE(f.matches(key(EventKind::kPortErr, Severity::kInfo, "mlx5_0", 1)));     // severity
  EXPECT_FALSE(f.matches(key(EventKind::kPortErr, Severity::kError, "rxe0", 1)));      // device
}

TEST(Filter, DevicesByNameGlobOrNodeGuid) {
  const Filter f =
      filter_of(R"({"op":"subscribe","devices":["rxe0","mlx4_[01]","0x0c42a10300f65e44"]})");
  EXPECT_TRUE(f.matches(key(EventKind::kPortErr, Severity::kError, "rxe0", 1)));
  EXPECT_TRUE(f.matches(key(EventKind::kPortErr, Severity::kError, "mlx4_1", 1)));
  EXPECT_FALSE(
      f.matches(RecordKey{EventKind::kPortErr, Severity::kError, "mlx4_2", "1:2:3:4", 1, true}));
  // A device whose node GUID is listed matches under any name.
  EXPECT_TRUE(f.matches(key(EventKind::kPortErr, Severity::kError, "renamed", 1)));
  EXPECT_FALSE(f.matches(RecordKey{EventKind::kPortErr, Severity::kError, "rxe00", "", 1, true}));
}

TEST(Filter, PortsMatchTheirPortAndTheirDevicesDeviceWideRecords) {
  const Filter f = filter_of(R"({"op":"subscribe","ports":["mlx5_0/1","mlx5_1/2"]})");
  EXPECT_TRUE(f.matches(key(EventKind::kPortErr, Severity::kError, "mlx5_0", 1)));
  EXPECT_FALSE(f.matches(key(EventKind::kPortErr, Severity::kError, "mlx5_0", 2)));
  EXPECT_TRUE(f.matches(key(EventKind::kPortErr, Severity::kError, "mlx5_1", 2)));
  EXPECT_FALSE(f.matches(key(EventKind::kPortErr, Severity::kError, "mlx5_2", 1)));
  // device_fatal has no port block: it concerns every port of its device.
  EXPECT_TRUE(f.matches(key(EventKind::kDeviceFatal, Severity::kCritical, "mlx5_0", 0, false)));
  EXPECT_FALSE(f.matches(key(EventKind::kDeviceFatal, Severity::kCritical, "mlx5_2", 0, false)));
  EXPECT_TRUE(f.matches_port("mlx5_1", "", 2));
  EXPECT_FALSE(f.matches_port("mlx5_1", "", 1));
}

TEST(Filter, ARenameReachesFiltersOfTheOldNameAndTheNewOne) {
  Record renamed =
      record_about(EventKind::kDeviceRenamed, Severity::kNotice, "roce7", "0c42:a103:00f6:5e44");
  renamed.old_name = "mlx5_0";
  const RecordKey k = key_of(renamed);
  EXPECT_EQ(k.old_name, "mlx5_0");
  for (const char* f :
       {R"({"op":"subscribe","devices":["mlx5_0"]})", R"({"op":"subscribe","devices":["mlx5_*"]})",
        R"({"op":"subscribe","ports":["mlx5_0/1"]})", R"({"op":"subscribe","devices":["roce7"]})",
        R"({"op":"subscribe","ports":["roce*/2"]})"}) {
    EXPECT_TRUE(filter_of(f).matches(k)) << f;
  }
  for (const char* f : {R"({"op":"subscribe","devices":["mlx5_1"]})",
                        R"({"op":"subscribe","ports":["mlx5_1/1"]})"}) {
    EXPECT_FALSE(filter_of(f).matches(k)) << f;
  }
  // Only a rename carries the old name: another record of the new name is not the old device's.
  Record err = renamed;
  err.event = EventKind::kPortErr;
  EXPECT_EQ(key_of(err).old_name, "");
  EXPECT_FALSE(filter_of(R"({"op":"subscribe","devices":["mlx5_0"]})").matches(key_of(err)));
}

TEST(Filter, AHealthVerdictMatchesOnlyThePortItIsAbout) {
  Record verdict =
      record_about(EventKind::kPortHealth, Severity::kError, "mlx5_1", "0c42:a103:006d:0b3a", 2);
  verdict.health = "flapping";
  const RecordKey k = key_of(verdict);
  EXPECT_TRUE(filter_of(R"({"op":"subscribe","ports":["mlx5_1/2"]})").matches(k));
  EXPECT_TRUE(filter_of(R"({"op":"subscribe","devices":["mlx5_1"]})").matches(k));
  EXPECT_FALSE(filter_of(R"({"op":"subscribe","ports":["mlx5_1/1"]})").matches(k));
}

TEST(Filter, SnapshotRecordsIgnoreEventsAndSeverity) {
  const Filter f = filter_of(
      R"({"op":"subscribe","events":["port_err"],"min_severity":"critical","devices":["mlx5_0"]})");
  EXPECT_TRUE(f.matches_port("mlx5_0", "", 1));
  EXPECT_FALSE(f.matches_port("mlx5_1", "", 1));
}

PortSnapshot sample_snapshot() {
  PortSnapshot s;
  s.seq = 42;
  s.stream = "00112233445566778899aabbccddeeff";
  s.time_us = 1795000000123456;
  s.host = "node1";
  s.device = "mlx5_1";
  s.node_guid = "0c42:a103:006d:0b3a";
  s.port = PortInfo{.port = 1,
                    .link_layer = LinkLayer::kEthernet,
                    .state = PortState::kActive,
                    .phys_state = PhysState::kLinkUp,
                    .speed = LinkSpeed::kEdr,
                    .active_mtu = 1024,
                    .lanes = 4};
  s.gids = {{0, "fe80::e42:a1ff:fe6d:b3a", GidType::kRoceV1, "ens1f0"},
            {1, "fe80::e42:a1ff:fe6d:b3a", GidType::kRoceV2, "ens1f0"}};
  s.pkeys = {{0, 0xffff}};
  return s;
}

TEST(SnapshotRecord, HasTheCommonKeysThenThePortBlockAndTheTables) {
  const std::string text = to_json(sample_snapshot());
  EXPECT_EQ(text, R"({"schema":1,"seq":42,"stream":"00112233445566778899aabbccddeeff",)"
                  R"("time":"2026-11-18T11:06:40.123456Z","host":"node1","event":"snapshot",)"
                  R"("event_type":-1,"severity":"info","device":"mlx5_1",)"
                  R"("node_guid":"0c42:a103:006d:0b3a","port":1,"link_layer":"ethernet",)"
                  R"("state":"active","phys_state":"link_up","lid":0,"sm_lid":0,"sm_sl":0,"lmc":0,)"
                  R"("active_mtu":1024,"width":"4x","speed":"edr","rate_gbps":100,"changes":{},)"
                  R"("gids":[{"index":0,"gid":"fe80::e42:a1ff:fe6d:b3a","type":"roce_v1",)"
                  R"("netdev":"ens1f0"},{"index":1,"gid":"fe80::e42:a1ff:fe6d:b3a",)"
                  R"("type":"roce_v2","netdev":"ens1f0"}],"pkeys":[{"index":0,"pkey":"0xffff"}]})");
  std::string error;
  EXPECT_EQ(snapshot_from_json(text, &error), sample_snapshot()) << error;
}

TEST(ParseLine, TellsEveryKindApart) {
  std::string error;
  Record r = stamped(
      record_about(EventKind::kDeviceFatal, Severity::kCritical, "mlx5_0", "0c42:a103:00f6:5e44"),
      5, "s", 0, "h");
  r.event_type = 0;
  auto rec = parse_line(to_json(r), &error);
  ASSERT_TRUE(rec) << error;
  EXPECT_EQ(rec->kind(), MessageKind::kRecord);
  ASSERT_TRUE(rec->record());
  EXPECT_EQ(*rec->record(), r);
  EXPECT_EQ(rec->text(), to_json(r));

  auto snap = parse_line(to_json(sample_snapshot()), &error);
  ASSERT_TRUE(snap) << error;
  EXPECT_EQ(snap->kind(), MessageKind::kSnapshot);
  ASSERT_TRUE(snap->snapshot());
  EXPECT_EQ(*snap->snapshot(), sample_snapshot());

  const Hello hello{1, "0.1.0", "abc", "node1", 17, 4, 4096};
  EXPECT_EQ(hello_json(hello),
            R"({"type":"hello","protocol":1,"version":"0.1.0","stream":"abc","host":"node1",)"
            R"("seq":17,"subscriber":4,"max_request_bytes":4096})");
  auto h = parse_line(hello_json(hello), &error);
  ASSERT_TRUE(h) << error;
  EXPECT_EQ(h->kind(), MessageKind::kHello);
  ASSERT_TRUE(h->hello());
  EXPECT_EQ(*h->hello(), hello);
  // The report socket's hello names the connection a reporter, and not a subscriber.
  const Hello reporter_hello{1, "0.1.0", "abc", "node1", 17, 0, 4096, 5};
  EXPECT_EQ(hello_json(reporter_hello),
            R"({"type":"hello","protocol":1,"version":"0.1.0","stream":"abc","host":"node1",)"
            R"("seq":17,"reporter":5,"max_request_bytes":4096})");
  auto rh = parse_line(hello_json(reporter_hello), &error);
  ASSERT_TRUE(rh) << error;
  ASSERT_TRUE(rh->hello());
  EXPECT_EQ(*rh->hello(), reporter_hello);

  const Lost lost{10, 19, 7};
  EXPECT_EQ(lost_json(lost), R"({"type":"lost","first_seq":10,"last_seq":19,"records":7})");
  auto l = parse_line(lost_json(lost), &error);
  ASSERT_TRUE(l) << error;
  EXPECT_EQ(l->kind(), MessageKind::kLost);
  ASSERT_TRUE(l->lost());
  EXPECT_EQ(*l->lost(), lost);

  const RequestError err{ErrorCode::kBadFilter, "events[0]: unknown", "3", "subscribe"};
  EXPECT_EQ(error_json(err), R"({"type":"error","op":"subscribe","id":3,"error":"bad_filter",)"
                             R"("message":"events[0]: unknown"})");
  auto e = parse_line(error_json(err), &error);
  ASSERT_TRUE(e) << error;
  EXPECT_EQ(e->kind(), MessageKind::kError);
  ASSERT_TRUE(e->error());
  EXPECT_EQ(*e->error(), err);

  auto reply = parse_line(
      R"({"type":"reply","op":"since","id":"q","seq":9,"covered":false,"records":3})", &error);
  ASSERT_TRUE(reply) << error;
  EXPECT_EQ(reply->kind(), MessageKind::kReply);
  ASSERT_TRUE(reply->reply());
  EXPECT_EQ(*reply->reply(), (Reply{Op::kSince, "\"q\"", 9, false, 3}));

  EXPECT_FALSE(parse_line(R"({"type":"gossip"})", &error));
  EXPECT_EQ(error, "unknown line type 'gossip'");
  EXPECT_FALSE(parse_line("{\"schema\":1,", &error));
  EXPECT_FALSE(parse_line("nonsense", &error));
}

TEST(Message, OnlyTheAccessorOfItsKindAnswers) {
  // A reply is not a record: reading it as one gives nothing, not a default record.
  std::string error;
  auto reply = parse_line(R"({"type":"reply","op":"ping","id":1,"seq":4})", &error);
  ASSERT_TRUE(reply) << error;
  EXPECT_FALSE(reply->empty());
  EXPECT_EQ(reply->record(), nullptr);
  EXPECT_EQ(reply->snapshot(), nullptr);
  EXPECT_EQ(reply->hello(), nullptr);
  EXPECT_EQ(reply->error(), nullptr);
  EXPECT_EQ(reply->lost(), nullptr);
  ASSERT_NE(reply->reply(), nullptr);
  EXPECT_EQ(reply->reply()->seq, 4u);
  EXPECT_EQ(message_kind_name(reply->kind()), "reply");
}

TEST(Message, CopiesAreIndependentAndAMovedFromMessageIsEmpty) {
  std::string error;
  auto parsed = parse_line(lost_json(Lost{1, 2, 2}), &error);
  ASSERT_TRUE(parsed) << error;
  Message copy = *parsed;
  Message moved = std::move(*parsed);
  EXPECT_TRUE(parsed->empty());  // NOLINT(bugprone-use-after-move): what moving leaves is defined
  EXPECT_EQ(parsed->lost(), nullptr);
  EXPECT_EQ(parsed->text(), "");
  ASSERT_TRUE(copy.lost() && moved.lost());
  EXPECT_EQ(*copy.lost(), (Lost{1, 2, 2}));
  EXPECT_EQ(copy.text(), moved.text());
  EXPECT_NE(copy.lost(), moved.lost());

  const Message empty;
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(empty.record(), nullptr);
  EXPECT_EQ(empty.text(), "");
}

}  // namespace
}  // namespace rdma_eventd
