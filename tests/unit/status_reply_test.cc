// The status reply's body (schema/status_reply.h): written as docs/protocol.md shows it, read
// back whole, and refused, naming the key, when a key is missing or of the wrong type.
#include "schema/status_reply.h"

#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>

#include "port_fixtures.h"

namespace rdma_eventd {
namespace {

using nlohmann::json;

StatusReply sample() {
  StatusReply s;
  s.daemon = {"0.1.0", 1, "d5c4", "node17", 12153, 1795342530123456, 42};
  s.counters = {3, 3, 3, 3, 0, 1, 0};
  s.hotplug = {"rdma_netlink", 5, 1, 9, 2, true, {"rxe0"}};
  s.journal = {true, 3, 1, 0, 2, 4, 0, true, 4812, 2};
  s.ring = {4, 3, 1, 3};
  // count, max, accepted, refused (by reason), rate_limited, records sent and lost, notices,
  // bytes queued, request errors, then the limits.
  s.subscribers = {1, 1024, 2, 3, 1, 1, 1, 0, 4, 0, 0, 0, 0, 1048576, 4096, 128, 256, 100, {}};
  Filter filter{{EventKind::kPortErr}, {}, {*PortPattern::parse("mlx5_0/1", nullptr)}, {}};
  s.subscribers.list = {
      {2, true, 12155, 0, 1795342530500000, 3, 0, 0, 0, 0, 0, 2027, false, filter}};
  const PortInfo p = daemon::active_ib(1, 7);
  s.devices = {{"mlx5_0",
                "0c42:a103:00f6:5e44",
                {{p, 1, 2}},
                {"active", "port_module_event,temp_warn_event", "", 5, 1}}};
  s.event_counts.ports = {{"mlx5_0", 0, {{"device_added", 1}}, 0},
                          {"mlx5_0", 1, {{"port_active", 2}, {"port_err", 1}}, 1}};
  s.event_counts.untracked = 5;
  // socket, count, max, max per user, accepted, refused (by reason), rate_limited, request
  // errors, then one reporter.
  s.reporters = {"/run/rdma-eventd/events.sock.report", 1, 4096, 1024, 3, 2, 1, 1, 0, 1, 2, {}};
  s.reporters.list = {{3, 12160, 4242, 1795342530600000, 2, 1, 0, 177}};
  s.link_health = {true, 60, 120, 360, 1, 2, 1, 1, {}};
  s.link_health.ports = {{"mlx5_0",
                          1,
                          true,
                          "bit_errors",
                          1.5e-14,
                          "link_downed",
                          {{"link_downed", 255}, {"link_error_recovery", 0}, {"symbol_error", 12}},
                          "bad",
                          "read_hung",
                          1795342530700000}};
  // enabled, available, why not, notifications, dumps, overruns, malformed, records; then a
  // device's reporter in error and a port reporter.
  s.devlink = {true, true, "", 5, 2, 1, 0, 3, {}};
  s.devlink.reporters = {
      {"pci/0000:08:00.0", -1, "fw_fatal", "error", 2, 1, 1795342530700000, {"mlx5_0"}},
      {"netdevsim/netdevsim1", 0, "tx", "healthy", 0, 0, 1795342530123456, {"rxe0/1"}}};
  s.devlink.devlink_ports = {{"auxiliary/mlx5_core.eth.0", 65535, "ens1f0np0"},
                             {"netdevsim/netdevsim1", 0, "eni1np1"}};
  return s;
}

std::string reply_line(const StatusReply& s) {
  std::string out;
  JsonWriter w(out);
  w.begin_object();
  w.field("type", "reply");
  w.field("op", "status");
  w.field("seq", uint64_t{3});
  write_status(w, s);
  w.end_object();
  return out;
}

TEST(StatusReply, WritesEveryBlockAsDocumented) {
  EXPECT_EQ(json::parse(reply_line(sample())), json::parse(R"({
    "type":"reply","op":"status","seq":3,
    "daemon":{"version":"0.1.0","protocol":1,"stream":"d5c4","host":"node17","pid":12153,
              "started":"2026-11-22T10:15:30.123456Z","uptime_s":42},
    "counters":{"events_read":3,"events_acked":3,"records":3,"batches":3,"query_failures":0,
                "resyncs":1,"devices_waiting":0},
    "hotplug":{"source":"rdma_netlink","udev_events":5,"udev_overflows":1,"netlink_events":9,"netlink_overruns":2,
               "rescanning":true,"rescan_for":["rxe0"]},
    "journal":{"enabled":true,"written":3,"failed":1,"dropped":0,"queued":2,"waits":4,
               "stalls":0,"budget":true,"not_journaled":4812,"summaries":2},
    "ring":{"capacity":4,"records":3,"first_seq":1,"last_seq":3},
    "subscribers":{"count":1,"max":1024,"accepted":2,"refused":3,
                   "refused_by":{"max_subscribers":1,"max_subscribers_per_user":1,"access":1},
                   "rate_limited":0,"records_sent":4,"records_lost":0,"lost_notices":0,
                   "bytes_queued":0,"request_errors":0,"max_queued_bytes":1048576,
                   "max_request_bytes":4096,"max_subscribers_per_user":128,"max_filters":256,
                   "max_requests_per_second":100,
                   "list":[{"id":2,"self":true,"pid":12155,"uid":0,
                            "connected":"2026-11-22T10:15:30.500000Z","requests":3,
                            "rate_limited":0,"records_sent":0,"records_lost":0,
                            "lost_notices":0,"bytes_queued":0,"bytes_sent":2027,
                            "replaying":false,
                            "filter":{"events":["port_err"],"ports":["mlx5_0/1"]}}]},
    "devices":[{"device":"mlx5_0","node_guid":"0c42:a103:00f6:5e44",
                "ports":[{"port":1,"link_layer":"infiniband","state":"active",
                          "phys_state":"link_up","lid":7,"sm_lid":1,"sm_sl":0,"lmc":0,
                          "active_mtu":4096,"width":"4x","speed":"hdr","rate_gbps":200,
                          "gids":1,"pkeys":2}],
                "devx":{"state":"active","events":"port_module_event,temp_warn_event",
                        "reason":"","events_read":5,"events_lost":1}}],
    "reports":{"accepted":0,"denied":0,"rate_limited":0,"invalid":0,"max_per_second":0},
    "event_counts":{"ports":[{"device":"mlx5_0","port":0,"events":{"device_added":1},
                              "down_transitions":0},
                             {"device":"mlx5_0","port":1,
                              "events":{"port_active":2,"port_err":1},"down_transitions":1}],
                    "untracked":5},
    "reporters":{"socket":"/run/rdma-eventd/events.sock.report","count":1,"max":4096,
                 "max_per_user":1024,"accepted":3,"refused":2,
                 "refused_by":{"max_reporters":1,"max_reporters_per_user":1,"access":0},
                 "rate_limited":1,"request_errors":2,
                 "list":[{"id":3,"pid":12160,"uid":4242,"connected":"2026-11-22T10:15:30.600000Z",
                          "requests":2,"rate_limited":1,"bytes_queued":0,"bytes_sent":177}]},
    "link_health":{"enabled":true,"interval_s":60,"samples":120,"counter_reads":360,
                   "read_failures":1,"read_retries":2,"reads_hung":1,"reads_in_flight":1,
                   "ports":[{"device":"mlx5_0","port":1,"bad":true,"faults":"bit_errors",
                             "quality":"bad","unknown":"read_hung",
                             "since":"2026-11-22T10:15:30.700000Z",
                             "ber_estimate":1.5e-14,"pegged":"link_downed",
                             "counters":{"link_downed":255,"link_error_recovery":0,
                                         "symbol_error":12}}]},
    "devlink":{"enabled":true,"available":true,"unavailable":"","notifications":5,"dumps":2,
               "overruns":1,"malformed":0,"records":3,
               "reporters":[{"handle":"pci/0000:08:00.0","port_index":null,"reporter":"fw_fatal",
                             "state":"error","error_count":2,"recover_count":1,
                             "since":"2026-11-22T10:15:30.700000Z","ports":["mlx5_0"]},
                            {"handle":"netdevsim/netdevsim1","port_index":0,"reporter":"tx",
                             "state":"healthy","error_count":0,"recover_count":0,
                             "since":"2026-11-22T10:15:30.123456Z","ports":["rxe0/1"]}],
               "devlink_ports":[{"handle":"auxiliary/mlx5_core.eth.0","index":65535,
                                 "netdev":"ens1f0np0"},
                                {"handle":"netdevsim/netdevsim1","index":0,"netdev":"eni1np1"}]}
  })"));
}

TEST(StatusReply, ReadsBackWhatItWrites) {
  std::string error;
  const auto back = status_from_json(reply_line(sample()), &error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(*back, sample());

  StatusReply idle;  // no journal, no subscriber, no device, rescans
  const auto idle_back = status_from_json(reply_line(idle), &error);
  ASSERT_TRUE(idle_back) << error;
  EXPECT_EQ(*idle_back, idle);
}

// Rewrites one key of the sample's reply and returns the reader's error ("" when it reads).
std::string error_after(const std::function<void(json&)>& edit) {
  json j = json::parse(reply_line(sample()));
  edit(j);
  std::string error;
  return status_from_json(j.dump(), &error) ? "" : error;
}

TEST(StatusReply, AMissingOrMistypedKeyIsAnErrorThatNamesIt) {
  EXPECT_EQ(error_after([](json& j) { j["counters"].erase("records"); }),
            "counters.records: missing");
  EXPECT_EQ(error_after([](json& j) { j["journal"]["enabled"] = 1; }),
            "journal.enabled: not a boolean");
  EXPECT_EQ(error_after([](json& j) { j.erase("ring"); }), "ring: missing");
  EXPECT_EQ(error_after([](json& j) { j["hotplug"]["source"] = "netlink"; }),
            "hotplug.source: 'netlink' is none of rdma_netlink, udev, rescan");
  EXPECT_EQ(error_after([](json& j) { j["daemon"]["started"] = "yesterday"; }),
            "daemon.started: not an RFC 3339 UTC time with microseconds: 'yesterday'");
  EXPECT_EQ(error_after([](json& j) { j["subscribers"]["refused_by"].erase("access"); }),
            "subscribers.access: missing");
  EXPECT_EQ(error_after([](json& j) { j["subscribers"]["list"][0].erase("bytes_sent"); }),
            "subscribers.bytes_sent: missing");
  EXPECT_EQ(
      error_after([](json& j) { j["subscribers"]["list"][0]["filter"]["events"] = {"x"}; }),
      "subscribers.filter: events[0]: unknown event 'x' (port_active, port_err, lid_change, "
      "pkey_change, sm_change, client_reregister, gid_change, device_fatal, unknown, "
      "device_added, device_removed, device_renamed, device_recovered, port_state, app_report, "
      "port_health, module_plugged, module_unplugged, module_disabled, module_error, "
      "temperature_warning, pci_power_change, firmware_event, vendor_event, vendor_events_lost, "
      "link_quality, device_speed_change, devlink_health, devlink_events_lost)");
  EXPECT_EQ(error_after([](json& j) { j["devices"][0]["devx"].erase("events_lost"); }),
            "devices[0].events_lost: missing");
  EXPECT_EQ(error_after([](json& j) { j["devices"][0]["ports"][0].erase("pkeys"); }),
            "devices[0].pkeys: missing");
  EXPECT_EQ(error_after([](json& j) { j["devices"][0]["ports"][0]["state"] = "up"; }),
            "devices[0].state: bad value");
  EXPECT_EQ(error_after([](json& j) { j["devices"] = json::object(); }), "devices: not an array");
  EXPECT_EQ(error_after([](json& j) { j.erase("event_counts"); }), "event_counts: missing");
  EXPECT_EQ(error_after([](json& j) { j.erase("reporters"); }), "reporters: missing");
  EXPECT_EQ(error_after([](json& j) { j["reporters"]["refused_by"].erase("max_reporters"); }),
            "reporters.max_reporters: missing");
  EXPECT_EQ(error_after([](json& j) { j["reporters"]["list"][0]["bytes_sent"] = "177"; }),
            "reporters.bytes_sent: not an unsigned integer");
  // An older daemon's reply has no link_health: counter health off, nothing to show.
  EXPECT_EQ(error_after([](json& j) { j.erase("link_health"); }), "");
  EXPECT_EQ(error_after([](json& j) { j["link_health"].erase("samples"); }),
            "link_health.samples: missing");
  EXPECT_EQ(error_after([](json& j) { j["link_health"]["ports"][0]["ber_estimate"] = "low"; }),
            "link_health.ber_estimate: not a finite number >= 0");
  EXPECT_EQ(error_after([](json& j) { j["link_health"]["ports"][0].erase("ber_estimate"); }),
            "link_health.ber_estimate: missing");
  // Not known: null, read back as none.
  {
    StatusReply s = sample();
    s.link_health.ports[0].ber_estimate.reset();
    const std::string line = reply_line(s);
    EXPECT_NE(line.find(R"("ber_estimate":null)"), std::string::npos) << line;
    std::string error;
    const auto back = status_from_json(line, &error);
    ASSERT_TRUE(back) << error;
    EXPECT_EQ(back->link_health.ports[0].ber_estimate, std::nullopt);
  }
  EXPECT_EQ(error_after([](json& j) { j["link_health"]["ports"][0]["counters"]["x"] = -1; }),
            "link_health.counters.x: not a count");
  // An older daemon's reply has no devlink block; a reporter's port index is a number or null.
  EXPECT_EQ(error_after([](json& j) { j.erase("devlink"); }), "");
  // An older daemon's had no devlink ports.
  EXPECT_EQ(error_after([](json& j) { j["devlink"].erase("devlink_ports"); }), "");
  EXPECT_EQ(error_after([](json& j) { j["devlink"].erase("overruns"); }),
            "devlink.overruns: missing");
  EXPECT_EQ(error_after([](json& j) { j["devlink"]["reporters"][1]["port_index"] = "0"; }),
            "devlink.port_index: not an integer");
  EXPECT_EQ(error_after([](json& j) { j["devlink"]["reporters"][0]["ports"] = {1}; }),
            "devlink.ports: entry is not a string");
  // An older daemon's hotplug block has no RDMA netlink counters; a newer one has both.
  EXPECT_EQ(error_after([](json& j) {
              j["hotplug"].erase("netlink_events");
              j["hotplug"].erase("netlink_overruns");
            }),
            "");
  EXPECT_EQ(error_after([](json& j) { j["hotplug"].erase("netlink_overruns"); }),
            "hotplug.netlink_overruns: missing");
  // An older daemon's has no word of the rescan: it runs wherever udev does not, for no device
  // in particular.
  {
    json j = json::parse(reply_line(sample()));
    j["hotplug"].erase("rescanning");
    j["hotplug"].erase("rescan_for");
    std::string error;
    const auto old = status_from_json(j.dump(), &error);
    ASSERT_TRUE(old) << error;
    EXPECT_TRUE(old->hotplug.rescanning);
    EXPECT_TRUE(old->hotplug.rescan_for.empty());
  }
  // An older daemon's link health read on its loop, and had no unknown state.
  EXPECT_EQ(error_after([](json& j) {
              j["link_health"].erase("reads_hung");
              j["link_health"].erase("reads_in_flight");
              j["link_health"]["ports"][0].erase("quality");
              j["link_health"]["ports"][0].erase("unknown");
              j["link_health"]["ports"][0].erase("since");
            }),
            "");
  EXPECT_EQ(error_after([](json& j) { j["link_health"]["ports"][0].erase("unknown"); }),
            "link_health.unknown: missing");
  // An older daemon's link health gave up on every failed read: no retries.
  EXPECT_EQ(error_after([](json& j) { j["link_health"].erase("read_retries"); }), "");
  EXPECT_EQ(error_after([](json& j) { j["link_health"]["read_retries"] = -1; }),
            "link_health.read_retries: not an unsigned integer");
  EXPECT_EQ(error_after([](json& j) { j["hotplug"].erase("rescan_for"); }),
            "hotplug.rescan_for: missing");
  EXPECT_EQ(error_after([](json& j) { j["hotplug"]["rescan_for"] = {1}; }),
            "hotplug.rescan_for: entry is not a string");
  EXPECT_EQ(error_after([](json& j) { j["hotplug"]["rescanning"] = "yes"; }),
            "hotplug.rescanning: not a boolean");
  EXPECT_EQ(error_after([](json& j) { j["event_counts"]["ports"][1]["events"]["port_err"] = -1; }),
            "event_counts.events.port_err: not a count");
  EXPECT_EQ(error_after([](json& j) { j["event_counts"]["ports"][0].erase("down_transitions"); }),
            "event_counts.down_transitions: missing");
  std::string error;
  EXPECT_FALSE(status_from_json("[1]", &error));
  EXPECT_EQ(error, "status reply: not a JSON object");
}

}  // namespace
}  // namespace rdma_eventd
