// Each request of protocol v1 against the real daemon: ping, subscribe, snapshot, since,
// status, and every kind of bad request.
#include <gtest/gtest.h>
#include <unistd.h>

#include <map>
#include <set>

#include "hub_support.h"
#include "namespaces.h"
#include "paths.h"

namespace rdma_eventd::subtest {
namespace {

using rdmatest::SimFabric;
using rdmatest::topology;

// Sends a ping with this id and returns every line up to and including its reply.
std::vector<json> sync(LineClient& c, int id) {
  c.send(json{{"op", "ping"}, {"id", id}}.dump() + "\n");
  return c.read_until(reply_to(id), 20s);
}

TEST(Requests, PingIsAnsweredInOrderWithTheCurrentSeqAndItsId) {
  SimFabric sim(topology("two-adapters"));
  HubDaemon d(sim);
  LineClient c(d.socket());
  EXPECT_EQ(c.require_json(10s)["type"], "hello");
  c.send(R"({"op":"ping","id":1})"
         "\n");
  EXPECT_EQ(c.require_json(10s), json::parse(R"({"type":"reply","op":"ping","id":1,"seq":0})"));
  inject(sim, {"port", "down", "mlx5_0/1"});
  EXPECT_EQ(c.require_json(10s)["seq"], 1);
  c.send(R"({"op":"ping","id":"a b"})"
         "\n"
         R"({"op":"ping"})"
         "\n");
  EXPECT_EQ(c.require_json(10s), json::parse(R"({"type":"reply","op":"ping","id":"a b","seq":1})"));
  EXPECT_EQ(c.require_json(10s), json::parse(R"({"type":"reply","op":"ping","seq":1})"));
}

TEST(Requests, SubscribeFiltersByEventDevicePortAndSeverity) {
  SimFabric sim(topology("two-adapters"));
  HubDaemon d(sim);
  LineClient all(d.socket()), by_port(d.socket()), by_severity(d.socket());
  for (LineClient* c : {&all, &by_port, &by_severity})
    EXPECT_EQ(c->require_json(10s)["type"], "hello");
  by_port.send(R"({"op":"subscribe","id":1,"events":["port_err","port_active"],)"
               R"("ports":["mlx5_0/1"]})"
               "\n");
  EXPECT_EQ(by_port.require_json(10s),
            json::parse(R"({"type":"reply","op":"subscribe","id":1,"seq":0,)"
                        R"("filter":{"events":["port_err","port_active"],"ports":["mlx5_0/1"]}})"));
  by_severity.send(R"({"op":"subscribe","id":1,"devices":["mlx5_[1]"],"min_severity":"notice"})"
                   "\n");
  EXPECT_EQ(by_severity.require_json(10s)["filter"],
            json::parse(R"({"devices":["mlx5_[1]"],"min_severity":"notice"})"));

  inject(sim, {"port", "down", "mlx5_0/1"});                                        // 1 error
  inject(sim, {"port", "up", "mlx5_0/1"});                                          // 2 notice
  inject(sim, {"gid", "add-ip", "mlx5_1/1", "192.168.1.5", "--netdev", "ens1f0"});  // 3, 4 info
  inject(sim, {"port", "down", "mlx5_1/2"});                                        // 5 error
  inject(sim, {"lid", "mlx5_0/1", "12"});                                           // 6 notice
  inject(sim, {"fatal", "mlx5_1"});                                                 // 7 critical
  wait_for_seq(d.socket(), 7);

  const std::vector<json> everything = live_records(sync(all, 9));
  ASSERT_EQ(seqs_of(everything), (std::vector<uint64_t>{1, 2, 3, 4, 5, 6, 7}));
  std::vector<std::string> events;
  for (const auto& r : everything)
    events.push_back(r["event"]);
  EXPECT_EQ(events, (std::vector<std::string>{"port_err", "port_active", "gid_change", "gid_change",
                                              "port_err", "lid_change", "device_fatal"}));
  // The filtered subscribers get exactly the matching records, byte for byte the same.
  EXPECT_EQ(live_records(sync(by_port, 9)), (std::vector<json>{everything[0], everything[1]}));
  EXPECT_EQ(live_records(sync(by_severity, 9)), (std::vector<json>{everything[4], everything[6]}));
}

// The simulator's own account of a port, in the schema's names.
json sim_port(const json& show, const std::string& device, int port) {
  for (const auto& d : show["devices"]) {
    if (d["name"] != device) continue;
    for (const auto& p : d["ports"]) {
      if (p["port"] == port) return p;
    }
  }
  return nullptr;
}

std::string schema_gid_type(const std::string& sim_type) {
  return sim_type == "roce-v1" ? "roce_v1" : sim_type == "roce-v2" ? "roce_v2" : sim_type;
}

TEST(Requests, SnapshotGivesEveryPortAsItIsNowThenTheLiveStream) {
  SimFabric sim(topology("two-adapters"));
  HubDaemon d(sim);
  inject(sim, {"port", "down", "mlx5_0/1"});
  inject(sim, {"gid", "add-ip", "mlx5_1/2", "10.0.0.9", "--netdev", "ens1f1"});
  inject(sim, {"pkey", "mlx5_0/1", "2", "0x8002"});
  wait_for_seq(d.socket(), 4);
  LineClient c(d.socket());
  EXPECT_EQ(c.require_json(10s)["seq"], 4);
  c.send(R"({"op":"snapshot","id":"s"})"
         "\n");
  EXPECT_EQ(c.require_json(10s),
            json::parse(R"({"type":"reply","op":"snapshot","id":"s","seq":4,"records":3})"));
  const json show = sim.show();
  std::set<std::string> ports;
  for (int i = 0; i < 3; ++i) {
    const json s = c.require_json(10s, "a snapshot record");
    const std::string where = s["device"].get<std::string>() + "/" + s["port"].dump();
    ports.insert(where);
    const json p = sim_port(show, s["device"], s["port"]);
    ASSERT_FALSE(p.is_null()) << where;
    EXPECT_EQ(s["schema"], 1);
    EXPECT_EQ(s["seq"], 4);
    EXPECT_EQ(s["stream"], d.stream());
    EXPECT_EQ(s["event"], "snapshot");
    EXPECT_EQ(s["event_type"], -1);
    EXPECT_EQ(s["severity"], "info");
    EXPECT_EQ(s["changes"], json::object());
    for (const char* key :
         {"state", "lid", "sm_lid", "sm_sl", "lmc", "link_layer", "speed", "width"}) {
      EXPECT_EQ(s[key], p[key]) << where << " " << key;
    }
    json gids = json::array();
    for (const auto& g : p["gids"]) {
      gids.push_back({{"index", g["index"]},
                      {"gid", g["gid"]},
                      {"type", schema_gid_type(g["type"])},
                      {"netdev", g.value("netdev", "")}});
    }
    EXPECT_EQ(s["gids"], gids) << where;
    EXPECT_EQ(s["pkeys"], p["pkeys"]) << where;
  }
  EXPECT_EQ(ports, (std::set<std::string>{"mlx5_0/1", "mlx5_1/1", "mlx5_1/2"}));
  inject(sim, {"port", "up", "mlx5_0/1"});
  const json next = c.require_json(10s);
  EXPECT_EQ(next["seq"], 5);
  EXPECT_EQ(next["event"], "port_active");

  // With a filter, only the ports it selects.
  c.send(R"({"op":"subscribe","id":1,"ports":["mlx5_1/2"]})"
         "\n"
         R"({"op":"snapshot","id":2})"
         "\n");
  const std::vector<json> lines = c.read_until(reply_to(2), 10s);
  EXPECT_EQ(lines.back()["records"], 1);
  const json only = c.require_json(10s);
  EXPECT_EQ(only["device"], "mlx5_1");
  EXPECT_EQ(only["port"], 2);
  EXPECT_EQ(only["gids"].size(), 6u);
}

TEST(Requests, SinceReplaysFromTheRingOrSaysItCannotAndSendsASnapshot) {
  SimFabric sim(topology("two-adapters"));
  HubDaemon d(sim, {.socket = R"("ring_records": 16)"});
  GreetedClient c(d);
  storm(sim, 40, "mlx5_0/1");
  c.read_until(record_with_seq(40), 20s);

  // Inside the ring: exactly the records after the seq, then the next reply.
  c.send(R"({"op":"since","id":1,"seq":30})"
         "\n");
  EXPECT_EQ(c.require_json(10s),
            json::parse(R"({"type":"reply","op":"since","id":1,"seq":40,"covered":true,)"
                        R"("first_seq":31,"last_seq":40})"));
  std::vector<json> lines = sync(c, 2);
  EXPECT_EQ(seqs_of(live_records(lines)),
            (std::vector<uint64_t>{31, 32, 33, 34, 35, 36, 37, 38, 39, 40}));
  EXPECT_EQ(lines.size(), 11u);

  // Up to date: nothing to replay.
  c.send(json{{"op", "since"}, {"id", 3}, {"seq", 40}, {"stream", d.stream()}}.dump() + "\n");
  EXPECT_EQ(c.require_json(10s)["covered"], true);
  EXPECT_EQ(sync(c, 4).size(), 1u);

  // Outside the ring (it holds 25-40 now), another stream, the future: a snapshot instead.
  const std::vector<std::pair<std::string, std::string>> uncovered = {
      {R"({"op":"since","id":5,"seq":5})", "evicted"},
      {R"({"op":"since","id":5,"seq":35,"stream":"0123"})", "stream"},
      {R"({"op":"since","id":5,"seq":41})", "future"}};
  for (const auto& [request, reason] : uncovered) {
    c.send(request + "\n");
    EXPECT_EQ(c.require_json(10s),
              json::parse(R"({"type":"reply","op":"since","id":5,"seq":40,"covered":false,)"
                          R"("reason":")" +
                          reason + R"(","ring_first_seq":25,"records":3})"))
        << request;
    for (int i = 0; i < 3; ++i) {
      const json s = c.require_json(10s);
      EXPECT_TRUE(is_snapshot(s)) << s.dump();
      EXPECT_EQ(s["seq"], 40);
    }
  }
  inject(sim, {"port", "down", "mlx5_1/1"});
  EXPECT_EQ(c.require_json(10s)["seq"], 41);
}

TEST(Requests, SinceReplaysOnlyWhatTheFilterSelects) {
  SimFabric sim(topology("two-adapters"));
  HubDaemon d(sim);
  GreetedClient c(d);
  storm(sim, 10, "mlx5_0/1,mlx5_1/1");
  std::vector<uint64_t> on_mlx5_1;
  for (const json& r : live_records(c.read_until(record_with_seq(10), 20s))) {
    if (r["device"] == "mlx5_1") on_mlx5_1.push_back(r["seq"]);
  }
  EXPECT_EQ(on_mlx5_1.size(), 5u);
  c.send(R"({"op":"subscribe","ports":["mlx5_1/1"]})"
         "\n"
         R"({"op":"since","seq":0})"
         "\n");
  EXPECT_EQ(seqs_of(live_records(sync(c, 1))), on_mlx5_1);
}

// The async events the simulator's stand-in saw this process read and ack, over its contexts.
struct SimEventCounts {
  uint64_t read = 0;
  uint64_t acked = 0;
};
SimEventCounts sim_event_counts(const SimFabric& sim, pid_t pid) {
  SimEventCounts n;
  const json stats = sim.stats();
  for (const auto& c : stats["contexts"]) {
    if (c["pid"] != pid) continue;
    n.read += c["read"].get<uint64_t>();
    n.acked += c["acked"].get<uint64_t>();
  }
  return n;
}

TEST(Requests, StatusReportsDaemonDevicesCountersAndSubscribers) {
  // udev "runs" here (/run/udev/control) in a network namespace of the test's own, where no
  // udev message comes: the hot-plug source is udev, and the one resync is the start's.
  rdmatest::enter_private_network();
  rdmatest::make_run_private();
  rdmatest::set_udev_running(true);
  SimFabric sim(topology("two-adapters"));
  HubDaemon d(sim);
  GreetedClient me(d), other(d);
  other.send(R"({"op":"subscribe","id":1,"events":["lid_change"]})"
             "\n");
  other.read_until(reply_to(1), 10s);
  inject(sim, {"port", "down", "mlx5_1/2"});
  me.read_until(record_with_seq(1), 10s);  // one batch each
  inject(sim, {"port", "up", "mlx5_1/2"});
  me.read_until(record_with_seq(2), 10s);
  me.send(R"({"op":"status","id":"st"})"
          "\n");
  const json st = me.read_until(reply_to("st"), 10s).back();
  EXPECT_EQ(st["seq"], 2);
  EXPECT_EQ(st["daemon"]["stream"], d.stream());
  EXPECT_EQ(st["daemon"]["protocol"], 1);
  EXPECT_EQ(st["daemon"]["pid"], d.process().pid());
  // Acks are counted where they are made; the stand-in counts them on its side.
  const SimEventCounts seen = sim_event_counts(sim, d.process().pid());
  EXPECT_EQ(seen.read, 2u);
  EXPECT_EQ(seen.acked, 2u);
  json counters = json::parse(R"({"events_read":2,"records":2,"batches":2,"query_failures":0,)"
                              R"("resyncs":1,"devices_waiting":0})");
  counters["events_acked"] = seen.acked;
  EXPECT_EQ(st["counters"], counters);
  EXPECT_EQ(st["hotplug"],
            json::parse(R"({"source":"udev","udev_events":0,"udev_overflows":0,"netlink_events":0,)"
                        R"("netlink_overruns":0,"rescanning":false,"rescan_for":[]})"));
  EXPECT_EQ(st["journal"], json::parse(R"({"enabled":false,"written":0,"failed":0,"dropped":0,)"
                                       R"("queued":0,"waits":0,"stalls":0,"budget":false,)"
                                       R"("not_journaled":0,"summaries":0})"));
  EXPECT_EQ(st["ring"], json::parse(R"({"capacity":4096,"records":2,"first_seq":1,"last_seq":2})"));
  const json& subs = st["subscribers"];
  EXPECT_EQ(subs["count"], 2);
  EXPECT_EQ(subs["max"], 1024);
  EXPECT_EQ(subs["accepted"], 2);
  EXPECT_EQ(subs["records_sent"], 2);  // me: 2; other: none matched
  EXPECT_EQ(subs["records_lost"], 0);
  ASSERT_EQ(subs["list"].size(), 2u);
  const json& mine = subs["list"][0];
  const json& theirs = subs["list"][1];
  EXPECT_EQ(mine["self"], true);
  EXPECT_EQ(mine["pid"], ::getpid());
  EXPECT_EQ(mine["records_sent"], 2);
  EXPECT_EQ(mine["requests"], 1);
  EXPECT_EQ(mine["filter"], json::object());
  EXPECT_EQ(theirs["self"], false);
  EXPECT_EQ(theirs["records_sent"], 0);
  EXPECT_EQ(theirs["filter"], json::parse(R"({"events":["lid_change"]})"));
  ASSERT_EQ(st["devices"].size(), 2u);
  EXPECT_EQ(st["devices"][0]["device"], "mlx5_0");
  EXPECT_EQ(st["devices"][0]["node_guid"], "0c42:a103:00f6:5e44");
  const json& roce = st["devices"][1];
  ASSERT_EQ(roce["ports"].size(), 2u);
  EXPECT_EQ(roce["ports"][1]["port"], 2);
  EXPECT_EQ(roce["ports"][1]["state"], "active");
  EXPECT_EQ(roce["ports"][1]["link_layer"], "ethernet");
  EXPECT_EQ(roce["ports"][1]["gids"], 4);
  EXPECT_EQ(roce["ports"][1]["pkeys"], 1);
}

TEST(Requests, EveryBadRequestIsAnsweredAndHarmsNoOne) {
  SimFabric sim(topology("two-adapters"));
  HubDaemon d(sim);
  GreetedClient bad(d), bystander(d);
  // {"type":"error", "op" (when known), "id" (when valid), "error", "message"}
  auto error = [](std::string op, json id, std::string code, std::string message) {
    json e = {{"type", "error"}, {"error", code}, {"message", message}};
    if (!op.empty()) e["op"] = op;
    if (!id.is_null()) e["id"] = id;
    return e;
  };
  const std::string ops =
      "(subscribe, snapshot, since, status, ping, report, health, inventory, retire)";
  const std::vector<std::pair<std::string, json>> cases = {
      {R"([1,2])", error("", nullptr, "bad_request", "a request is a JSON object")},
      {R"({"id":5})", error("", 5, "bad_request", "op: missing " + ops)},
      {R"({"op":"dance","id":6})", error("", 6, "unknown_op", "unknown op 'dance' " + ops)},
      {R"({"op":"subscribe","id":7,"events":["port_down"]})",
       error("subscribe", 7, "bad_filter",
             "events[0]: unknown event 'port_down' (port_active, port_err, lid_change, "
             "pkey_change, sm_change, client_reregister, gid_change, device_fatal, unknown, "
             "device_added, device_removed, device_renamed, device_recovered, port_state, "
             "app_report, port_health, module_plugged, module_unplugged, module_disabled, "
             "module_error, temperature_warning, pci_power_change, firmware_event, "
             "vendor_event, vendor_events_lost, link_quality, device_speed_change, "
             "devlink_health, devlink_events_lost)")},
      {R"({"op":"subscribe","id":8,"ports":["mlx5_0"]})",
       error("subscribe", 8, "bad_filter", "ports[0]: 'mlx5_0': expected DEV/PORT, e.g. mlx5_0/1")},
      {R"({"op":"subscribe","id":9,"min_severity":"loud"})",
       error("subscribe", 9, "bad_filter",
             "min_severity: unknown severity 'loud' (debug, info, notice, warning, error, "
             "critical)")},
      {R"({"op":"since","id":10})", error("since", 10, "bad_request", "seq: missing")},
      {R"({"op":"ping","id":11,"extra":1})",
       error("ping", 11, "bad_request", "extra: unknown key for ping (known: op, id)")},
      {R"({"op":"ping","id":{"a":1}})",
       error("", nullptr, "bad_request",
             "id: expected an integer or a string of at most 128 characters")},
  };
  for (const auto& [request, expected] : cases) {
    bad.send(request + "\n");
    EXPECT_EQ(bad.require_json(10s), expected) << request;
  }
  bad.send("this is not json\n");
  const json invalid = bad.require_json(10s);
  EXPECT_EQ(invalid["type"], "error");
  EXPECT_EQ(invalid["error"], "invalid_json");
  EXPECT_EQ(invalid["message"].get<std::string>().rfind("invalid JSON: parse error at line 1, "
                                                        "column 2",
                                                        0),
            0u)
      << invalid.dump();

  // The connection survived, its (never replaced) filter still selects everything, and the
  // bystander noticed nothing.
  inject(sim, {"port", "down", "mlx5_0/1"});
  const json record = bad.require_json(10s);
  EXPECT_EQ(record["seq"], 1);
  EXPECT_EQ(bystander.require_json(10s), record);
  bystander.send(R"({"op":"status","id":1})"
                 "\n");
  const json st = bystander.read_until(reply_to(1), 10s).back();
  EXPECT_EQ(st["subscribers"]["request_errors"], 10);
  EXPECT_EQ(st["subscribers"]["count"], 2);
}

TEST(Requests, ALineOverTheSizeLimitIsRefusedAndThenTheConnectionCloses) {
  SimFabric sim(topology("two-adapters"));
  HubDaemon d(sim, {.socket = R"("max_request_bytes": 256)"});
  const json too_long = json::parse(
      R"({"type":"error","error":"request_too_long","message":"a request line is longer than )"
      R"(socket.max_request_bytes (256 bytes); closing"})");
  GreetedClient bystander(d);
  {
    // A whole line over the limit: the request before it is still answered.
    GreetedClient c(d);
    c.send(R"({"op":"ping","id":1})"
           "\n" +
           std::string(300, ' ') + "{}\n");
    EXPECT_EQ(c.read_to_eof(10s),
              (std::vector<json>{json::parse(R"({"type":"reply","op":"ping","id":1,"seq":0})"),
                                 too_long}));
  }
  {
    // A line that never ends: refused as soon as it passes the limit.
    GreetedClient c(d);
    c.send(std::string(1000, 'x'));
    EXPECT_EQ(c.read_to_eof(10s), std::vector<json>{too_long});
  }
  inject(sim, {"port", "down", "mlx5_0/1"});
  EXPECT_EQ(bystander.require_json(10s)["seq"], 1);
}

TEST(Requests, AClientThatStopsSendingGetsItsRepliesThenTheEnd) {
  SimFabric sim(topology("two-adapters"));
  HubDaemon d(sim);
  storm(sim, 5, "mlx5_0/1");
  wait_for_seq(d.socket(), 5);
  GreetedClient c(d);
  c.send(R"({"op":"since","seq":2})"
         "\n"
         R"({"op":"ping"})");  // the last line may end at end of file
  c.shutdown_write();
  const std::vector<json> lines = c.read_to_eof(10s);
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[0]["op"], "since");
  EXPECT_EQ(seqs_of(live_records(lines)), (std::vector<uint64_t>{3, 4, 5}));
  EXPECT_EQ(lines[4], json::parse(R"({"type":"reply","op":"ping","seq":5})"));
}

}  // namespace
}  // namespace rdma_eventd::subtest
