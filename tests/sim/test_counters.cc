// Port counters: the groups each driver has, in the kernel's text format, saturation at every
// width, mlx5's 32-bit Q counters wrapping, set and reset, and link_downed stepping on port down
// before the PORT_ERR is queued.
#include <infiniband/verbs.h>

#include <cstdint>
#include <tuple>
#include <utility>

#include "counter_test.h"

namespace simtest {
namespace {

TEST(Counters, EachDriverHasItsGroupsInTheKernelsFormat) {
  CounterFabric f;
  // mlx5: the extended PMA table and mlx5's hw_counters, beside the port's other attributes.
  EXPECT_EQ(dir_names(f.port_file("mlx5_0", "")),
            std::vector<std::string>({"cap_mask", "counters", "gid_attrs", "gids", "hw_counters",
                                      "lid", "lid_mask_count", "link_layer", "phys_state", "pkeys",
                                      "rate", "sm_lid", "sm_sl", "state"}));
  EXPECT_EQ(dir_names(f.port_file("mlx5_0", "counters")), sorted(kExtendedPmaNames));
  for (const std::string& name : kExtendedPmaNames) {
    const std::string want = name == "symbol_error"     ? "12\n"
                             : name == "port_xmit_wait" ? "4294967294\n"
                                                        : "0\n";
    EXPECT_EQ(read_as_reader(f.port_file("mlx5_0", "counters/" + name)), want) << name;
  }
  const std::vector<std::string> mlx5_hw = dir_names(f.port_file("mlx5_0", "hw_counters"));
  EXPECT_EQ(mlx5_hw.size(), 30u);  // 29 counters and lifespan
  for (const char* name : {"out_of_buffer", "out_of_sequence", "packet_seq_err",
                           "local_ack_timeout_err", "rnr_nak_retry_err", "rx_icrc_encapsulated",
                           "roce_slow_restart", "np_cnp_sent", "rp_cnp_handled", "lifespan"})
    EXPECT_TRUE(std::count(mlx5_hw.begin(), mlx5_hw.end(), name)) << name;
  for (const std::string& name : mlx5_hw)
    EXPECT_EQ(read_as_reader(f.port_file("mlx5_0", "hw_counters/" + name)),
              name == "lifespan" ? "10\n" : "0\n")
        << name;

  // rxe: no counters/ at all (no process_mad), its 15 hw_counters.
  EXPECT_EQ(read_as_reader(f.port_file("rxe0", "counters/link_downed")), "open: ENOENT");
  EXPECT_FALSE(std::filesystem::exists(f.port_file("rxe0", "counters")));
  std::vector<std::string> rxe_hw = kRxeHwNames;
  rxe_hw.push_back("lifespan");
  EXPECT_EQ(dir_names(f.port_file("rxe0", "hw_counters")), sorted(rxe_hw));

  // The basic table: the error counters and five 32-bit ones, no unicast or multicast.
  std::vector<std::string> basic(kExtendedPmaNames.begin(), kExtendedPmaNames.begin() + 17);
  EXPECT_EQ(dir_names(f.port_file("basic0", "counters")), sorted(basic));
  EXPECT_FALSE(std::filesystem::exists(f.port_file("basic0", "hw_counters")));
  EXPECT_FALSE(std::filesystem::exists(f.port_file("bare0", "counters")));
  EXPECT_FALSE(std::filesystem::exists(f.port_file("bare0", "hw_counters")));

  // show --json: each device's groups and every value.
  const json show = f.sim.show();
  const json& mlx5 = show["devices"][0];
  EXPECT_EQ(mlx5["counters"], "extended");
  EXPECT_EQ(mlx5["hw_counters"], "mlx5");
  EXPECT_EQ(mlx5["ports"][0]["counters"].size(), kExtendedPmaNames.size());
  EXPECT_EQ(mlx5["ports"][0]["counters"]["symbol_error"], 12);
  EXPECT_EQ(mlx5["ports"][0]["counters"]["port_xmit_wait"], 0xfffffffeu);
  EXPECT_EQ(mlx5["ports"][0]["hw_counters"].size(), 29u);
  EXPECT_FALSE(mlx5["ports"][0].contains("counter_faults"));
  const json& rxe = show["devices"][1];
  EXPECT_EQ(members_of(rxe, {{"counters", "none"}, {"hw_counters", "rxe"}}),
            json({{"counters", "none"}, {"hw_counters", "rxe"}}));
  EXPECT_FALSE(rxe["ports"][0].contains("counters"));
  EXPECT_EQ(rxe["ports"][0]["hw_counters"].size(), kRxeHwNames.size());
  EXPECT_FALSE(show["devices"][4]["ports"][0].contains("counters"));
  EXPECT_FALSE(show["devices"][4]["ports"][0].contains("hw_counters"));
}

struct Width {
  const char* device;
  const char* name;
  int bits;
};

TEST(Counters, SaturateAtTheirWidthAndNeverWrap) {
  CounterFabric f;
  const Width widths[] = {{"mlx5_0", "local_link_integrity_errors", 4},
                          {"mlx5_0", "excessive_buffer_overrun_errors", 4},
                          {"mlx5_0", "link_downed", 8},
                          {"mlx5_0", "port_rcv_constraint_errors", 8},
                          {"mlx5_0", "symbol_error", 16},
                          {"mlx5_0", "VL15_dropped", 16},
                          {"mlx5_0", "port_xmit_wait", 32},
                          {"basic0", "port_rcv_data", 32},
                          {"mlx5_0", "port_rcv_data", 64},
                          {"mlx5_0", "np_cnp_sent", 64},
                          {"rxe0", "link_downed", 64}};
  for (const Width& w : widths) {
    const std::string port = std::string(w.device) + "/1";
    const uint64_t max = w.bits == 64 ? UINT64_MAX : (uint64_t{1} << w.bits) - 1;
    const std::string group =
        w.device == std::string("rxe0") || w.name == std::string("np_cnp_sent") ? "hw_counters"
                                                                                : "counters";
    const std::string file = f.port_file(w.device, group + "/" + w.name);
    ctl_ok(f.sim, {"counter", "set", port, w.name, std::to_string(max - 1)});
    EXPECT_EQ(read_as_reader(file), std::to_string(max - 1) + "\n") << w.name;
    // The last step that fits, then one that does not: the counter stays at all ones.
    json out = f.sim.ctl_json({"counter", "add", port, w.name, "1"});
    EXPECT_EQ(out["counter"], json({{"port", port},
                                    {"group", group},
                                    {"name", w.name},
                                    {"bits", w.bits},
                                    {"max", max},
                                    {"wraps", false},
                                    {"value", max},
                                    {"fault", "ok"}}))
        << w.name;
    EXPECT_EQ(out["saturated"], false) << w.name;
    out = f.sim.ctl_json({"counter", "add", port, w.name, "1"});
    EXPECT_EQ(out["counter"]["value"], max) << w.name;
    EXPECT_EQ(out["saturated"], true) << w.name;
    EXPECT_EQ(out["wrapped"], false) << w.name;
    EXPECT_EQ(read_as_reader(file), std::to_string(max) + "\n") << w.name;
    // From 0, a step larger than the width stops there too.
    ctl_ok(f.sim, {"counter", "set", port, w.name, "0"});
    EXPECT_EQ(read_as_reader(file), "0\n") << w.name;
    EXPECT_EQ(ctl_ok(f.sim, {"counter", "add", port, w.name, std::to_string(UINT64_MAX)}),
              port + ": " + group + "/" + w.name + " +" + std::to_string(UINT64_MAX) + " = " +
                  std::to_string(max) +
                  (w.bits == 64 ? ""
                                : " (saturated: " + std::to_string(w.bits) + " bits stop at " +
                                      std::to_string(max) + ")") +
                  "\n")
        << w.name;
    EXPECT_EQ(read_as_reader(file), std::to_string(max) + "\n") << w.name;
  }
}

// mlx5's Q counters are the firmware's 32 bits (mlx5_ib_query_q_counters(): be32_to_cpu): past
// 2^32 - 1 the file goes on from 0, on add and on set; rxe's same-named counter is 64-bit.
TEST(Counters, Mlx5QCountersWrapAt32BitsAndNoOtherHwCounterDoes) {
  CounterFabric f;
  const std::string file = f.port_file("mlx5_0", "hw_counters/out_of_sequence");
  ctl_ok(f.sim, {"counter", "set", "mlx5_0/1", "out_of_sequence", "4294967290"});
  json out = f.sim.ctl_json({"counter", "add", "mlx5_0/1", "out_of_sequence", "5"});
  EXPECT_EQ(out["counter"], json({{"port", "mlx5_0/1"},
                                  {"group", "hw_counters"},
                                  {"name", "out_of_sequence"},
                                  {"bits", 32},
                                  {"max", 4294967295u},
                                  {"wraps", true},
                                  {"value", 4294967295u},
                                  {"fault", "ok"}}));
  EXPECT_EQ(out["wrapped"], false);
  EXPECT_EQ(read_as_reader(file), "4294967295\n");
  // All ones is no stop: one more is 0, and a large step keeps its low 32 bits.
  EXPECT_EQ(ctl_ok(f.sim, {"counter", "add", "mlx5_0/1", "out_of_sequence", "71"}),
            "mlx5_0/1: hw_counters/out_of_sequence +71 = 70 (wrapped: 32 bits go on from 0 past "
            "4294967295)\n");
  EXPECT_EQ(read_as_reader(file), "70\n");
  out = f.sim.ctl_json({"counter", "add", "mlx5_0/1", "out_of_sequence", "8589934592"});
  EXPECT_EQ(out["counter"]["value"], 70);
  EXPECT_EQ(out["wrapped"], true);
  EXPECT_EQ(out["saturated"], false);
  EXPECT_EQ(f.sim.ctl_json({"counter", "add", "mlx5_0/1", "out_of_sequence",
                            std::to_string(UINT64_MAX)})["counter"]["value"],
            69);
  // set past 2^32 shows what the driver's 32-bit read would: the value modulo 2^32.
  out = f.sim.ctl_json({"counter", "set", "mlx5_0/1", "packet_seq_err", "4294967301"});
  EXPECT_EQ(out["counter"]["value"], 5);
  EXPECT_EQ(out["wrapped"], true);
  EXPECT_EQ(read_as_reader(f.port_file("mlx5_0", "hw_counters/packet_seq_err")), "5\n");
  EXPECT_EQ(f.sim.show()["devices"][0]["ports"][0]["hw_counters"]["packet_seq_err"], 5);
  // Its maximum itself is no wrap.
  EXPECT_EQ(f.sim.ctl_json(
                {"counter", "set", "mlx5_0/1", "local_ack_timeout_err", "4294967295"})["wrapped"],
            false);

  // mlx5's congestion counters are 64-bit and stop at all ones; rxe's Q-like counters too.
  for (const auto& [device, name] :
       {std::pair{"mlx5_0", "rp_cnp_handled"}, std::pair{"mlx5_0", "rx_icrc_encapsulated"},
        std::pair{"rxe0", "duplicate_request"}}) {
    const std::string port = std::string(device) + "/1";
    ctl_ok(f.sim, {"counter", "set", port, name, "4294967295"});
    out = f.sim.ctl_json({"counter", "add", port, name, "1"});
    EXPECT_EQ(out["counter"]["bits"], 64) << name;
    EXPECT_EQ(out["counter"]["wraps"], false) << name;
    EXPECT_EQ(read_as_reader(f.port_file(device, std::string("hw_counters/") + name)),
              "4294967296\n")
        << name;
  }
}

TEST(Counters, SetRefusesValuesOverTheWidthAndResetZeroesThePmaCounters) {
  CounterFabric f;
  const rdmatest::CommandResult over =
      f.sim.ctl({"counter", "set", "mlx5_0/1", "link_downed", "256"});
  EXPECT_EQ(over.exit_code(), 1);
  EXPECT_EQ(over.err,
            "rdma-sim: mlx5_0/1: counters/link_downed is 8 bits wide: 256 is over its maximum "
            "255\n");
  EXPECT_EQ(read_as_reader(f.port_file("mlx5_0", "counters/link_downed")), "0\n");
  EXPECT_EQ(f.sim.ctl({"counter", "set", "basic0/1", "port_xmit_data", "4294967296"}).err,
            "rdma-sim: basic0/1: counters/port_xmit_data is 32 bits wide: 4294967296 is over its "
            "maximum 4294967295\n");
  ctl_ok(f.sim, {"counter", "set", "mlx5_0/1", "link_downed", "255"});
  EXPECT_EQ(read_as_reader(f.port_file("mlx5_0", "counters/link_downed")), "255\n");

  // A reset by another tool (perfquery -R): every counters/ value goes to 0 at once; the
  // driver's hw_counters/ keep theirs.
  ctl_ok(f.sim, {"counter", "add", "mlx5_0/1", "out_of_buffer", "5"});
  ctl_ok(f.sim, {"counter", "add", "mlx5_0/1", "port_rcv_data", "123456789012"});
  EXPECT_EQ(ctl_ok(f.sim, {"counter", "reset", "mlx5_0/1"}),
            "mlx5_0/1: 21 counters/ counters reset to 0\n");
  for (const std::string& name : kExtendedPmaNames)
    EXPECT_EQ(read_as_reader(f.port_file("mlx5_0", "counters/" + name)), "0\n") << name;
  EXPECT_EQ(read_as_reader(f.port_file("mlx5_0", "hw_counters/out_of_buffer")), "5\n");
  EXPECT_EQ(f.sim.show()["devices"][0]["ports"][0]["hw_counters"]["out_of_buffer"], 5);
  // `show` prints the counters that are not 0, and how many are.
  ctl_ok(f.sim, {"counter", "add", "mlx5_0/1", "VL15_dropped", "2"});
  const std::string shown = ctl_ok(f.sim, {"show", "mlx5_0"});
  EXPECT_NE(shown.find("\n    counters/  VL15_dropped 2  (20 more at 0)\n"
                       "    hw_counters/  out_of_buffer 5  (28 more at 0)\n"),
            std::string::npos)
      << shown;
  EXPECT_NE(ctl_ok(f.sim, {"show", "rxe0"}).find("\n    hw_counters/  all 15 at 0\n"),
            std::string::npos);
}

// Starts get_event and, right behind it in the shell's input, the read of `file`, then takes the
// port down: the file is read as soon as the PORT_ERR arrives. Returns {event, read}.
std::pair<json, json> port_err_then_read(VerbsShell& sh, const SimFabric& sim,
                                         const std::string& ctx, const std::string& device,
                                         const std::string& file) {
  sh.send("get_event " + ctx);
  sh.send("sysfs_read L1:" + device + " " + file);
  ctl_ok(sim, {"port", "down", device + "/1"});
  json event = sh.receive();
  json read = sh.receive();
  sh("ack " + ctx);
  ctl_ok(sim, {"port", "up", device + "/1"});
  sh("get_event " + ctx);  // the PORT_ACTIVE
  sh("ack " + ctx);
  return {event, read};
}

TEST(Counters, PortDownStepsLinkDownedBeforeThePortErrIsQueued) {
  CounterFabric f;
  VerbsShell sh(f.sim);
  sh("list");
  const std::string mlx5 = sh("open L1:mlx5_0")["ctx"];
  const std::string rxe = sh("open L1:rxe0")["ctx"];

  // The counter's file is in place before the PORT_ERR reaches the context's pipe.
  for (const auto& [device, ctx, group] :
       {std::tuple{"mlx5_0", mlx5, "counters"}, std::tuple{"rxe0", rxe, "hw_counters"}}) {
    ChangeOrder order(f.port_file(device, group), sh.process().pid(),
                      sh("fd_info " + ctx)["fd"].get<int>());
    ctl_ok(f.sim, {"port", "down", std::string(device) + "/1"});
    EXPECT_EQ(order.take(), std::vector<std::string>({"link_downed", "event pipe"})) << device;
    EXPECT_EQ(sh("get_event " + ctx)["type"], IBV_EVENT_PORT_ERR);
    sh("ack " + ctx);
    ctl_ok(f.sim, {"port", "up", std::string(device) + "/1"});
    EXPECT_EQ(order.take(), std::vector<std::string>({"event pipe"})) << device;
    sh("get_event " + ctx);
    sh("ack " + ctx);
  }

  // A reader that reads the file as soon as the event arrives sees the link counted.
  const auto mlx5_link_lost = [&] {
    return port_err_then_read(sh, f.sim, mlx5, "mlx5_0", "ports/1/counters/link_downed");
  };
  auto [event, read] = mlx5_link_lost();
  EXPECT_EQ(event["type"], IBV_EVENT_PORT_ERR);
  EXPECT_EQ(members_of(read, {{"ret", 1}, {"value", "2"}}), json({{"ret", 1}, {"value", "2"}}));
  std::tie(event, read) = mlx5_link_lost();
  EXPECT_EQ(read["value"], "3");

  // rxe counts it in hw_counters/ (rxe_port_down()); it has no counters/ to count it in.
  std::tie(event, read) =
      port_err_then_read(sh, f.sim, rxe, "rxe0", "ports/1/hw_counters/link_downed");
  EXPECT_EQ(event["type"], IBV_EVENT_PORT_ERR);
  EXPECT_EQ(read["value"], "2");
  EXPECT_EQ(sh("sysfs_read L1:rxe0 ports/1/counters/link_downed")["errno_name"], "ENOENT");

  // 8 bits: at 255 a link lost says nothing more, and the PORT_ERR still comes.
  ctl_ok(f.sim, {"counter", "set", "mlx5_0/1", "link_downed", "254"});
  std::tie(event, read) = mlx5_link_lost();
  EXPECT_EQ(read["value"], "255");
  std::tie(event, read) = mlx5_link_lost();
  EXPECT_EQ(event["type"], IBV_EVENT_PORT_ERR);
  EXPECT_EQ(read["value"], "255");

  // A device with both groups counts the link in both.
  ctl_ok(f.sim, {"port", "down", "both0/1"});
  EXPECT_EQ(read_as_reader(f.port_file("both0", "counters/link_downed")), "1\n");
  EXPECT_EQ(read_as_reader(f.port_file("both0", "hw_counters/link_downed")), "1\n");
  // Nothing else counts it.
  const json show = f.sim.show();
  json nonzero = json::object();
  for (const json& d : show["devices"])
    for (const char* group : {"counters", "hw_counters"})
      if (d["ports"][0].contains(group))
        for (const auto& [name, value] : d["ports"][0][group].items())
          if (value != 0 && name != "symbol_error" && name != "port_xmit_wait")
            nonzero[d["name"].get<std::string>() + "/" + group + "/" + name] = value;
  EXPECT_EQ(nonzero, json({{"mlx5_0/counters/link_downed", 255},
                           {"rxe0/hw_counters/link_downed", 2},
                           {"both0/counters/link_downed", 1},
                           {"both0/hw_counters/link_downed", 1}}));
}

}  // namespace
}  // namespace simtest
