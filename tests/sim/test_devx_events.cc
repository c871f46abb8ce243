// What each command raises on an mlx5 device's DEVX channels, byte for byte, and how a channel
// reads: one record per call (the cookie and the 64-byte EQE, or the cookie alone with
// OMIT_EV_DATA, where repeats of a subscription merge), EINVAL for a short buffer, EAGAIN when
// empty, readable exactly while something is pending.
#include <infiniband/verbs.h>

#include <cerrno>

#include "devx_test.h"

namespace simtest {
namespace {

// The next record of the channel: its cookie and EQE, as hex.
json next_record(DevxShell& sh, const std::string& ch) {
  const json r = sh("get " + ch + " 72");
  if (r["ret"] != 72) throw rdmatest::HarnessError("get " + ch + ": " + r.dump());
  return r;
}

TEST(DevxEvents, ModuleEventsCarryTheModuleTheStatusAndTheErrorType) {
  Sim sim(devx_variants());
  DevxShell sh(sim);
  const std::string ch = sh.channel(sh.open("mlx5_0"), "0x16", 0x1600);
  // mlx5_0's port 1 is module 3 (topology); data byte 1 module, 3 status, 6 error type.
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"module", "plug", "mlx5_0/1"}, "00030001000000"},
      {{"module", "unplug", "mlx5_0/1"}, "00030002000000"},
      {{"module", "disable", "mlx5_0/1"}, "00030004000000"},
      {{"module", "unplug", "mlx5_0", "--module", "200"}, "00c80002000000"},
  };
  for (const auto& [command, data] : cases) {
    ctl_ok(sim, command);
    const json r = next_record(sh, ch);
    EXPECT_EQ(r["cookie"], 0x1600);
    EXPECT_EQ(r["eqe"], eqe_hex(0x16, 0, data)) << command[1];
  }
  // The error types by name: 0 to 7 in the PRM's order, then 0xc; any other as a number.
  std::vector<std::pair<std::string, int>> errors;
  for (const char* name :
       {"power_budget_exceeded", "long_range_for_non_mlnx", "bus_stuck", "no_eeprom_retry_timeout",
        "enforce_part_number_list", "unknown_identifier", "high_temperature", "bad_cable"})
    errors.emplace_back(name, static_cast<int>(errors.size()));
  errors.insert(errors.end(), {{"pcie_power_slot_exceeded", 0xc}, {"9", 0x9}});
  for (const auto& [name, value] : errors) {
    ctl_ok(sim, {"module", "error", "mlx5_0/1", name});
    char data[16];
    std::snprintf(data, sizeof data, "000300030000%02x", value);
    EXPECT_EQ(next_record(sh, ch)["eqe"], eqe_hex(0x16, 0, data)) << name;
  }
}

TEST(DevxEvents, TemperatureGeneralAndRawEvents) {
  Sim sim(devx_variants());
  DevxShell sh(sim);
  const std::string ch = sh.channel(sh.open("mlx5_0"), "0x17,0x22,0x09", 7);
  // sensor_warning_msb (sensors 64..127) then sensor_warning_lsb (0..63), big-endian.
  ctl_ok(sim, {"temp-warn", "mlx5_0", "0,1,63,64,127"});
  EXPECT_EQ(next_record(sh, ch)["eqe"], eqe_hex(0x17, 0,
                                                "8000000000000001"
                                                "8000000000000003"));
  ctl_ok(sim, {"general-event", "mlx5_0", "pci_power_change"});
  EXPECT_EQ(next_record(sh, ch)["eqe"], eqe_hex(0x22, 0x05, ""));
  ctl_ok(sim, {"general-event", "mlx5_0", "fw_live_patch"});
  EXPECT_EQ(next_record(sh, ch)["eqe"], eqe_hex(0x22, 0x07, ""));
  ctl_ok(sim, {"general-event", "mlx5_0", "pci_sync_for_fw_update", "--data", "00000002"});
  EXPECT_EQ(next_record(sh, ch)["eqe"], eqe_hex(0x22, 0x08, "00000002"));
  ctl_ok(sim, {"general-event", "mlx5_0", "0x42", "--data", "0x0102"});
  EXPECT_EQ(next_record(sh, ch)["eqe"], eqe_hex(0x22, 0x42, "0102"));
  const std::string data28 = "0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c";
  ctl_ok(sim, {"devx-event", "mlx5_0", "port_change", "--subtype", "5", "--data", data28});
  const json r = next_record(sh, ch);
  EXPECT_EQ(r["eqe"], eqe_hex(0x09, 0x05, data28));
  EXPECT_EQ(r["type"], 9);
  EXPECT_EQ(r["subtype"], 5);
  EXPECT_EQ(r["data"], data28);
}

TEST(DevxEvents, PortChangesReachDevxFirstAndVerbsToo) {
  Sim sim(devx_variants());
  DevxShell sh(sim);
  const std::string ctx = sh.open("mlx5_0");
  const std::string ch = sh.channel(ctx, "0x09", 9);
  const std::string verbs = sh.open("mlx5_0", "verbs");
  // The port in the high nibble of data byte 8; subtypes as device.h numbers them.
  const std::vector<std::pair<std::vector<std::string>, std::pair<int, int>>> cases = {
      {{"port", "down", "mlx5_0/1"}, {1, IBV_EVENT_PORT_ERR}},
      {{"port", "up", "mlx5_0/1"}, {4, IBV_EVENT_PORT_ACTIVE}},
      {{"lid", "mlx5_0/1", "9"}, {6, IBV_EVENT_LID_CHANGE}},
      {{"pkey", "mlx5_0/1", "1", "0x8001"}, {7, IBV_EVENT_PKEY_CHANGE}},
      {{"gid", "add", "mlx5_0/1", "fe80::9"}, {8, IBV_EVENT_GID_CHANGE}},
      {{"reregister", "mlx5_0/1"}, {9, IBV_EVENT_CLIENT_REREGISTER}},
  };
  for (const auto& [command, expected] : cases) {
    const json reply = sim.ctl_json(command);
    EXPECT_EQ(reply["devx_events"][0]["subtype"], expected.first) << command[0];
    EXPECT_EQ(reply["devx_events"][0]["queued"], 1) << command[0];
    EXPECT_EQ(next_record(sh, ch)["eqe"], eqe_hex(0x09, expected.first, "000000000000000010"));
    for (const std::string& c : {ctx, verbs})
      EXPECT_EQ(sh("get_async " + c), json({{"type", expected.second}, {"port", 1}}));
  }
  // An SM change is no PORT_CHANGE subtype: verbs only.
  EXPECT_EQ(sim.ctl_json({"sm", "mlx5_0/1", "3"}).count("devx_events"), 0u);
  expect_nothing_to_read(sh, ch);

  // A RoCE port's link changes too (the firmware reports them; the kernel makes the verbs event
  // from the netdev).
  const std::string roce = sh.channel(sh.open("mlx5_1"), "0x09", 10);
  ctl_ok(sim, {"port", "down", "mlx5_1/2"});
  EXPECT_EQ(next_record(sh, roce)["eqe"], eqe_hex(0x09, 1, "000000000000000020"));
}

TEST(DevxEvents, EventsNobodySubscribedGoNowhere) {
  rdmatest::TempDir tmp;
  const std::string topo = tmp.write("t.json", R"({"devices": [{"name": "mlx5_0",
      "devx": {"event_cap": true, "user_unaffiliated_events": [9, 10, 11, 22, 23]},
      "ports": [{}]}]})");
  Sim sim(topo);
  DevxShell sh(sim);
  const std::string temp = sh.channel(sh.open("mlx5_0"), "0x17", 1);
  const std::string cmd = sh.channel(sh.open("mlx5_0"), "0x0a,0x0b", 2);
  json r = sim.ctl_json({"module", "unplug", "mlx5_0/1"});
  EXPECT_EQ(r["devx_events"][0]["channels"], 0);
  EXPECT_EQ(r["message"], "mlx5_0/1: module 0 unplugged: port_module_event to 0 channels");
  // CMD and PAGE_REQUEST never reach DEVX, subscribed or not (devx_event_notifier).
  for (const std::string type : {"cmd", "page_request"}) {
    r = sim.ctl_json({"devx-event", "mlx5_0", type});
    EXPECT_EQ(r["devx_events"][0]["channels"], 0) << type;
  }
  for (const std::string& ch : {temp, cmd}) {
    expect_nothing_to_read(sh, ch);
  }
}

TEST(DevxEvents, OmitEventDataMergesRepeatsOfASubscription) {
  Sim sim(devx_variants());
  DevxShell sh(sim);
  const std::string ctx = sh.open("mlx5_0");
  const std::string ch = sh("channel " + ctx + " omit")["ch"];
  ASSERT_EQ(sh("subscribe " + ch + " 16 0x16")["ret"], 0);
  ASSERT_EQ(sh("subscribe " + ch + " 17 0x17")["ret"], 0);
  json r;
  for (const std::string action : {"unplug", "plug", "unplug"})
    r = sim.ctl_json({"module", action, "mlx5_0/1"});
  EXPECT_EQ(r["devx_events"][0]["merged"], 1);
  ctl_ok(sim, {"temp-warn", "mlx5_0", "5"});
  // One 8-byte record per pending subscription, in the order each became pending.
  sh("nonblock " + ch + " 1");
  json g = sh("get " + ch + " 7");  // shorter than the cookie
  EXPECT_EQ(g["errno_name"], "EINVAL");
  g = sh("get " + ch + " 4096");
  EXPECT_EQ(g["ret"], 8);
  EXPECT_EQ(g["cookie"], 16);
  g = sh("get " + ch + " 8");
  EXPECT_EQ(g["ret"], 8);
  EXPECT_EQ(g["cookie"], 17);
  EXPECT_EQ(sh("get " + ch + " 8")["errno_name"], "EAGAIN");
  // Taken, the subscription can be pending again.
  ctl_ok(sim, {"module", "plug", "mlx5_0/1"});
  EXPECT_EQ(sh("get " + ch + " 8")["cookie"], 16);
  const json stats = sim.stats();
  EXPECT_EQ(stats["channels"][0]["queued"], 3);
  EXPECT_EQ(stats["channels"][0]["read"], 3);
  EXPECT_EQ(stats["channels"][0]["merged"], 2);
}

TEST(DevxEvents, AShortBufferIsRefusedAndTheEventKept) {
  Sim sim(devx_variants());
  DevxShell sh(sim);
  const std::string ch = sh.channel(sh.open("mlx5_0"), "0x16", 5);
  ctl_ok(sim, {"module", "unplug", "mlx5_0/1"});
  for (const std::string len : {"71", "8", "0"}) {
    const json r = sh("get " + ch + " " + len);
    EXPECT_EQ(r["ret"], -1) << len;
    EXPECT_EQ(r["errno_name"], "EINVAL") << len;
  }
  const json r = sh("get " + ch + " 1024");  // a larger buffer gets one record, 72 bytes
  EXPECT_EQ(r["ret"], 72);
  EXPECT_EQ(r["eqe"], eqe_hex(0x16, 0, "00030002000000"));
}

TEST(DevxEvents, ReadableExactlyWhilePendingAndEagainWhenEmpty) {
  Sim sim(devx_variants());
  DevxShell sh(sim);
  const std::string ch = sh.channel(sh.open("mlx5_0"), "0x16", 5);
  EXPECT_EQ(sh("fd_info " + ch),
            json({{"nonblock", false}, {"cloexec", true}, {"seqpacket", true}}));
  EXPECT_EQ(sh("poll " + ch + " 0"), json({{"ret", 0}, {"revents", json::array()}}));
  // Blocking: the read waits for the event.
  sh.send("get " + ch + " 72");
  EXPECT_TRUE(sh.silent_for(std::chrono::milliseconds(300)));
  ctl_ok(sim, {"module", "plug", "mlx5_0/1"});
  EXPECT_EQ(sh.receive()["eqe"], eqe_hex(0x16, 0, "00030001000000"));
  ctl_ok(sim, {"module", "unplug", "mlx5_0/1"});
  EXPECT_EQ(sh("poll " + ch + " 0"),
            json({{"ret", 1}, {"revents", json::array({"IN", "RDNORM"})}}));
  sh("nonblock " + ch + " 1");
  EXPECT_EQ(sh("get " + ch + " 72")["ret"], 72);
  EXPECT_EQ(sh("poll " + ch + " 0"), json({{"ret", 0}, {"revents", json::array()}}));
  const json empty = sh("get " + ch + " 72");
  EXPECT_EQ(empty["ret"], -1);
  EXPECT_EQ(empty["errno_name"], "EAGAIN");
}

}  // namespace
}  // namespace simtest
