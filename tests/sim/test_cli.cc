// The rdma-sim command line: errors that say what is wrong and change nothing, help, env, run,
// background start and stop.
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "sim_test.h"

namespace simtest {
namespace {

// The process is gone or a zombie (the simulator is not our child: whoever reaps orphans reaps it).
bool exited(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string pid_field, comm, state;
  return !(stat >> pid_field >> comm >> state) || state == "Z";
}

struct BadTopology {
  const char* json;
  const char* error;  // after "FILE: "
};

TEST(Cli, MalformedTopologiesAreRefusedNamingFileFieldAndValue) {
  const BadTopology cases[] = {
      {R"({"devices":[{"name":"a","ports":[{}]},{"name":"b","ports":[{"lid":70000}]}]})",
       "devices[1].ports[0].lid: 70000 is out of range (0..65535)"},
      {R"({"devices":[{"name":"a","ports":[{"lid":49152}]}]})",
       "devices[0].ports[0].lid: 49152 is not a unicast LID (1..49151)"},
      {R"({"devices":[{"name":"a","ports":[{"lidd":3}]}]})",
       "devices[0].ports[0].lidd: unknown field"},
      {R"({"devices":[{"name":"a","ports":[{"state":"up"}]}]})",
       "devices[0].ports[0].state: \"up\" is not one of: active, active_defer, armed, down, init"},
      {R"({"devices":[{"name":"a","link_layer":"ethernet","ports":[{"lid":3}]}]})",
       "devices[0].ports[0].lid: must be 0 on an Ethernet (RoCE) port, got 3"},
      {R"({"devices":[{"name":"a","ports":[{"gids":[{"gid":"fe80::zz"}]}]}]})",
       "devices[0].ports[0].gids[0].gid: \"fe80::zz\" is not a GID (IPv6 notation)"},
      {R"({"devices":[{"name":"a","ports":[{"gids":[{"gid":"fe80::1","index":8}]}]}]})",
       "devices[0].ports[0].gids[0].index: GID index 8 is outside the table (gid_tbl_len 8)"},
      {R"({"devices":[{"name":"a","ports":[{"pkeys":["0xffff","0x1ffff"]}]}]})",
       "devices[0].ports[0].pkeys[1]: \"0x1ffff\" is out of range (0..65535)"},
      {R"({"devices":[{"name":"a","ports":[]}]})",
       "devices[0].ports: expected an array of 1 to 4 ports, got []"},
      {R"({"devices":[{"name":"a","ports":[{}]},{"name":"a","ports":[{}]}]})",
       "devices[1].name: \"a\" is already the name of devices[0]"},
      {R"({"devices":[{"name":"a","node_guid":"12:34","ports":[{}]}]})",
       "devices[0].node_guid: \"12:34\" is not a GUID (xxxx:xxxx:xxxx:xxxx or 0x...)"},
      {R"({"devices":[{"ports":[{}]}]})", "devices[0].name: missing"},
      {R"({"devices":[{"name":"a","link_layer":"ethernet",
           "ports":[{"netdev":"e0","netdev_ifindex":5},{"netdev":"e1","netdev_ifindex":5}]}]})",
       "devices[0].ports[1].netdev_ifindex: 5 is already the ifindex of e0"},
      {R"({"devices": [)", "invalid JSON: "},
      {R"({"devices":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]})",
       "nested deeper than 32 levels"},
      // Beyond a double's range: nlohmann's out_of_range, not a parse_error (found by fuzzing).
      {R"({"devices":[{"name":"a","ports":[{"lid":1e400}]}]})",
       "invalid JSON: [json.exception.out_of_range.406] number overflow parsing '1e400'"},
  };
  for (const BadTopology& c : cases) {
    const auto [file, r] = start_with_topology(c.json);
    EXPECT_EQ(r.exit_code(), 78) << c.json;
    EXPECT_EQ(r.out, "") << c.json;
    const std::string prefix = "rdma-sim: " + file + ": " + c.error;
    EXPECT_EQ(r.err.substr(0, prefix.size()), prefix) << c.json;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  const rdmatest::CommandResult missing = rdmatest::run_command(
      {rdmatest::rdma_sim_bin(), "start", "-t", "/nonexistent.json", "--dir", "/tmp/x-unused"});
  EXPECT_EQ(missing.exit_code(), 78);
  EXPECT_EQ(missing.err, "rdma-sim: /nonexistent.json: cannot open: No such file or directory\n");
}

TEST(Cli, BadCommandsSayWhatIsWrongAndKeepTheState) {
  Sim sim(two_adapters());
  const json before = sim.show();
  const std::vector<RefusedCommand> cases = {
      {{"port", "down", "mlx5_7/1"}, 1, "rdma-sim: no device mlx5_7\n"},
      {{"port", "down", "mlx5_0/2"}, 1, "rdma-sim: device mlx5_0 has no port 2 (ports 1..1)\n"},
      {{"port", "down", "mlx5_0"},
       1,
       "rdma-sim: \"mlx5_0\" is not a port: expected DEV/PORT, e.g. mlx5_0/1\n"},
      {{"lid", "mlx5_1/1", "5"},
       1,
       "rdma-sim: mlx5_1/1 is an Ethernet (RoCE) port: it has no LID\n"},
      {{"lid", "mlx5_0/1", "0"}, 1, "rdma-sim: LID 0 is not a unicast LID (1..49151)\n"},
      {{"lid", "mlx5_0/1", "seven"},
       2,
       "rdma-sim: lid: LID \"seven\" is not a number (usage: rdma-sim lid DEV/PORT LID)\n"},
      {{"pkey", "mlx5_0/1", "128", "0x8001"},
       1,
       "rdma-sim: P_Key index 128 is outside the table of mlx5_0/1 (pkey_tbl_len 128)\n"},
      {{"gid", "del", "mlx5_0/1", "3"}, 1, "rdma-sim: GID index 3 of mlx5_0/1 is empty\n"},
      {{"gid", "add", "mlx5_0/1", "fe80::c42:a103:f6:5e44"},
       1,
       "rdma-sim: GID fe80::c42:a103:f6:5e44 (ib) is already at index 0 of mlx5_0/1\n"},
      {{"gid", "add", "mlx5_1/1", "fe80::5", "--type", "ib"},
       1,
       "rdma-sim: a ib GID does not fit Ethernet port mlx5_1/1\n"},
      {{"gid", "add-ip", "mlx5_0/1", "10.0.0.1", "--netdev", "ib0"},
       1,
       "rdma-sim: mlx5_0/1 is an InfiniBand port: IP-based GIDs are RoCE only\n"},
      {{"gid", "add-ip", "mlx5_1/1", "10.0.0.300", "--netdev", "ens1f0"},
       1,
       "rdma-sim: \"10.0.0.300\" is not an IPv4 or IPv6 address\n"},
      {{"gid", "del-ip", "mlx5_1/1", "10.9.9.9"},
       1,
       "rdma-sim: no GID for IP 10.9.9.9 on mlx5_1/1\n"},
      {{"replug", "mlx5_0"}, 1, "rdma-sim: device mlx5_0 is plugged in\n"},
      {{"rename", "mlx5_0", "mlx5_1"}, 1, "rdma-sim: a device named mlx5_1 already exists\n"},
      {{"rename", "mlx5_0", "bad/name"},
       1,
       "rdma-sim: \"bad/name\" is not a valid device name (letters, digits, '_', '-', '.')\n"},
      {{"event", "mlx5_0/1", "bogus"},
       2,
       "rdma-sim: event: event type \"bogus\" is not a number or one of: port_active, port_err, "
       "lid_change, "
       "pkey_change, sm_change, client_reregister, gid_change, device_fatal, "
       "device_speed_change (usage: rdma-sim event DEV[/PORT] TYPE [--element N] [--context "
       "ID])\n"},
      // The event changes no port attribute: the options that once set them say where a
      // retrain is.
      {{"speed-change", "mlx5_0", "--ports", "1"},
       1,
       "rdma-sim: speed-change takes no ports: it changes no port attribute (the effective "
       "speed it announces is not one); a link that retrained is 'port down DEV/PORT', then "
       "'port up DEV/PORT --width W --speed S'\n"},
      {{"speed-change", "mlx5_1", "--width", "1x"},
       1,
       "rdma-sim: speed-change takes no width: it changes no port attribute (the effective "
       "speed it announces is not one); a link that retrained is 'port down DEV/PORT', then "
       "'port up DEV/PORT --width W --speed S'\n"},
      {{"speed-change", "mlx5_9"}, 1, "rdma-sim: no device mlx5_9\n"},
      {{"port", "down", "mlx5_0/1", "--phys", "asleep"},
       2,
       "rdma-sim: port down: --phys \"asleep\" is not one of: polling, disabled, sleep "
       "(usage: rdma-sim port down DEV/PORT [--phys polling|disabled|sleep])\n"},
      {{"port", "up", "mlx5_0/1", "--phys", "polling"},
       2,
       "rdma-sim: port up: unknown option --phys for port up (usage: rdma-sim port up DEV/PORT "
       "[--lid N] [--sm-lid N] [--width W] [--speed S])\n"},
      {{"port", "up", "mlx5_0/1", "--width", "3x"},
       1,
       "rdma-sim: --width \"3x\" is not one of: 1x, 2x, 4x, 8x, 12x\n"},
      {{"port", "up", "mlx5_0/1", "--speed", "gdr"},
       1,
       "rdma-sim: --speed \"gdr\" is not one of: sdr, ddr, qdr, fdr10, fdr, edr, hdr, ndr, xdr\n"},
      {{"storm", "--count", "10", "--targets", "mlx5_0/3"},
       1,
       "rdma-sim: device mlx5_0 has no port 3 (ports 1..1)\n"},
      {{"frobnicate"}, 2, "rdma-sim: unknown command \"frobnicate\" (see rdma-sim --help)\n"},
      {{"set", "query-latency-us", "-5"},
       2,
       "rdma-sim: set: query-latency-us \"-5\" is not a number (usage: rdma-sim set "
       "query-latency-us N)\n"},
  };
  expect_refused(sim, cases);
  EXPECT_EQ(sim.show(), before);
  EXPECT_EQ(sim.stats()["totals"]["events_queued"], 0);

  const json refused = sim.ctl_json({"replug", "mlx5_1"});
  EXPECT_EQ(refused, json({{"ok", false}, {"error", "device mlx5_1 is plugged in"}}));
}

TEST(Cli, JsonOutputIsOneObject) {
  Sim sim(two_adapters());
  const json out = sim.ctl_json({"port", "down", "mlx5_1/2", "--phys", "sleep"});
  EXPECT_EQ(
      out,
      json::parse(R"({"ok":true,"message":"mlx5_1/2: port down: port_err (element 2) to 0 contexts",
      "events":[{"device":"mlx5_1","type":10,"type_name":"port_err","element":2,"contexts":0}],
      "devx_events":[{"device":"mlx5_1","type":9,"type_name":"port_change","subtype":1,
      "channels":0,"queued":0,"merged":0,"dropped":0,"signaled":0}]})"));
  const json show = sim.show();
  const json& port = show["devices"][1]["ports"][1];
  EXPECT_EQ(port["state"], "down");
  EXPECT_EQ(port["phys_state"], "sleep");
  EXPECT_EQ(sim.ctl({"port", "up", "mlx5_1/2"}).out,
            "mlx5_1/2: port up: port_active (element 2) to 0 contexts\n");
}

TEST(Cli, NoSimulatorRunning) {
  rdmatest::TempDir tmp;
  const rdmatest::CommandResult r =
      rdmatest::run_command({rdmatest::rdma_sim_bin(), "--dir", tmp.path(), "show"});
  EXPECT_EQ(r.exit_code(), 69);
  EXPECT_EQ(r.err,
            "rdma-sim: no simulator is running in " + tmp.path() +
                " (No such file or directory); start one with: rdma-sim start -t TOPOLOGY.json\n");
}

TEST(Cli, OneSimulatorPerDirectory) {
  Sim sim(two_adapters());
  const rdmatest::CommandResult r = rdmatest::run_command(
      {rdmatest::rdma_sim_bin(), "start", "--foreground", "--dir", sim.dir()});
  EXPECT_EQ(r.exit_code(), 1);
  EXPECT_EQ(r.err, "rdma-sim: a simulator is already running in " + sim.dir() + " (pid " +
                       std::to_string(sim.process().pid()) + ")\n");
  EXPECT_EQ(sim.run({"ibv_devices"}).exit_code(), 0);  // untouched
}

TEST(Cli, BackgroundStartReturnsWhenReadyAndStopCleansUp) {
  rdmatest::TempDir tmp;
  const std::string dir = tmp.file("fabric");
  const rdmatest::CommandResult start = rdmatest::run_command(
      {rdmatest::rdma_sim_bin(), "start", "-t", two_adapters(), "--dir", dir});
  ASSERT_EQ(start.exit_code(), 0) << start.err;
  EXPECT_EQ(start.out, dir + "\n");
  const pid_t pid = std::stoi(rdmatest::read_file(dir + "/pid"));
  // The simulator is not our child: a pidfd (taken while it surely runs) makes sure that whatever
  // happens, it is this process, and no other that got its pid later, that gets killed.
  struct Reaper {
    int pidfd;
    ~Reaper() {
      syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, nullptr, 0);
      close(pidfd);
    }
  } reaper{static_cast<int>(syscall(SYS_pidfd_open, pid, 0))};
  ASSERT_GE(reaper.pidfd, 0);
  rdmatest::SpawnOptions env;
  env.set["RDMA_SIM_DIR"] = dir;
  env.set["LD_LIBRARY_PATH"] = rdmatest::standin_libdir();
  EXPECT_EQ(rdmatest::run_command({"ibv_devinfo", "-l"}, env).out,
            "2 HCAs found:\n\tmlx5_0\n\tmlx5_1\n\n");

  const rdmatest::CommandResult stop =
      rdmatest::run_command({rdmatest::rdma_sim_bin(), "--dir", dir, "stop"});
  EXPECT_EQ(stop.exit_code(), 0) << stop.err;
  EXPECT_EQ(stop.out, "stopped\n");
  EXPECT_TRUE(exited(pid));  // before stop returned
  for (const char* f : {"state", "sim.sock", "sys", "pid"})
    EXPECT_FALSE(std::filesystem::exists(dir + "/" + f)) << f;
  EXPECT_EQ(rdmatest::run_command({"ibv_devinfo", "-l"}, env).err,
            "Failed to get IB devices list: Function not implemented\n");
}

TEST(Cli, ForegroundSimulatorExitsZeroOnSigterm) {
  auto sim = std::make_unique<Sim>(two_adapters());
  EXPECT_TRUE(sim->process().signal(SIGTERM));
  const rdmatest::ExitStatus s = sim->process().require_exit(kTimeout);
  EXPECT_TRUE(s.success()) << s.describe();
  EXPECT_FALSE(std::filesystem::exists(sim->dir() + "/sim.sock"));
}

TEST(Cli, HelpEnvAndRun) {
  rdmatest::CommandResult r = rdmatest::run_command({rdmatest::rdma_sim_bin(), "--help"});
  EXPECT_EQ(r.exit_code(), 0);
  for (const char* cmd : {"start [-t TOPOLOGY.json]",
                          "stop",
                          "run --",
                          "env",
                          "show [DEV]",
                          "stats",
                          "port down DEV/PORT",
                          "port up DEV/PORT",
                          "lid DEV/PORT LID",
                          "sm DEV/PORT SM_LID",
                          "reregister DEV/PORT",
                          "pkey DEV/PORT INDEX VALUE",
                          "gid add DEV/PORT GID",
                          "gid del DEV/PORT INDEX",
                          "gid add-ip DEV/PORT IP --netdev NAME",
                          "gid del-ip DEV/PORT IP",
                          "counter add DEV/PORT NAME N",
                          "counter set DEV/PORT NAME N",
                          "counter fail DEV/PORT NAME missing|empty|garbage|unreadable|hang|ok",
                          "counter reset DEV/PORT",
                          "fatal DEV",
                          "unplug DEV",
                          "replug DEV",
                          "rename DEV NEWNAME",
                          "event DEV[/PORT] TYPE",
                          "storm --count N",
                          "no-rdma on|off",
                          "set query-latency-us N"})
    EXPECT_NE(r.out.find(std::string("  ") + cmd), std::string::npos) << cmd;
  r = rdmatest::run_command({rdmatest::rdma_sim_bin(), "help", "counter", "fail"});
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')),
            "usage: rdma-sim counter fail DEV/PORT NAME missing|empty|garbage|unreadable|hang|ok");
  r = rdmatest::run_command({rdmatest::rdma_sim_bin(), "help", "gid", "add-ip"});
  EXPECT_EQ(r.out.substr(0, 54), "usage: rdma-sim gid add-ip DEV/PORT IP --netdev NAME\n\n");
  r = rdmatest::run_command({rdmatest::rdma_sim_bin(), "unplug", "--help"});
  EXPECT_EQ(r.out.substr(0, 63), "usage: rdma-sim unplug DEV [--no-disassociate] [--wait SECONDS]");

  Sim sim(two_adapters());
  r = sim.ctl({"env"});
  EXPECT_EQ(r.out, "export LD_LIBRARY_PATH='" + rdmatest::standin_libdir() +
                       (std::getenv("LD_LIBRARY_PATH") && *std::getenv("LD_LIBRARY_PATH")
                            ? std::string(":") + std::getenv("LD_LIBRARY_PATH")
                            : std::string()) +
                       "'\nexport RDMA_SIM_DIR='" + sim.dir() +
                       "'\nexport RDMA_EVENTD_DEVLINK_SOCKET='" + sim.dir() +
                       "/devlink.sock'\nexport RDMA_EVENTD_RDMA_NETLINK_SOCKET='" + sim.dir() +
                       "/rdma-netlink.sock'\n");
  r = sim.ctl({"run", "--", "ibv_devinfo", "-l"});
  EXPECT_EQ(r.exit_code(), 0);
  EXPECT_EQ(r.out, "2 HCAs found:\n\tmlx5_0\n\tmlx5_1\n\n");
  r = sim.ctl({"run", "--", "sh", "-c",
               "echo \"$RDMA_SIM_DIR\"; echo \"$RDMA_EVENTD_DEVLINK_SOCKET\"; "
               "echo \"$RDMA_EVENTD_RDMA_NETLINK_SOCKET\"; exit 3"});
  EXPECT_EQ(r.exit_code(), 3);
  EXPECT_EQ(r.out,
            sim.dir() + "\n" + sim.dir() + "/devlink.sock\n" + sim.dir() + "/rdma-netlink.sock\n");
}

}  // namespace
}  // namespace simtest
