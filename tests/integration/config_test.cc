// The configuration through the real binary: startup errors, --check-config, SIGHUP reloads,
// and the daemon detaching from where it was started.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>

#include "daemon_process.h"
#include "harness.h"
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
  // Over once READY=1 comes back; mlx5_1 is closed by then.
  EXPECT_EQ(daemon.reload().value("STATUS"), "1 device, 0 ports up, 1 down, 0 subscribers");

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
  daemon.reload();
  const std::string line = daemon.require_log("reload failed", 0s);
  EXPECT_NE(line.find(daemon.config_path() + ": severity.lid_change: unknown severity 'extreme'"),
            std::string::npos)
      << line;
  inject(sim, {"lid", "mlx5_0/1", "30"});
  const Record r = daemon.next_record();
  EXPECT_EQ(r.event, EventKind::kLidChange);
  EXPECT_EQ(r.severity, Severity::kWarning) << "the running configuration stays in force";
  EXPECT_TRUE(daemon.process().running());
}

// A process the test did not start as its child, stopped on the way out if the test left it.
struct NotAChild {
  pid_t pid = 0;
  ~NotAChild() {
    if (pid > 0) ::kill(pid, SIGKILL);
  }
  // SIGTERM, then waits for it to go (a pidfd: it cannot be waited for as a child).
  bool stop(rdmatest::Duration timeout) {
    const rdma_eventd::internal::UniqueFd pidfd(
        static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
    if (!pidfd || ::kill(pid, SIGTERM) != 0) return false;
    pollfd p{pidfd.get(), POLLIN, 0};
    const int ms =
        static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(timeout).count());
    if (::poll(&p, 1, ms) != 1) return false;
    pid = 0;
    return true;
  }
};

std::string link_target(const std::string& path) {
  char buf[4096];
  const ssize_t n = ::readlink(path.c_str(), buf, sizeof buf);
  return n < 0 ? "(" + std::string(std::strerror(errno)) + ")"
               : std::string(buf, static_cast<size_t>(n));
}

TEST(Detached, TheStarterExitsOnceReadyAndTheDaemonLeavesTheTerminalAndItsDirectory) {
  // Started without -f from a directory of its own, with relative paths: the command returns 0
  // once the daemon is ready. The daemon runs on in "/", its standard input and output on
  // /dev/null and its log still on standard error; its paths still name the same files, so a
  // SIGHUP reloads the file it was given.
  SimFabric sim(topology("two-adapters"));
  rdmatest::TempDir dir("rdma-detach");
  dir.write("rdma-eventd.json", "{}");
  rdmatest::NotifyReceiver notify;
  rdmatest::SpawnOptions options = notify.spawn_options();
  options.cwd = dir.path();
  options.stdin_pipe = true;  // stdin and stdout are pipes of the test: both must be let go
  rdmatest::Process starter = sim.spawn({rdmatest::bin("rdma-eventd"), "--no-journal", "-c",
                                         "rdma-eventd.json", "--socket", "events.sock"},
                                        options);
  const rdmatest::ExitStatus started = starter.require_exit(30s);
  const rdmatest::Notification ready =
      notify.require([](const rdmatest::Notification& m) { return m.has("READY", "1"); }, 0s,
                     "READY=1 before the starter exits");
  NotAChild daemon{ready.pid};
  ASSERT_TRUE(started.success()) << starter.describe();
  ASSERT_NE(ready.pid, starter.pid()) << "the daemon is the starter's child";
  EXPECT_EQ(ready.value("STATUS"), "2 devices, 3 ports up, 0 down, 0 subscribers");

  const std::string proc = "/proc/" + std::to_string(ready.pid);
  EXPECT_EQ(link_target(proc + "/cwd"), "/");
  EXPECT_EQ(link_target(proc + "/fd/0"), "/dev/null");
  EXPECT_EQ(link_target(proc + "/fd/1"), "/dev/null");
  EXPECT_EQ(link_target(proc + "/fd/2").rfind("pipe:", 0), 0u) << "the log stays where it was";
  starter.require_line(rdmatest::contains("ready: watching 2 devices"), 10s,
                       rdmatest::Stream::kStderr, "the daemon's log on the starter's stderr");
  LineClient client(dir.file("events.sock"));
  EXPECT_EQ(client.require_json(10s, "the hello")["type"], "hello");

  dir.write("rdma-eventd.json", R"({"devices": {"exclude": ["mlx5_1"]}})");
  ASSERT_EQ(::kill(ready.pid, SIGHUP), 0);
  notify.require([](const rdmatest::Notification& m) { return m.has("RELOADING", "1"); }, 20s,
                 "RELOADING=1");
  EXPECT_EQ(notify
                .require([](const rdmatest::Notification& m) { return m.has("READY", "1"); }, 20s,
                         "READY=1 after the reload")
                .value("STATUS"),
            "1 device, 1 port up, 0 down, 1 subscriber");
  ASSERT_TRUE(daemon.stop(30s)) << "the daemon did not stop on SIGTERM";
  EXPECT_EQ(::access(dir.file("events.sock").c_str(), F_OK), -1) << "its socket is removed";
}

}  // namespace
}  // namespace rdma_eventd::test
