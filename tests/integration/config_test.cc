// The configuration through the real binary: startup errors, --check-config, SIGHUP reloads.
#include <gtest/gtest.h>
#include <signal.h>

#include "daemon_process.h"
#include "paths.h"
#include "test_support.h"

namespace rdma_eventd::test {
namespace {

using rdmatest::SimFabric;
using rdmatest::topology;

TEST(ConfigFile, ABadFileStopsTheStartWithExit78NamingFileAndKey) {
  rdmatest::TempDir dir;
  const std::string path = dir.write("bad.json", R"({"devices": {"exclude": ["ok", 42]}})");
  auto r = rdmatest::run_command({rdmatest::bin("rdma-eventd"), "-f", "-c", path});
  EXPECT_EQ(r.exit_code(), 78);
  EXPECT_EQ(r.err,
            "rdma-eventd: " + path + ": devices.exclude[1]: expected a string, got a number\n");
  EXPECT_EQ(r.out, "");
}

TEST(ConfigFile, AMissingExplicitFileIsAnError) {
  auto r = rdmatest::run_command({rdmatest::bin("rdma-eventd"), "-f", "-c", "/nonexistent.json"});
  EXPECT_EQ(r.exit_code(), 78);
  EXPECT_EQ(r.err, "rdma-eventd: /nonexistent.json: cannot read: No such file or directory\n");
}

TEST(ConfigFile, CheckConfigValidatesWithoutStarting) {
  rdmatest::TempDir dir;
  const std::string good = dir.write("good.json", R"({"log_level": "debug"})");
  auto ok = rdmatest::run_command({rdmatest::bin("rdma-eventd"), "--check-config", "-c", good});
  EXPECT_EQ(ok.exit_code(), 0);
  EXPECT_EQ(ok.out, good + ": configuration OK\n");
  const std::string bad = dir.write("bad.json", "{\"log_level\": 3}");
  auto ko = rdmatest::run_command({rdmatest::bin("rdma-eventd"), "--check-config", "-c", bad});
  EXPECT_EQ(ko.exit_code(), 78);
  EXPECT_EQ(ko.err, "rdma-eventd: " + bad + ": log_level: expected a string, got a number\n");
  auto shipped = rdmatest::run_command({rdmatest::bin("rdma-eventd"), "--check-config", "-c",
                                        rdmatest::source_dir() + "/config/rdma-eventd.json"});
  EXPECT_EQ(shipped.exit_code(), 0) << shipped.err;
}

TEST(ConfigFile, UsageErrorsExit64) {
  auto r = rdmatest::run_command({rdmatest::bin("rdma-eventd"), "--nope"});
  EXPECT_EQ(r.exit_code(), 64);
  EXPECT_EQ(r.err, "rdma-eventd: unknown option '--nope'\nTry 'rdma-eventd --help'.\n");
}

TEST(Reload, AGoodConfigurationAppliesOnSighup) {
  SimFabric sim(topology("two-adapters"));
  DaemonProcess daemon(sim);
  inject(sim, {"port", "down", "mlx5_0/1"});
  EXPECT_EQ(daemon.next_record().severity, Severity::kError);

  daemon.write_config(R"({"severity": {"port_err": "critical"},
                          "devices": {"exclude": ["mlx5_1"]}})");
  daemon.process().signal(SIGHUP);
  daemon.require_log("mlx5_1: excluded by the configuration now, closing it");
  daemon.require_log("configuration reloaded");

  inject(sim, {"port", "down", "mlx5_1/1"});  // excluded now: no record
  inject(sim, {"port", "up", "mlx5_0/1"});
  inject(sim, {"port", "down", "mlx5_0/1"});
  const Record up = daemon.next_record();
  EXPECT_EQ(up.event, EventKind::kPortActive);
  EXPECT_EQ(up.seq, 2u) << "a reload continues the stream";
  const Record down = daemon.next_record();
  EXPECT_EQ(down.event, EventKind::kPortErr);
  EXPECT_EQ(down.severity, Severity::kCritical);
}

TEST(Reload, ABadConfigurationIsReportedAndTheOldOneStays) {
  SimFabric sim(topology("two-adapters"));
  DaemonProcess daemon(sim, R"({"severity": {"lid_change": "warning"}})");
  daemon.write_config(R"({"severity": {"lid_change": "extreme"}})");
  daemon.process().signal(SIGHUP);
  const std::string line = daemon.require_log("reload failed");
  EXPECT_NE(line.find(daemon.config_path() + ": severity.lid_change: unknown severity 'extreme'"),
            std::string::npos)
      << line;
  inject(sim, {"lid", "mlx5_0/1", "30"});
  const Record r = daemon.next_record();
  EXPECT_EQ(r.event, EventKind::kLidChange);
  EXPECT_EQ(r.severity, Severity::kWarning) << "the running configuration stays in force";
  EXPECT_TRUE(daemon.process().running());
}

}  // namespace
}  // namespace rdma_eventd::test
