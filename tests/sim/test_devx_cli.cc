// The DEVX side of the command line and of topology files: help, JSON replies, refusals that
// name the problem and change nothing, `show` and `stats`.
#include "devx_test.h"

namespace simtest {
namespace {

TEST(DevxCli, TopologyFieldsAreChecked) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"devices":[{"name":"a","provider":"mlx6","ports":[{}]}]})",
       "devices[0].provider: \"mlx6\" is not one of: mlx5, mlx4, rxe, siw, bnxt_re, irdma, efa, "
       "hns, mana, qedr, cxgb4, erdma, ocrdma, vmw_pvrdma"},
      {R"({"devices":[{"name":"a","provider":"rxe","devx":{},"ports":[{}]}]})",
       "devices[0].devx: only an mlx5 device has DEVX (provider is \"rxe\")"},
      {R"({"devices":[{"name":"a","provider":"irdma","ports":[{"module":1}]}]})",
       "devices[0].ports[0].module: only an mlx5 device reports module events"},
      {R"({"devices":[{"name":"a","devx":{"user_unaffiliated_events":[22]},"ports":[{}]}]})",
       "devices[0].devx.user_unaffiliated_events: needs \"event_cap\": true (without it only "
       "port_change may be subscribed)"},
      {R"({"devices":[{"name":"a","devx":{"event_cap":true,
           "user_unaffiliated_events":[22,256]},"ports":[{}]}]})",
       "devices[0].devx.user_unaffiliated_events[1]: 256 is not an event number (0..255) or one "
       "of: comp, path_mig"},
      {R"({"devices":[{"name":"a","devx":{"event_cap":1},"ports":[{}]}]})",
       "devices[0].devx.event_cap: expected true or false, got 1"},
      {R"({"devices":[{"name":"a","devx":{"log_max_uctx":32},"ports":[{}]}]})",
       "devices[0].devx.log_max_uctx: 32 is out of range (0..31)"},
      {R"({"devices":[{"name":"a","devx":{"uctx":true},"ports":[{}]}]})",
       "devices[0].devx.uctx: unknown field"},
      {R"({"devices":[{"name":"a","ports":[{"module":256}]}]})",
       "devices[0].ports[0].module: 256 is out of range (0..255)"},
  };
  for (const auto& [text, error] : cases) {
    const auto [file, r] = start_with_topology(text);
    EXPECT_EQ(r.exit_code(), 78) << text;
    const std::string prefix = "rdma-sim: " + file + ": " + error;
    EXPECT_EQ(r.err.substr(0, prefix.size()), prefix) << r.err;
  }
}

TEST(DevxCli, ShowNamesTheProviderTheDevxOfferAndTheModules) {
  Sim sim(devx_variants());
  const json show = sim.show();
  const json& ib = show["devices"][0];
  EXPECT_EQ(ib["provider"], "mlx5");
  EXPECT_EQ(ib["devx"],
            json({{"log_max_uctx", 16},
                  {"event_cap", true},
                  {"user_unaffiliated_events",
                   {"port_change", "port_module_event", "temp_warn_event", "general_event"}},
                  {"port_module_event", true},
                  {"temp_warn_event", true},
                  {"general_notification_event", true},
                  {"channels", 0}}));
  EXPECT_EQ(ib["ports"][0]["module"], 3);
  EXPECT_EQ(show["devices"][1]["ports"][1]["module"], 1);  // port 2: module 1 by default
  EXPECT_EQ(show["devices"][3]["devx"]["log_max_uctx"], 0);
  const json& rxe = show["devices"][5];
  EXPECT_EQ(rxe["provider"], "rxe");
  EXPECT_FALSE(rxe.contains("devx"));
  EXPECT_FALSE(rxe["ports"][0].contains("module"));
  const std::string text = ctl_ok(sim, {"show", "mlx5_2"});
  EXPECT_NE(text.find("\n  provider mlx5  DEVX  legacy events (port_change only)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(ctl_ok(sim, {"show", "mlx5_3"}).find("  provider mlx5  no DEVX (log_max_uctx 0)\n"),
            std::string::npos);
  // A topology without "provider" or "devx": an mlx5 device without DEVX, as before.
  rdmatest::TempDir tmp;
  Sim plain(tmp.write("t.json", R"({"devices":[{"name":"hca","ports":[{}]}]})"));
  EXPECT_EQ(plain.show()["devices"][0]["devx"]["log_max_uctx"], 0);
}

TEST(DevxCli, RepliesAndRefusals) {
  Sim sim(devx_variants());
  DevxShell sh(sim);
  sh.channel(sh.open("mlx5_0"), "0x16", 11);
  EXPECT_EQ(sim.ctl_json({"module", "unplug", "mlx5_0/1"}), json::parse(R"j({"ok":true,
            "message":"mlx5_0/1: module 3 unplugged: port_module_event to 1 channel (1 queued)",
            "devx_events":[{"device":"mlx5_0","type":22,"type_name":"port_module_event",
            "subtype":0,"channels":1,"queued":1,"merged":0,"dropped":0,"signaled":0}]})j"));
  EXPECT_EQ(ctl_ok(sim, {"general-event", "mlx5_0", "fw_live_patch"}),
            "mlx5_0: general event fw_live_patch (0x07): general_event to 0 channels\n");
  // A device without DEVX raises the EQE; no channel can get it.
  EXPECT_EQ(ctl_ok(sim, {"temp-warn", "mlx5_3", "2"}),
            "mlx5_3: temperature warning: temp_warn_event to 0 channels\n");

  expect_refused(sim, {"module", "plug", "rxe0/1"},
                 "device rxe0 is a rxe device: only mlx5 firmware raises DEVX events");
  expect_refused(sim, {"temp-warn", "mlx5_9", "1"}, "no device mlx5_9");
  expect_refused(sim, {"module", "plug", "mlx5_0"},
                 "\"mlx5_0\": name a port (DEV/PORT) or a module (--module N)");
  expect_refused(sim, {"module", "plug", "mlx5_0/1", "--module", "2"},
                 "--module goes with a device, not a port (mlx5_0/1)");
  expect_refused(sim, {"module", "plug", "mlx5_0/2"}, "device mlx5_0 has no port 2 (ports 1..1)");
  ctl_ok(sim, {"fatal", "mlx5_1"});
  expect_refused(sim, {"devx-event", "mlx5_1", "9"},
                 "device mlx5_1 is in fatal state: unplug and replug it first");

  // Bad command lines: exit 2 with the usage.
  const std::pair<std::vector<std::string>, std::string> usage[] = {
      {{"module", "error", "mlx5_0/1", "melted"},
       "rdma-sim: module error: error type \"melted\" is not a number (0..15) or one of: "
       "power_budget_exceeded, long_range_for_non_mlnx, bus_stuck, no_eeprom_retry_timeout, "
       "enforce_part_number_list, unknown_identifier, high_temperature, bad_cable, "
       "pcie_power_slot_exceeded (usage: rdma-sim module error DEV/PORT ERROR | DEV ERROR "
       "--module N)\n"},
      {{"temp-warn", "mlx5_0", "128"},
       "rdma-sim: temp-warn: sensor 128 is out of range (0..127) (usage: rdma-sim temp-warn DEV "
       "SENSOR[,SENSOR...])\n"},
      {{"devx-event", "mlx5_0", "0x16", "--data", "123"},
       "rdma-sim: devx-event: --data \"123\" is not hex bytes (at most 28, e.g. 0a0b0c) (usage: "
       "rdma-sim devx-event DEV TYPE [--subtype N] [--data HEX])\n"},
      {{"devx-storm"},
       "rdma-sim: devx-storm: devx-storm needs --count N (usage: rdma-sim devx-storm --count N "
       "[--devices all|DEV[,DEV...]] [--types TYPE[,...]])\n"},
  };
  for (const auto& [args, err] : usage) {
    const rdmatest::CommandResult r = sim.ctl(args);
    EXPECT_EQ(r.exit_code(), 2) << args[0];
    EXPECT_EQ(r.err, err);
  }
}

TEST(DevxCli, HelpAndStats) {
  rdmatest::CommandResult r = rdmatest::run_command({rdmatest::rdma_sim_bin(), "--help"});
  for (const char* cmd :
       {"module plug DEV/PORT | DEV --module N", "module unplug DEV/PORT",
        "module disable DEV/PORT", "module error DEV/PORT ERROR",
        "temp-warn DEV SENSOR[,SENSOR...]", "general-event DEV SUBTYPE", "devx-event DEV TYPE",
        "devx-storm --count N", "alloc-fail DEV [--channel ID] [--count N]"})
    EXPECT_NE(r.out.find(std::string("  ") + cmd), std::string::npos) << cmd;
  r = rdmatest::run_command({rdmatest::rdma_sim_bin(), "help", "module", "error"});
  EXPECT_EQ(r.exit_code(), 0);
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')),
            "usage: rdma-sim module error DEV/PORT ERROR | DEV ERROR --module N");
  r = rdmatest::run_command({rdmatest::rdma_sim_bin(), "alloc-fail", "--help"});
  EXPECT_NE(r.out.find("EOVERFLOW"), std::string::npos);

  Sim sim(devx_variants());
  DevxShell sh(sim);
  const std::string ch = sh.channel(sh.open("mlx5_0"), "0x16,0x17", 5);
  ctl_ok(sim, {"module", "plug", "mlx5_0/1"});
  sh("get " + ch + " 72");
  ctl_ok(sim, {"module", "unplug", "mlx5_0/1"});
  const json stats = sim.wait_stats([](const json& s) { return s["channels"][0]["read"] == 1; });
  json c = stats["channels"][0];
  EXPECT_GT(c["pid"], 0);
  c.erase("pid");
  EXPECT_EQ(c, json::parse(R"({"id":1,"context":1,"device":"mlx5_0","device_index":0,
      "omit_data":false,"state":"open","queued":2,"read":1,"merged":0,"dropped":0,"signaled":0,
      "backlog":0,"fail_next":0,"subscriptions":[
      {"event":22,"event_name":"port_module_event","cookie":5,"eventfd":false},
      {"event":23,"event_name":"temp_warn_event","cookie":5,"eventfd":false}]})"));
  EXPECT_EQ(stats["devx_totals"], json::parse(R"({"channels_created":1,"channels_closed":0,
      "channels_open":1,"records_queued":2,"records_read":1,"merged":0,"dropped":0})"));
  const std::string text = ctl_ok(sim, {"stats"});
  EXPECT_NE(text.find("; 1 DEVX channels open, records queued 2, read 1, merged 0, dropped 0\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  channel 1  context 1  pid "), std::string::npos) << text;
  EXPECT_NE(text.find("  mlx5_0  data  open  subscriptions 0x16,0x17  queued 2  read 1  merged 0"
                      "  dropped 0\n"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace simtest
