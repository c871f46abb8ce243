// rdma-eventctl against the real daemon on the simulator.
#include <gtest/gtest.h>
#include <signal.h>

#include <regex>

#include "hub_support.h"
#include "paths.h"
#include "rdma_eventd/version.h"

namespace rdma_eventd::subtest {
namespace {

std::vector<std::string> eventctl(const HubDaemon& d, std::vector<std::string> args) {
  args.insert(args.begin(), {rdmatest::bin("rdma-eventctl"), "--socket", d.socket()});
  return args;
}

// Polls the daemon's status until one subscriber has `filter` and has made `requests`
// requests: the command under test is then listening.
void wait_for_subscriber(const HubDaemon& d, const json& filter, uint64_t requests) {
  LineClient c(d.socket());
  int id = 0;
  json list;
  const bool found = rdmatest::wait_until(
      [&] {
        c.send(json{{"op", "status"}, {"id", ++id}}.dump() + "\n");
        list = c.read_until(reply_to(id), 20s).back()["subscribers"]["list"];
        for (const auto& s : list) {
          if (s["filter"] == filter && s["requests"] == requests) return true;
        }
        return false;
      },
      20s);
  ASSERT_TRUE(found) << "no subscriber with filter " << filter.dump() << ": " << list.dump();
}

// "2026-11-22T10:15:30.123456Z " off the front of a monitor line.
std::string without_time(const std::string& line) {
  static const std::regex time(R"(^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z )");
  EXPECT_TRUE(std::regex_search(line, time)) << line;
  return std::regex_replace(line, time, "");
}

TEST(Eventctl, EveryCommandHasHelp) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"--help"},
                                             {"help"},
                                             {"monitor", "--help"},
                                             {"status", "--help"},
                                             {"wait", "--help"},
                                             {"help", "wait"}}) {
    std::vector<std::string> argv = {rdmatest::bin("rdma-eventctl")};
    argv.insert(argv.end(), args.begin(), args.end());
    const CommandResult r = run_command(argv);
    EXPECT_EQ(r.exit_code(), 0) << args[0];
    EXPECT_EQ(r.out.rfind("Usage: rdma-eventctl ", 0), 0u) << r.out;
  }
  const CommandResult wait_help = run_command({rdmatest::bin("rdma-eventctl"), "wait", "-h"});
  EXPECT_NE(wait_help.out.find("  1   the timeout passed first"), std::string::npos);
  const CommandResult bad = run_command({rdmatest::bin("rdma-eventctl"), "frobnicate"});
  EXPECT_EQ(bad.exit_code(), 64);
  EXPECT_EQ(bad.err, "rdma-eventctl: unknown command 'frobnicate'\nTry 'rdma-eventctl --help'.\n");
}

TEST(Eventctl, MonitorJsonPrintsTheSelectedRecordsAsTheDaemonSendsThem) {
  SimFabric sim(topology("two-adapters"));
  HubDaemon d(sim, {.print_records = true});
  Process monitor =
      Process::spawn(eventctl(d, {"monitor", "--json", "--event", "port_err", "--count", "2"}));
  wait_for_subscriber(d, json::parse(R"({"events":["port_err"]})"), 1);
  inject(sim, {"port", "down", "mlx5_0/1"});
  inject(sim, {"port", "up", "mlx5_0/1"});
  inject(sim, {"port", "down", "mlx5_1/2"});
  std::vector<std::string> printed;
  for (int i = 0; i < 3; ++i)
    printed.push_back(d.process().require_next_line(10s));
  EXPECT_EQ(monitor.require_next_line(10s), printed[0]);
  EXPECT_EQ(monitor.require_next_line(10s), printed[2]);
  EXPECT_TRUE(monitor.require_exit(10s).success()) << monitor.describe();
}

TEST(Eventctl, MonitorShowsASnapshotThenOneLinePerRecord) {
  SimFabric sim(topology("two-adapters"));
  HubDaemon d(sim);
  Process monitor = Process::spawn(eventctl(
      d, {"monitor", "--snapshot", "--port", "mlx5_0/1", "--count", "4", "--color", "never"}));
  EXPECT_EQ(without_time(monitor.require_next_line(10s)),
            "info     mlx5_0/1  snapshot          ACTIVE, 200 Gb/s 4X HDR, infiniband, lid 7, "
            "sm_lid 1, 1 GID, 2 P_Keys [as of seq 0]");
  inject(sim, {"port", "down", "mlx5_1/1"});  // another port: not shown
  inject(sim, {"port", "down", "mlx5_0/1"});
  inject(sim, {"port", "up", "mlx5_0/1", "--lid", "9"});
  inject(sim, {"pkey", "mlx5_0/1", "2", "0x8002"});
  EXPECT_EQ(without_time(monitor.require_next_line(10s)),
            "error    mlx5_0/1  port_err          ACTIVE -> DOWN; phys_state link_up -> polling, "
            "lid 7 -> 0, sm_lid 1 -> 0 [seq 2]");
  EXPECT_EQ(without_time(monitor.require_next_line(10s)),
            "notice   mlx5_0/1  port_active       DOWN -> ACTIVE; phys_state polling -> link_up, "
            "lid 0 -> 9, sm_lid 0 -> 1; 200 Gb/s 4X HDR [seq 3]");
  EXPECT_EQ(without_time(monitor.require_next_line(10s)),
            "notice   mlx5_0/1  pkey_change       +pkey 0x8002 at index 2 [seq 4]");
  EXPECT_TRUE(monitor.require_exit(10s).success()) << monitor.describe();
}

TEST(Eventctl, MonitorShowsTheLifeOfADevice) {
  // Followed by node GUID, which a rename does not change. SIGUSR1 makes the daemon compare
  // the device list with what it watches (no udev messages here).
  SimFabric sim(topology("two-adapters"));
  HubDaemon d(sim);
  Process monitor = Process::spawn(eventctl(
      d, {"monitor", "--device", "0c42:a103:006d:0b3a", "--count", "9", "--color", "never"}));
  wait_for_subscriber(d, json::parse(R"({"devices":["0c42:a103:006d:0b3a"]})"), 1);
  auto rescan = [&] { d.process().signal(SIGUSR1); };
  auto next = [&] { return without_time(monitor.require_next_line(10s)); };

  inject(sim, {"unplug", "mlx5_1"});
  EXPECT_EQ(next(),
            "warning  mlx5_1    device_removed    device removed, last known: port 1 ACTIVE "
            "100 Gb/s 4X EDR, port 2 ACTIVE 100 Gb/s 4X EDR [seq 1]");
  inject(sim, {"replug", "mlx5_1"});
  rescan();
  EXPECT_EQ(next(),
            "notice   mlx5_1    device_added      device added (node GUID 0c42:a103:006d:0b3a) "
            "[seq 2]");
  EXPECT_EQ(next(), "info     mlx5_1/1  port_state        ACTIVE; 100 Gb/s 4X EDR [seq 3]");
  EXPECT_EQ(next(), "info     mlx5_1/2  port_state        ACTIVE; 100 Gb/s 4X EDR [seq 4]");
  inject(sim, {"rename", "mlx5_1", "roce7"});
  rescan();
  EXPECT_EQ(next(), "notice   mlx5_1    device_renamed    device renamed to roce7 [seq 5]");
  inject(sim, {"fatal", "roce7"});
  EXPECT_EQ(next(),
            "critical roce7     device_fatal      device fatal error, last known: port 1 ACTIVE "
            "100 Gb/s 4X EDR, port 2 ACTIVE 100 Gb/s 4X EDR [seq 6]");
  inject(sim, {"unplug", "roce7"});
  inject(sim, {"replug", "roce7"});
  rescan();
  // The removal of the failed device, then its recovery: how long it took varies.
  EXPECT_EQ(next(),
            "warning  roce7     device_removed    device removed, last known: port 1 ACTIVE "
            "100 Gb/s 4X EDR, port 2 ACTIVE 100 Gb/s 4X EDR [seq 7]");
  const std::string recovered = next();
  EXPECT_TRUE(std::regex_match(
      recovered, std::regex(R"(notice   roce7     device_recovered  device recovered after )"
                            R"((\d+ ms|\d+\.\d s|\d+ min \d+ s) \(fatal error at seq 6\) )"
                            R"(\[seq 8\])")))
      << recovered;
  EXPECT_EQ(next(), "info     roce7/1   port_state        ACTIVE; 100 Gb/s 4X EDR [seq 9]");
  EXPECT_TRUE(monitor.require_exit(10s).success()) << monitor.describe();
}

TEST(Eventctl, StatusShowsEveryPortAndTheCounters) {
  SimFabric sim(topology("two-adapters"));
  HubDaemon d(sim);
  inject(sim, {"port", "down", "mlx5_1/2"});
  wait_for_seq(d.socket(), 1);
  // The counters are read beside the daemon's loop: the three ports' first reads (at start)
  // are in, and none is out.
  ASSERT_TRUE(rdmatest::wait_until(
      [&] {
        const nlohmann::json l = d.status()["link_health"];
        return l["samples"] >= 3 && l["reads_in_flight"] == 0;
      },
      10s));
  const CommandResult r = run_command(eventctl(d, {"status", "--color", "never"}));
  ASSERT_EQ(r.exit_code(), 0) << r.err;
  const std::vector<std::string> lines = r.out_lines();
  ASSERT_GE(lines.size(), 12u) << r.out;
  EXPECT_EQ(std::vector<std::string>(lines.begin(), lines.begin() + 5),
            (std::vector<std::string>{
                "DEVICE  PORT  STATE   PHYS      LINK        RATE      LID  SM_LID  GIDS  PKEYS",
                "mlx5_0  1     ACTIVE  link_up   infiniband  200 Gb/s  7    1       1     2",
                "mlx5_1  1     ACTIVE  link_up   ethernet    100 Gb/s  0    0       4     1",
                "mlx5_1  2     DOWN    disabled  ethernet    100 Gb/s  0    0       4     1", ""}));
  const std::regex daemon_line("rdma-eventd " + std::string(kVersion) + ", pid " +
                               std::to_string(d.process().pid()) + ", up [0-9]+s, stream " +
                               d.stream() + ", seq 1");
  EXPECT_TRUE(std::regex_match(lines[5], daemon_line)) << lines[5];
  EXPECT_EQ(lines[6], "events: 1 read, 1 acked; 1 records, 0 query failures");
  // This machine's kernel has no RDMA, and the test runs where udev does not run.
  EXPECT_EQ(lines[7],
            "hot-plug: a rescan every 5 s (udev does not run, the kernel has no RDMA netlink "
            "monitor)");
  EXPECT_EQ(lines[8], "journal: off");
  EXPECT_EQ(lines[9], "subscribers: 1 of 1024; 0 records sent, 0 lost, 0 bytes queued");
  EXPECT_EQ(lines[10], "ring: 1 of 4096 records (seq 1 to 1)");
  EXPECT_EQ(lines[11], "reporters: 0 of 4096 on " + d.socket() + ".report");
  // The error counters of each port read (at start; mlx5_1/2 perhaps again at its port_err).
  ASSERT_EQ(lines.size(), 17u) << r.out;
  EXPECT_TRUE(std::regex_match(
      lines[12], std::regex("link health: every 60 s, [34] samples, (9|12) counter reads, 0 "
                            "devices unreadable, 0 failed reads retried, 0 reads hung")))
      << lines[12];
  // One read observes no time: a baseline, not judged yet, and the bit error rate is not known.
  // mlx5_1's ports are RoCE: their bit errors are their netdevs' FEC statistics, which this
  // host's kernel has not (the simulator's stand-in is not this daemon's): not judged, and
  // their IB counter group's symbol_error is not read; mlx5_1/2 is down.
  const std::string since = " since \\d{4}-\\d\\d-\\d\\dT[0-9:.]+Z";
  EXPECT_TRUE(std::regex_match(
      lines[13], std::regex("  mlx5_0/1 unknown \\(baseline\\)" + since +
                            ", bit error rate unknown; link_downed 0, link_error_recovery 0, "
                            "symbol_error 0")))
      << lines[13];
  EXPECT_TRUE(
      std::regex_match(lines[14], std::regex("  mlx5_1/1 unknown \\(no_fec_statistics\\)" + since +
                                             ", bit error rate unknown; link_downed 0")))
      << lines[14];
  EXPECT_TRUE(std::regex_match(lines[15], std::regex("  mlx5_1/2 unknown \\(link_down\\)" + since +
                                                     ", bit error rate unknown; link_downed [01]")))
      << lines[15];
  // This machine's kernel has no devlink; where one has, the reporters follow (kernel tests).
  EXPECT_TRUE(lines[16] == "devlink health: not followed (the kernel has no devlink family)" ||
              lines[16].starts_with("devlink health: 0 reporters"))
      << lines[16];

  const CommandResult js = run_command(eventctl(d, {"status", "--json"}));
  ASSERT_EQ(js.exit_code(), 0);
  const json st = json::parse(js.out);
  EXPECT_EQ(st["type"], "reply");
  EXPECT_EQ(st["op"], "status");
  EXPECT_EQ(st["devices"][1]["ports"][1]["state"], "down");
}

TEST(Eventctl, WaitReturnsWhenThePortComesUp) {
  SimFabric sim(topology("two-adapters"));
  HubDaemon d(sim);
  inject(sim, {"port", "down", "mlx5_0/1"});
  wait_for_seq(d.socket(), 1);
  Process wait = Process::spawn(eventctl(d, {"wait", "mlx5_0/1", "active", "--timeout", "60s"}));
  // Subscribed and snapshot taken: the port is down, so it follows the records now.
  wait_for_subscriber(d, json::parse(R"({"ports":["mlx5_0/1"]})"), 2);
  EXPECT_TRUE(wait.running());
  inject(sim, {"port", "up", "mlx5_0/1"});
  const rdmatest::ExitStatus s = wait.require_exit(10s);
  EXPECT_TRUE(s.success()) << wait.describe();
  EXPECT_EQ(wait.stdout_text(), "mlx5_0/1 is ACTIVE\n");
}

TEST(Eventctl, WaitOnAPortAlreadyInTheStateReturnsAtOnce) {
  SimFabric sim(topology("two-adapters"));
  HubDaemon d(sim);
  const CommandResult r = run_command(eventctl(d, {"wait", "0c42:a103:006d:0b3a/2", "ACTIVE"}));
  EXPECT_EQ(r.exit_code(), 0) << r.err;
  EXPECT_EQ(r.out, "0c42:a103:006d:0b3a/2 is ACTIVE\n");
}

TEST(Eventctl, WaitTimesOutWithExitCode1AndTheLastKnownState) {
  SimFabric sim(topology("two-adapters"));
  HubDaemon d(sim);
  inject(sim, {"port", "down", "mlx5_0/1"});
  wait_for_seq(d.socket(), 1);
  const auto start = rdmatest::Clock::now();
  const CommandResult r = run_command(eventctl(d, {"wait", "mlx5_0/1", "active", "-t", "700ms"}));
  const auto took = rdmatest::Clock::now() - start;
  EXPECT_EQ(r.exit_code(), 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "rdma-eventctl: mlx5_0/1 is DOWN, not ACTIVE: gave up waiting\n");
  EXPECT_GE(took, 700ms);

  const CommandResult missing = run_command(eventctl(d, {"wait", "mlx5_7/1", "active", "-t", "0"}));
  EXPECT_EQ(missing.exit_code(), 1);
  EXPECT_NE(missing.err.find("mlx5_7/1 is not among rdma-eventd's ports; gave up waiting"),
            std::string::npos)
      << missing.err;
}

TEST(Eventctl, UsageAndConnectionErrorsHaveTheirExitCodes) {
  SimFabric sim(topology("two-adapters"));
  HubDaemon d(sim);
  EXPECT_EQ(run_command(eventctl(d, {"wait", "mlx5_0/1", "sideways"})).exit_code(), 64);
  EXPECT_EQ(run_command(eventctl(d, {"wait", "mlx5_*/1", "active"})).exit_code(), 64);
  EXPECT_EQ(run_command(eventctl(d, {"wait", "mlx5_0/1", "active", "-t", "soon"})).exit_code(), 64);
  EXPECT_EQ(run_command(eventctl(d, {"monitor", "--event", "port_down"})).exit_code(), 64);
  const CommandResult gone = run_command(
      {rdmatest::bin("rdma-eventctl"), "--socket", d.dir() + "/nothing.sock", "status"});
  EXPECT_EQ(gone.exit_code(), 69);
  EXPECT_EQ(gone.err, "rdma-eventctl: cannot reach rdma-eventd: " + d.dir() +
                          "/nothing.sock: No such file or directory\n");
}

}  // namespace
}  // namespace rdma_eventd::subtest
