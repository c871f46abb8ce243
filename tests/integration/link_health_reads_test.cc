// Counter reads that fail or never return, end to end (docs/health.md, "Unknown is not clean"):
// the real daemon reads the simulated ports' counters in threads beside its loop. A read that
// blocks (rdma-sim counter fail ... hang: a FIFO, as a firmware that stopped answering makes a
// counters/ read wait) holds no other device's records or reads, is reported once (a link_quality
// unknown record naming the file and since when, and one log line), and the port's link quality
// says unknown in status, in the health reply and in rdma-eventctl health until the read returns
// and a read judges it again.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "daemon_process.h"
#include "link_health_fixture.h"
#include "paths.h"
#include "process.h"
#include "test_support.h"

namespace rdma_eventd::test {
namespace {

json health_port(DaemonProcess& d, const std::string& device, int port) {
  const rdmatest::CommandResult js = rdmatest::run_command(
      {rdmatest::bin("rdma-eventctl"), "--socket", d.socket(), "health", "--json"});
  const json reply = json::parse(js.out, nullptr, false);
  EXPECT_TRUE(reply.contains("health")) << js.out << js.err;
  if (!reply.contains("health")) return json::object();
  for (const json& p : reply["health"]["ports"]) {
    if (p["device"] == device && p["port"] == port) return p;
  }
  ADD_FAILURE() << device << "/" << port << " is not in " << js.out;
  return json::object();
}

std::string health_line(DaemonProcess& d) {
  return rdmatest::run_command({rdmatest::bin("rdma-eventctl"), "--socket", d.socket(), "health"})
      .out;
}

TEST_F(LinkHealth, AHungReadIsReportedOnceAndHoldsNoOtherDevicesRecords) {
  json config = fast_link_health();
  config["read_deadline_s"] = 1;
  DaemonProcess& d = start_judged(config);
  ASSERT_TRUE(judged_clean(d, "mlx5_0", 1));
  EXPECT_EQ(health_port(d, "mlx5_0", 1)["link_quality"], "clean");

  const int64_t hung_from = link_test_wall_now_us();
  inject(sim_, {"counter", "fail", "mlx5_0/1", "symbol_error", "hang"});
  const Record unknown = next_link(d, "mlx5_0/1", "unknown");
  EXPECT_EQ(unknown.link->reason, "read_hung");
  EXPECT_EQ(unknown.link->counter, "symbol_error");
  // Since the read began: after the fault was set, a deadline (1 s) before the record.
  EXPECT_GE(unknown.link->since_us, hung_from);
  EXPECT_LE(unknown.link->since_us, unknown.time_us - 1'000'000);
  const std::string logged =
      d.require_log("mlx5_0: reading " + symbol_error_file() + " has not returned since ");
  EXPECT_NE(logged.find("mlx5_0 is not read again until the read returns"), std::string::npos)
      << logged;

  // Another device's reads go on: its errors are found while mlx5_0's read hangs (mlx5_1/1 is
  // RoCE: its netdev's uncorrectable FEC blocks).
  inject(sim_, {"counter", "add", "mlx5_1/1", "ethtool/fec_uncorrectable_blocks", "10"});
  EXPECT_EQ(next_link(d, "mlx5_1/1", "bad").link->count, 10u);

  // Another device's event while the read hangs: published at once.
  const auto before = std::chrono::steady_clock::now();
  inject(sim_, {"port", "down", "mlx5_1/1"});
  const Record down = next_record_where(
      d, [](const Record& r) { return r.event == EventKind::kPortErr && r.device == "mlx5_1"; },
      "port_err of mlx5_1/1");
  EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::seconds(1));
  EXPECT_EQ(down.port, 1u);

  // Unknown, never clean, everywhere it is said; the one read stays out.
  const json st = d.status();
  EXPECT_EQ(st["link_health"]["reads_hung"], 1);
  EXPECT_EQ(st["link_health"]["reads_in_flight"], 1);
  const json port = link_port(st, "mlx5_0", 1);
  EXPECT_EQ(port["quality"], "unknown") << port;
  EXPECT_EQ(port["unknown"], "read_hung") << port;
  EXPECT_EQ(port["since"], format_rfc3339_us(unknown.link->since_us)) << port;
  const json health = health_port(d, "mlx5_0", 1);
  EXPECT_EQ(health["health"], "healthy") << health;  // held as it was: no verdict from unknown
  EXPECT_EQ(health["link_quality"], "unknown") << health;
  EXPECT_EQ(health["link_quality_reason"], "read_hung") << health;
  EXPECT_NE(health_line(d).find("link quality not judged: mlx5_0/1 (read_hung)"),
            std::string::npos);

  // Released: the read returns, and a read judges the port again.
  inject(sim_, {"counter", "fail", "mlx5_0/1", "symbol_error", "ok"});
  d.require_log("mlx5_0: the read of " + symbol_error_file() + " returned after ");
  const Record judged = next_link(d, "mlx5_0/1", "judged");
  EXPECT_EQ(judged.link->reason, "read_hung");
  ASSERT_TRUE(judged_clean(d, "mlx5_0", 1));
  // Reported once: one count, one log line.
  EXPECT_EQ(d.status()["link_health"]["reads_hung"], 1);
  const std::string log = d.log_tail(400);
  EXPECT_EQ(log.find("has not returned since"), log.rfind("has not returned since")) << log;
}

TEST_F(LinkHealth, ADeviceRenamedWhileItsCountersAreReadIsNoFailureAndIsReadAsItsNewName) {
  // mlx5_1's read held in its first file (mlx5_1/1 is RoCE: counters/link_downed), reported
  // hung, while the simulator renames the device. Released, the read goes on to mlx5_1/2's
  // files by the old name, which went with the directory, and returns before the daemon knows
  // of the rename (no udev: SIGUSR1 tells it). That is no failure of its counters: renamed, it
  // is read as roce7 and judged again.
  json config = fast_link_health();
  config["read_deadline_s"] = 1;
  DaemonProcess& d = start_judged(config);
  ASSERT_TRUE(judged_clean(d, "mlx5_1", 2));
  inject(sim_, {"counter", "fail", "mlx5_1/1", "link_downed", "hang"});
  EXPECT_EQ(next_link(d, "mlx5_1/1", "unknown").link->reason, "read_hung");
  inject(sim_, {"rename", "mlx5_1", "roce7"});
  inject(sim_, {"counter", "fail", "roce7/1", "link_downed", "ok"});
  d.require_log("mlx5_1: the read of ");
  ::kill(d.process().pid(), SIGUSR1);
  std::vector<Record> between;
  const Record judged = next_link(d, "roce7/1", "judged", &between);
  EXPECT_EQ(judged.link->reason, "read_hung");
  bool renamed = false;
  for (const Record& r : between) {
    renamed |= r.event == EventKind::kDeviceRenamed;
    // The hung read's record of mlx5_1/2 may come after mlx5_1/1's; nothing else of mlx5_1.
    if (r.event == EventKind::kLinkQuality && r.link->reason != "read_hung") {
      EXPECT_NE(r.device, "mlx5_1") << r.port << " " << r.link->change << " " << r.link->reason;
    }
  }
  EXPECT_TRUE(renamed);
  EXPECT_EQ(d.status()["link_health"]["read_failures"], 0);
}

TEST_F(LinkHealth, AFailingReadSaysUnknownThenJudgedAndKeepsTheVerdict) {
  DaemonProcess& d = start_judged();
  inject(sim_, {"counter", "fail", "mlx5_0/1", "symbol_error", "unreadable"});
  const Record unknown = next_link(d, "mlx5_0/1", "unknown");
  EXPECT_EQ(unknown.link->reason, "read_failing");
  EXPECT_EQ(unknown.link->counter, "symbol_error");
  EXPECT_EQ(unknown.severity, Severity::kWarning);
  const json port = link_port(d.status(), "mlx5_0", 1);
  EXPECT_EQ(port["quality"], "unknown") << port;
  EXPECT_EQ(port["unknown"], "read_failing") << port;
  EXPECT_EQ(port["ber_estimate"], nullptr) << port;

  inject(sim_, {"counter", "fail", "mlx5_0/1", "symbol_error", "ok"});
  const Record judged = next_link(d, "mlx5_0/1", "judged");
  EXPECT_EQ(judged.link->reason, "read_failing");
  EXPECT_EQ(judged.severity, Severity::kInfo);
}

// A port whose first read fails has no baseline yet: the first read that succeeds is one, so
// what its counters gained while they could not be read is in it, never a verdict; the read
// after it judges the port, and the judged record names what the unknown one said.
TEST_F(LinkHealth, APortWhoseFirstReadFailsIsJudgedFromTheReadAfterTheFirstThatSucceeds) {
  inject(sim_, {"counter", "fail", "mlx5_0/1", "symbol_error", "unreadable"});
  DaemonProcess& d = launch();
  EXPECT_EQ(next_link(d, "mlx5_0/1", "unknown").link->reason, "read_failing");
  inject(sim_, {"counter", "add", "mlx5_0/1", "symbol_error", "50"});
  inject(sim_, {"counter", "fail", "mlx5_0/1", "symbol_error", "ok"});
  std::vector<Record> before;
  const Record judged = next_link(d, "mlx5_0/1", "judged", &before);
  EXPECT_EQ(judged.link->reason, "read_failing");
  for (const Record& r : before) {
    EXPECT_FALSE(r.event == EventKind::kLinkQuality && r.device == "mlx5_0")
        << r.port << " " << r.link->change << " " << r.link->reason;
  }
  const json port = link_port(d.status(), "mlx5_0", 1);
  EXPECT_EQ(port["quality"], "clean") << port;
  EXPECT_EQ(port["counters"]["symbol_error"], 50) << port;
  // What grows from then on is judged.
  expect_fifty_more_symbol_errors_bad(d);
}

// Errors counted while the link was down or training are not the new link's: its first read
// after it came up is a baseline, and only what grows after it is judged.
TEST_F(LinkHealth, ErrorsWhileALinkTrainsGiveNoVerdictAfterItComesUp) {
  DaemonProcess& d = start_judged();
  inject(sim_, {"port", "down", "mlx5_0/1"});
  inject(sim_, {"counter", "add", "mlx5_0/1", "symbol_error", "50"});
  inject(sim_, {"counter", "add", "mlx5_0/1", "link_error_recovery", "9"});
  inject(sim_, {"port", "up", "mlx5_0/1"});
  // Judged again: a baseline at the up, then a read that found the link clean.
  ASSERT_TRUE(rdmatest::wait_until(
      [&] {
        const json port = link_port(d.status(), "mlx5_0", 1);
        return port["quality"] == "clean" && port["counters"]["symbol_error"] == 50;
      },
      std::chrono::seconds(10)));
  // What grows now is judged.
  expect_fifty_more_symbol_errors_bad(d);
}

// A RoCE port is judged by what its PHY counts: its netdev's uncorrectable FEC blocks (read
// over the ethtool family, the simulator's stand-in here), not the IB counter group's
// counters/symbol_error, which the daemon does not read on it.
TEST_F(LinkHealth, ARocePortIsJudgedByItsNetdevsFecStatisticsNotBySymbolError) {
  DaemonProcess& d = start_judged();
  ASSERT_TRUE(judged_clean(d, "mlx5_1", 1));
  const json port = link_port(d.status(), "mlx5_1", 1);
  EXPECT_EQ(port["counters"]["ethtool/fec_uncorrectable_blocks"], 0) << port;
  EXPECT_TRUE(port["counters"].contains("ethtool/fec_corrected_blocks")) << port;
  EXPECT_FALSE(port["counters"].contains("symbol_error")) << port;
  // The IB counter group's symbol_error grows: nothing. Corrected blocks grow (FEC doing its
  // work): nothing. Uncorrectable ones: bit_errors, at the port's rate (EDR 4x: 0.5 allowed).
  inject(sim_, {"counter", "add", "mlx5_1/1", "symbol_error", "500"});
  inject(sim_, {"counter", "add", "mlx5_1/1", "ethtool/fec_corrected_blocks", "100000"});
  ASSERT_TRUE(rdmatest::wait_until(
      [&] {
        return link_port(d.status(), "mlx5_1", 1)["counters"]["ethtool/fec_corrected_blocks"] ==
               100000;
      },
      std::chrono::seconds(10)));
  inject(sim_, {"counter", "add", "mlx5_1/1", "ethtool/fec_uncorrectable_blocks", "2"});
  const Record bad = first_link(d, "mlx5_1/1", "bad");
  EXPECT_EQ(bad.link->fault, "bit_errors");
  EXPECT_EQ(bad.link->counter, "ethtool/fec_uncorrectable_blocks");
  EXPECT_EQ(bad.link->count, 2u);
  EXPECT_EQ(bad.link->rate_gbps, 100);
  EXPECT_EQ(next_port_verdict(d, "mlx5_1/1", "degraded").reason, "bit_errors");
}

}  // namespace
}  // namespace rdma_eventd::test
