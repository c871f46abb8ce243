// mlx5 vendor events end to end: the simulator's DEVX event channels (its stand-in libmlx5)
// raise module, temperature, general and raw events; the real daemon reads them from its
// channel and publishes records, read back from its output, the subscriber socket and journald.
#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "daemon_process.h"
#include "harness.h"
#include "journal_sandbox.h"
#include "line_client.h"
#include "paths.h"
#include "test_support.h"

namespace rdma_eventd::test {
namespace {

using nlohmann::json;
using rdmatest::SimFabric;
using rdmatest::topology;

// A vendor record of the two-adapter topology, as the daemon writes it (stable part).
json vendor(const std::string& event, const std::string& severity, const std::string& device,
            int type, int subtype, const std::string& data, json extra = json::object()) {
  json r = record(event, -1, severity, device, 0);
  json v = {{"type", type}, {"subtype", subtype}, {"data", data}};
  v.update(extra);
  r["vendor"] = v;
  return r;
}

// A module record about `port` of `device` (module port - 1): mlx5_0 is InfiniBand with one
// port, mlx5_1 RoCE with two.
json module_record(const std::string& event, const std::string& severity, const std::string& device,
                   int port, int status, json extra = json::object()) {
  char data[57];
  const int error = extra.contains("error_code") ? extra["error_code"].get<int>() : 0;
  std::snprintf(data, sizeof data, "00%02x00%02x0000%02x%042d", port - 1, status, error, 0);
  const json block = device == "mlx5_0" ? ib_port() : roce_port();
  json r = port_record(event, -1, severity, device, port, block, json::object());
  json v = {{"type", 0x16}, {"subtype", 0}, {"data", data}, {"module", port - 1}};
  v.update(extra);
  r["vendor"] = v;
  return r;
}

json next_json(DaemonProcess& d) {
  return json::parse(d.next_record_line());
}

json devx_of(const json& status, const std::string& device) {
  for (const json& d : status["devices"]) {
    if (d["device"] == device) return d["devx"];
  }
  ADD_FAILURE() << device << " not in the status reply: " << status.dump();
  return json();
}

// The port queries `pid` made on `device`, over its contexts there (the simulator counts them).
uint64_t port_queries(const SimFabric& sim, int pid, const std::string& device) {
  uint64_t n = 0;
  for (const json& c : contexts_of(sim.stats(), pid)) {
    if (c["device"] == device) n += c["port_queries"].get<uint64_t>();
  }
  return n;
}

class Devx : public ::testing::Test {
 protected:
  void SetUp() override { JournalSandbox::instance(); }
};

TEST_F(Devx, EveryVendorRecordReachesTheSocketAndTheJournal) {
  SimFabric sim(topology("two-adapters"));
  DaemonProcess daemon(sim);
  EXPECT_TRUE(daemon.logged(
      "mlx5_0: reading vendor events port_module_event,temp_warn_event,general_event"));
  const json st = daemon.status();
  EXPECT_EQ(devx_of(st, "mlx5_0"),
            (json{{"state", "active"},
                  {"events", "port_module_event,temp_warn_event,general_event"},
                  {"reason", ""},
                  {"events_read", 0},
                  {"events_lost", 0}}));
  // A subscriber that asks for module records only.
  LineClient sub(daemon.socket());
  sub.require_json(10s, "the hello");
  sub.send(R"({"op":"subscribe","id":1,"events":["module_unplugged","module_plugged"]})"
           "\n");
  sub.read_until(reply_to(1), 10s);

  std::vector<json> want = {
      module_record("module_unplugged", "warning", "mlx5_0", 1, 2),
      module_record("module_plugged", "notice", "mlx5_0", 1, 1),
      module_record("module_disabled", "warning", "mlx5_1", 2, 4),
      module_record("module_error", "error", "mlx5_1", 2, 3,
                    {{"error_type", "bad_cable"}, {"error_code", 7}}),
      vendor("temperature_warning", "warning", "mlx5_0", 0x17, 0,
             "0000000000000040"
             "0000000000000003" +
                 std::string(24, '0'),
             {{"sensors", {0, 1, 70}}}),
      vendor("pci_power_change", "warning", "mlx5_0", 0x22, 5, std::string(56, '0')),
      vendor("firmware_event", "notice", "mlx5_0", 0x22, 7, std::string(56, '0')),
      // A GENERAL_EVENT subtype this version does not know: published whole.
      vendor("vendor_event", "notice", "mlx5_0", 0x22, 0x42, "abcd" + std::string(52, '0')),
  };
  inject(sim, {"module", "unplug", "mlx5_0/1"});
  inject(sim, {"module", "plug", "mlx5_0/1"});
  inject(sim, {"module", "disable", "mlx5_1/2"});
  inject(sim, {"module", "error", "mlx5_1/2", "bad_cable"});
  inject(sim, {"temp-warn", "mlx5_0", "0,1,70"});
  inject(sim, {"general-event", "mlx5_0", "pci_power_change"});
  inject(sim, {"general-event", "mlx5_0", "fw_live_patch"});
  inject(sim, {"devx-event", "mlx5_0", "general_event", "--subtype", "66", "--data", "abcd"});
  std::vector<json> got;
  std::vector<std::string> lines;
  for (size_t i = 0; i < want.size(); ++i) {
    lines.push_back(daemon.next_record_line());
    got.push_back(stable_part(json::parse(lines.back())));
  }
  EXPECT_EQ(got, want);

  // The subscriber got the two module records it asked for, whole.
  const json first = sub.require_json(10s, "module_unplugged");
  const json second = sub.require_json(10s, "module_plugged");
  EXPECT_EQ(first.dump(), json::parse(lines[0]).dump());
  EXPECT_EQ(second.dump(), json::parse(lines[1]).dump());

  const auto entries = daemon.journal_entries(want.size());
  ASSERT_EQ(entries.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_EQ(json::parse(entries[i]["RDMA_RECORD"].get<std::string>()), json::parse(lines[i]));
  expect_entry_fields(entries,
                      {{0,
                        {{"MESSAGE", "mlx5_0 port 1: module 0 unplugged, port ACTIVE"},
                         {"MESSAGE_ID", "d6eece555e194e05b6b2b883c16f2ba5"},
                         {"RDMA_MODULE", "0"}}},
                       {3,
                        {{"MESSAGE", "mlx5_1 port 2: module 1 error: bad_cable (7), port ACTIVE"},
                         {"RDMA_MODULE_ERROR", "bad_cable"},
                         {"PRIORITY", "3"}}},
                       {4, {{"MESSAGE", "mlx5_0: temperature over threshold on sensors 0, 1, 70"}}},
                       {6, {{"MESSAGE", "mlx5_0: firmware live patch"}}},
                       {7,
                        {{"RDMA_VENDOR_TYPE", "34"},
                         {"MESSAGE", "mlx5_0: vendor event type 0x22 subtype 0x42, data abcd" +
                                         std::string(52, '0')}}}});

  const json after = devx_of(daemon.status(), "mlx5_0");
  EXPECT_EQ(after["events_read"], 6);
  EXPECT_EQ(devx_of(daemon.status(), "mlx5_1")["events_read"], 2);
  EXPECT_EQ(after["events_lost"], 0);
}

TEST_F(Devx, AnAllocationFailureIsOneLossRecordBetweenExactRecords) {
  SimFabric sim(topology("two-adapters"));
  DaemonProcess daemon(sim);
  inject(sim, {"module", "unplug", "mlx5_1/1"});
  EXPECT_EQ(stable_part(next_json(daemon)),
            module_record("module_unplugged", "warning", "mlx5_1", 1, 2));
  const uint64_t queried = port_queries(sim, daemon.process().pid(), "mlx5_1");
  // The kernel fails to allocate the next event, which is dropped: the channel does not even
  // become readable. The next event brings EOVERFLOW first, then itself.
  inject(sim, {"alloc-fail", "mlx5_1"});
  inject(sim, {"module", "plug", "mlx5_1/1"});
  inject(sim, {"module", "unplug", "mlx5_1/2"});
  EXPECT_EQ(stable_part(next_json(daemon)),
            record("vendor_events_lost", -1, "warning", "mlx5_1", 0));
  // The ports were re-read after the loss, each once (mlx5_1 has two), and nothing else was:
  // nothing changed, so no port_state follows.
  EXPECT_EQ(stable_part(next_json(daemon)),
            module_record("module_unplugged", "warning", "mlx5_1", 2, 2));
  EXPECT_EQ(port_queries(sim, daemon.process().pid(), "mlx5_1"), queried + 2);
  inject(sim, {"module", "plug", "mlx5_1/2"});
  EXPECT_EQ(stable_part(next_json(daemon)),
            module_record("module_plugged", "notice", "mlx5_1", 2, 1));
  const json st = devx_of(daemon.status(), "mlx5_1");
  EXPECT_EQ(st["events_lost"], 1);
  EXPECT_EQ(st["events_read"], 3);
  const auto entries = daemon.journal_entries(4);
  ASSERT_EQ(entries.size(), 4u);
  EXPECT_EQ(entries[1]["MESSAGE"],
            "mlx5_1: vendor events lost (the kernel could not queue at least one), ports re-read");
  EXPECT_EQ(entries[1]["MESSAGE_ID"], "2229ea15229542f1be4344f8c2baad7a");
  EXPECT_EQ(entries[1]["PRIORITY"], "4");
}

TEST_F(Devx, EveryCaseWithoutVendorEventsSaysWhyAndTheRestWorks) {
  SimFabric sim(topology("devx-variants"));
  DaemonProcess daemon(sim);
  const json st = daemon.status();
  EXPECT_EQ(devx_of(st, "mlx5_0")["state"], "active");
  EXPECT_EQ(devx_of(st, "mlx5_1")["state"], "active");
  EXPECT_EQ(devx_of(st, "mlx5_1")["events"], "temp_warn_event");
  EXPECT_EQ(devx_of(st, "mlx5_2")["state"], "no_event_cap");
  EXPECT_EQ(devx_of(st, "mlx5_3")["state"], "refused");
  for (const char* other : {"rxe0", "bnxt_re0", "irdma0"}) {
    EXPECT_EQ(devx_of(st, other), (json{{"state", "not_mlx5"},
                                        {"events", ""},
                                        {"reason", "not an mlx5 device"},
                                        {"events_read", 0},
                                        {"events_lost", 0}}))
        << other;
  }
  EXPECT_TRUE(
      daemon.logged("mlx5_2: no vendor events (DEVX no_event_cap): firmware without "
                    "event_cap allows only PORT_CHANGE"));
  EXPECT_TRUE(daemon.logged("mlx5_3: no vendor events (DEVX refused): DEVX context refused: "));
  EXPECT_TRUE(daemon.logged("rxe0: no vendor events (DEVX not_mlx5): not an mlx5 device"));

  // mlx5_1's mask has no module events: a module unplug reaches nobody. Its temperature
  // warning does, and the next record after both is the temperature warning. Module 3 of
  // mlx5_0 serves no port the daemon can name (mlx5_0 has one port): the record is the
  // device's.
  inject(sim, {"module", "unplug", "mlx5_1/1"});
  inject(sim, {"temp-warn", "mlx5_1", "5"});
  EXPECT_EQ(stable_part(next_json(daemon)),
            vendor("temperature_warning", "warning", "mlx5_1", 0x17, 0,
                   "0000000000000000"
                   "0000000000000020" +
                       std::string(24, '0'),
                   {{"sensors", {5}}}));
  inject(sim, {"module", "plug", "mlx5_0/1"});
  json m = record("module_plugged", -1, "notice", "mlx5_0", 0);
  m["vendor"] = {
      {"type", 0x16}, {"subtype", 0}, {"data", "0003000100" + std::string(46, '0')}, {"module", 3}};
  EXPECT_EQ(stable_part(next_json(daemon)), m);
  // Legacy firmware, a refused DEVX context, another provider: no vendor records, and their
  // async events go on as before.
  inject(sim, {"module", "unplug", "mlx5_2/1"});
  inject(sim, {"module", "unplug", "mlx5_3/1"});
  inject(sim, {"port", "down", "rxe0/1"});
  const json down = stable_part(next_json(daemon));
  EXPECT_EQ(down["event"], "port_err");
  EXPECT_EQ(down["device"], "rxe0");
  inject(sim, {"port", "down", "mlx5_3/1"});
  EXPECT_EQ(stable_part(next_json(daemon))["device"], "mlx5_3");
}

// How many of the daemon's log lines so far contain `text`.
size_t log_count(DaemonProcess& daemon, const std::string& text) {
  daemon.process().pump();
  size_t n = 0;
  for (const std::string& line : daemon.process().stderr_lines()) {
    if (line.find(text) != std::string::npos) ++n;
  }
  return n;
}

TEST_F(Devx, AStoppedChannelStaysStoppedThroughJournalBackpressure) {
  // Given mlx5_1's DEVX channel destroyed under the daemon (mlx5_1 itself goes on), then a
  // storm while journald is frozen, so that reading device events pauses for the journal and
  // resumes, the channel stays stopped: "vendor events stopped" is logged once, and the vendor
  // records after it are mlx5_0's only.
  JournalSandbox& journal = JournalSandbox::instance();
  SimFabric sim(topology("two-adapters"));
  DaemonProcess daemon(
      sim, DaemonOptions{.config_json = R"({"journal": {"budget": {"enabled": false}}})",
                         .print_records = false});
  const std::string stopped = "mlx5_1: vendor events stopped: the event channel was destroyed";
  inject(sim, {"devx-destroy", "mlx5_1"});
  daemon.require_log(stopped);
  EXPECT_EQ(devx_of(daemon.status(), "mlx5_1")["state"], "closed");

  journal.freeze_journald(true);
  inject(sim, {"storm", "--count", "30000"});
  daemon.require_log("journal: journald took no entry for 2 s; reading device events again");
  journal.freeze_journald(false);
  daemon.require_log("journal: journald takes entries again");
  const json backpressure = daemon.status()["journal"];
  EXPECT_GE(backpressure["waits"].get<uint64_t>(), 1u) << backpressure.dump();
  EXPECT_GE(backpressure["stalls"].get<uint64_t>(), 1u) << backpressure.dump();

  // Vendor events of both devices: only mlx5_0's arrive. The loop has read mlx5_1's channel
  // by then, had it been watched again.
  rdmatest::LineClient subscriber(daemon.socket());
  subscriber.require_json(10s);  // hello
  subscriber.send(R"({"op":"subscribe","id":1,"events":["module_unplugged"]})"
                  "\n");
  subscriber.read_until(rdmatest::reply_to(1), 10s);
  inject(sim, {"module", "unplug", "mlx5_1/1"});
  inject(sim, {"module", "unplug", "mlx5_0/1"});
  EXPECT_EQ(stable_part(subscriber.require_json(30s)),
            module_record("module_unplugged", "warning", "mlx5_0", 1, 2));
  EXPECT_EQ(log_count(daemon, "vendor events stopped"), 1u) << daemon.log_tail(40);
  const json devx = devx_of(daemon.status(), "mlx5_1");
  EXPECT_EQ(devx["state"], "closed");
  EXPECT_EQ(devx["reason"], "the event channel was destroyed");
}

TEST_F(Devx, TheChannelOpensAndClosesWithAHotPluggedDevice) {
  rdmatest::enter_private_network();
  rdmatest::set_udev_running(true);
  SimFabric sim(topology("two-adapters"), rdmatest::SimOptions{.udev = true});
  DaemonProcess daemon(sim);
  auto open_channels = [](const json& s) { return s["devx_totals"]["channels_open"]; };
  ASSERT_EQ(open_channels(sim.stats()), 2) << sim.stats()["devx_totals"].dump();
  inject(sim, {"unplug", "mlx5_0"});
  EXPECT_EQ(stable_part(next_json(daemon))["event"], "device_removed");
  sim.wait_stats([&](const json& s) { return open_channels(s) == 1; });
  EXPECT_EQ(devx_of(daemon.status(), "mlx5_1")["state"], "active");
  inject(sim, {"replug", "mlx5_0"});
  EXPECT_EQ(stable_part(next_json(daemon))["event"], "device_added");
  EXPECT_EQ(stable_part(next_json(daemon))["event"], "port_state");
  const json now = sim.wait_stats([&](const json& st) { return open_channels(st) == 2; });
  EXPECT_EQ(now["devx_totals"]["channels_created"], 3);
  EXPECT_EQ(devx_of(daemon.status(), "mlx5_0")["state"], "active");
  inject(sim, {"module", "unplug", "mlx5_0/1"});
  EXPECT_EQ(stable_part(next_json(daemon)),
            module_record("module_unplugged", "warning", "mlx5_0", 1, 2));
}

}  // namespace
}  // namespace rdma_eventd::test
