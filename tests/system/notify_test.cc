// The daemon under a service manager, outside one: the real rdma-eventd on the simulator, with
// NOTIFY_SOCKET pointing at a datagram socket of the test (what systemd does for Type=notify).
// What it says (READY, STATUS, WATCHDOG, RELOADING, STOPPING) and when.
#include <gtest/gtest.h>
#include <signal.h>

#include "harness.h"

namespace rdma_eventd::systest {
namespace {

using namespace std::chrono_literals;
using rdmatest::DaemonProcess;
using rdmatest::inject;
using rdmatest::LineClient;
using rdmatest::Notification;
using rdmatest::SimFabric;
using rdmatest::topology;

// Every daemon here is the harness's: rdma-eventd -f --no-journal -c DIR/rdma-eventd.json
// --socket DIR/events.sock with NOTIFY_SOCKET set, constructed once it said READY=1 (ready()).

Notification require_ready(DaemonProcess& d) {
  return d.notify().require([](const Notification& m) { return m.has("READY", "1"); }, 30s,
                            "READY=1");
}

// The next STATUS= change (a datagram with STATUS= and nothing else).
std::string require_status(DaemonProcess& d) {
  return d.notify()
      .require(
          [](const Notification& m) { return m.vars.size() == 1 && !m.value("STATUS").empty(); },
          20s, "a STATUS= update")
      .value("STATUS");
}

bool is_watchdog(const Notification& m) {
  return m.has("WATCHDOG", "1");
}

TEST(Notify, ReadyComesOnlyOnceTheDevicesAreOpenAndTheSocketListens) {
  // Given a fabric of two adapters (three ports, all active), the daemon says READY=1 with its
  // status, and at that moment both devices are open and the socket answers.
  SimFabric sim(topology("two-adapters"));
  DaemonProcess d(sim);
  const Notification& ready = d.ready();
  const auto stats = sim.stats();
  EXPECT_EQ(ready.value("STATUS"), "2 devices, 3 ports up, 0 down, 0 subscribers");
  ASSERT_EQ(stats["contexts"].size(), 2u) << stats.dump();
  for (const auto& c : stats["contexts"]) {
    EXPECT_EQ(c["pid"], d.process().pid()) << stats.dump();
    EXPECT_TRUE(c["open"].get<bool>()) << stats.dump();
  }
  LineClient client(d.socket());
  EXPECT_EQ(client.require_json(10s, "the hello")["type"], "hello");
  // Nothing said it was ready before: the only earlier datagrams are status lines.
  const std::vector<Notification> before = d.notify().received();
  ASSERT_FALSE(before.empty());
  EXPECT_TRUE(before.back().has("READY", "1"));
  for (size_t i = 0; i + 1 < before.size(); ++i)
    EXPECT_EQ(before[i].value("READY"), "") << d.notify().describe();
}

TEST(Notify, StatusFollowsPortsAndSubscribersAsTheyChange) {
  SimFabric sim(topology("two-adapters"));
  DaemonProcess d(sim);
  {
    LineClient client(d.socket());
    client.require_json(10s, "the hello");
    EXPECT_EQ(require_status(d), "2 devices, 3 ports up, 0 down, 1 subscriber");
    inject(sim, {"port", "down", "mlx5_1/2"});
    EXPECT_EQ(require_status(d), "2 devices, 2 ports up, 1 down, 1 subscriber");
  }
  EXPECT_EQ(require_status(d), "2 devices, 2 ports up, 1 down, 0 subscribers");
  inject(sim, {"port", "up", "mlx5_1/2"});
  EXPECT_EQ(require_status(d), "2 devices, 3 ports up, 0 down, 0 subscribers");
  // A status is sent when it changes, never twice the same.
  std::string last;
  for (const Notification& m : d.notify().received()) {
    if (m.value("STATUS").empty()) continue;
    EXPECT_NE(m.value("STATUS"), last) << d.notify().describe();
    last = m.value("STATUS");
  }
}

TEST(Notify, StatusSaysWhenNoDeviceIsThere) {
  SimFabric sim("");  // an empty fabric
  DaemonProcess d(sim);
  EXPECT_EQ(d.ready().value("STATUS"), "waiting for RDMA devices, 0 subscribers");
}

TEST(Notify, ReloadIsBracketedByReloadingAndReadyWithTheNewStatus) {
  SimFabric sim(topology("two-adapters"));
  DaemonProcess d(sim);

  d.write_config(R"({"devices": {"exclude": ["mlx5_1"]}})");
  d.process().signal(SIGHUP);
  const Notification reloading = d.notify().require(
      [](const Notification& m) { return m.has("RELOADING", "1"); }, 20s, "RELOADING=1");
  // MONOTONIC_USEC: what systemd's notify-reload protocol checks the reload against.
  EXPECT_FALSE(reloading.value("MONOTONIC_USEC").empty()) << reloading.raw;
  EXPECT_NE(reloading.value("MONOTONIC_USEC").find_first_not_of("0123456789"), 0u);
  EXPECT_EQ(require_ready(d).value("STATUS"), "1 device, 1 port up, 0 down, 0 subscribers");

  // A bad file: the reload fails, the running configuration stays, and READY=1 still ends it.
  d.write_config(R"({"devices": {"exclude": 7}})");
  d.process().signal(SIGHUP);
  d.notify().require([](const Notification& m) { return m.has("RELOADING", "1"); }, 20s,
                     "RELOADING=1");
  EXPECT_EQ(require_ready(d).value("STATUS"), "1 device, 1 port up, 0 down, 0 subscribers");
  d.process().require_line(rdmatest::contains("reload failed, keeping the running configuration"),
                           10s, rdmatest::Stream::kStderr);
}

TEST(Notify, StopSaysStoppingAndExitsCleanly) {
  SimFabric sim(topology("two-adapters"));
  DaemonProcess d(sim);
  d.process().signal(SIGTERM);
  d.notify().require([](const Notification& m) { return m.has("STOPPING", "1"); }, 20s,
                     "STOPPING=1");
  EXPECT_TRUE(d.process().require_exit(20s).success()) << d.process().describe();
}

TEST(Notify, WatchdogPingsComeFromTheLoopAtHalfTheInterval) {
  SimFabric sim(topology("two-adapters"));
  DaemonProcess d(sim, {.env = {{"WATCHDOG_USEC", "400000"}}});
  EXPECT_TRUE(d.logged("watchdog: 400 ms, pinged every 200 ms")) << d.log_tail();
  for (int i = 0; i < 5; ++i)
    d.notify().require(is_watchdog, 5s, "WATCHDOG=1");

  // A loop that does not turn sends nothing: stopped, the daemon misses its pings, and they
  // resume once it runs again.
  d.process().signal(SIGSTOP);
  while (d.notify().next(0s)) {
  }  // what was sent before it stopped
  EXPECT_FALSE(d.notify().next(1s).has_value()) << d.notify().describe();
  d.process().signal(SIGCONT);
  d.notify().require(is_watchdog, 5s, "WATCHDOG=1 after SIGCONT");
}

TEST(Notify, NoWatchdogPingsWithoutWatchdogSec) {
  // Without WATCHDOG_USEC (and with one meant for another process) there is no watchdog
  // timer: through a subscriber, a port change and a reload, no WATCHDOG=1 is sent.
  for (const auto& env : std::vector<std::map<std::string, std::string>>{
           {}, {{"WATCHDOG_USEC", "400000"}, {"WATCHDOG_PID", "1"}}}) {
    SimFabric sim(topology("two-adapters"));
    DaemonProcess d(sim, {.env = env});
    {
      LineClient client(d.socket());
      client.require_json(10s, "the hello");
      require_status(d);
    }
    require_status(d);
    inject(sim, {"port", "down", "mlx5_0/1"});
    require_status(d);
    d.process().signal(SIGHUP);
    require_ready(d);
    d.process().signal(SIGTERM);
    d.notify().require([](const Notification& m) { return m.has("STOPPING", "1"); }, 20s,
                       "STOPPING=1");
    ASSERT_TRUE(d.process().require_exit(20s).success());
    for (const Notification& m : d.notify().received())
      EXPECT_FALSE(is_watchdog(m)) << d.notify().describe();
    EXPECT_FALSE(d.logged("watchdog:")) << d.process().describe();
  }
}

}  // namespace
}  // namespace rdma_eventd::systest
