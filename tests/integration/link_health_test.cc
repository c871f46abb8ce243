// Link quality end to end (docs/health.md, "Link quality"): the real daemon reads the simulated
// ports' error counters (rdma-sim counter ...) through the same sysfs root it reads everything
// else from; its link_quality and port_health records are read from its output and back from a
// real journald. A cable that starts dropping bits makes its port degraded with a record that
// says why, and it clears by itself after the clean period; pegged and reset counters never
// pass for healthy or for broken; a link_downed step without a port event is a down; a counter
// that cannot be read is logged once and its device left alone until it is opened again; with
// counter health off the daemon never wakes; rdma-eventctl history --incidents reads the bad
// link back from the journal as an incident of its port; a restart on the same boot keeps a bad
// link degraded until its clean period, counted from before the restart, has passed.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "daemon_process.h"
#include "journal_sandbox.h"
#include "json_members.h"
#include "link_health_fixture.h"
#include "paths.h"
#include "proc_info.h"
#include "process.h"
#include "temp_dir.h"
#include "test_support.h"

namespace rdma_eventd::test {
namespace {

TEST_F(LinkHealth, ACableDroppingBitsIsDegradedWithARecordThenCleanAfterTheCleanPeriod) {
  DaemonProcess& d = start_judged();

  // One error within the allowance: nothing. Then 49 more: over it.
  inject(sim_, {"counter", "add", "mlx5_0/1", "symbol_error", "1"});
  inject(sim_, {"counter", "add", "mlx5_0/1", "symbol_error", "49"});
  const Record bad = first_link(d, "mlx5_0/1", "bad");
  ASSERT_TRUE(bad.link);
  EXPECT_DOUBLE_EQ(bad.link->ber, 50 / (200e9 * 5));
  // Whether the two additions fall in one sample or two, both are within the window.
  LinkQualityEvent want = bad_bit_errors(50, 50, 1, 5, 200);
  want.ber = bad.link->ber;
  EXPECT_EQ(*bad.link, want);
  EXPECT_EQ(bad.severity, Severity::kWarning);
  EXPECT_EQ(bad.node_guid, "0c42:a103:00f6:5e44");

  const Record degraded = next_port_verdict(d, "mlx5_0/1", "degraded");
  EXPECT_EQ(degraded.reason, "bit_errors");
  EXPECT_EQ(degraded.previous_health, "healthy");
  // `health` exits 1 (a port in service is not healthy) and names the reason.
  const auto health =
      rdmatest::run_command({rdmatest::bin("rdma-eventctl"), "--socket", d.socket(), "health"});
  EXPECT_EQ(health.exit_code(), 1) << health.out << health.err;
  EXPECT_NE(health.out.find("mlx5_0/1 degraded (bit_errors"), std::string::npos) << health.out;

  // The same record in the journal, with fields to filter on.
  const json j = journal_entry_of(d, bad);
  const json fields = {{"RDMA_EVENT", "link_quality"},
                       {"RDMA_LINK_CHANGE", "bad"},
                       {"RDMA_LINK_FAULT", "bit_errors"},
                       {"RDMA_LINK_COUNTER", "symbol_error"},
                       {"PRIORITY", "4"}};
  EXPECT_EQ(rdmatest::members_of(j, fields), fields);

  // No more errors: clean again after 3 s, by the daemon's timer.
  const Record clean = next_link(d, "mlx5_0/1", "clean");
  EXPECT_EQ(clean.link->fault, "bit_errors");
  EXPECT_EQ(clean.severity, Severity::kNotice);
  EXPECT_GE(clean.time_us - bad.time_us, 3'000'000);
  const Record healthy = next_port_verdict(d, "mlx5_0/1", "healthy");
  EXPECT_EQ(healthy.reason, "clean_period_elapsed");
  EXPECT_EQ(healthy.previous_health, "degraded");

  // The fleet's view of that journal (history --incidents reads RDMA_LINK_CHANGE): the bad
  // link and the verdict it caused are one incident of the port; clean is no fault.
  journal_entry_of(d, healthy);  // journaled, and everything before it
  const auto incidents = rdmatest::run_command({rdmatest::bin("rdma-eventctl"), "history", "-D",
                                                "/run/log/journal", "--incidents", "--json"});
  ASSERT_EQ(incidents.exit_code(), 0) << incidents.err;
  ASSERT_EQ(incidents.out_lines().size(), 1u) << incidents.out;
  const json incident = json::parse(incidents.out_lines()[0]);
  const std::string host = j.value("_HOSTNAME", "");
  EXPECT_EQ(incident["class"], "port");
  EXPECT_EQ(incident["evidence"],
            host +
                " mlx5_0/1: 1 link_quality bad, 1 port_health degraded: errors on the link (its "
                "error counters), the cable or transceiver");
  EXPECT_EQ(incident["events"], json({{"link_quality bad", 1}, {"port_health degraded", 1}}));
  EXPECT_EQ(incident["records"], 2);
  EXPECT_EQ(incident["hosts"].size(), 1u);
}

TEST_F(LinkHealth, ARestartKeepsABadLinkDegradedUntilItsCleanPeriodFromBeforeTheRestart) {
  json link = fast_link_health();
  link["clean_s"] = 8;  // long enough to restart within it
  // A 2 s window: the burst is out of it (no window over) well before the restart, so the
  // clean period runs from the last read before the restart that found it over.
  link["bit_errors"] = json::array({{{"ber", 1e-12}, {"window_s", 2}}});
  Record bad;
  {
    DaemonProcess d(sim_, link_options(sim_, state_.path(), link));
    EXPECT_EQ(next_port_verdict(d, "mlx5_0/1", "healthy").reason, "first_seen");
    ASSERT_TRUE(every_port_read(d));
    inject(sim_, {"counter", "add", "mlx5_0/1", "symbol_error", "50"});
    bad = next_link(d, "mlx5_0/1", "bad");
    EXPECT_EQ(next_port_verdict(d, "mlx5_0/1", "degraded").reason, "bit_errors");
    // Stopped well after the burst left the window (4 s, four timer periods): a clean period
    // counted from the restart would end clearly later than one counted from before it.
    ASSERT_TRUE(
        rdmatest::wait_until([&] { return link_test_wall_now_us() >= bad.time_us + 4'000'000; },
                             std::chrono::seconds(10)));
    EXPECT_EQ(d.stop().code, 0);
  }
  std::ifstream saved(state_.file("link-quality.json"));
  ASSERT_TRUE(saved) << "no link quality state in " << state_.path();
  const json doc = json::parse(saved);
  const json& port = doc["devices"][0]["ports"][0];
  EXPECT_EQ(doc["devices"][0]["device"], "mlx5_0");
  ASSERT_EQ(port["faults"].size(), 1u) << port;
  EXPECT_EQ(port["faults"][0]["fault"], "bit_errors");
  EXPECT_EQ(port["faults"][0]["counters"], json::array({"symbol_error"}));
  EXPECT_TRUE(port["faults"][0]["last_over_monotonic_us"].is_number_integer()) << port;

  const int64_t restarted_us = link_test_wall_now_us();
  DaemonProcess d(sim_, link_options(sim_, state_.path(), link));
  EXPECT_TRUE(d.logged("link quality: restored")) << d.log_tail();
  // Right after the restart the port is still degraded, for its bit errors.
  const auto health =
      rdmatest::run_command({rdmatest::bin("rdma-eventctl"), "--socket", d.socket(), "health"});
  EXPECT_EQ(health.exit_code(), 1) << health.out << health.err;
  EXPECT_NE(health.out.find("mlx5_0/1 degraded (bit_errors"), std::string::npos) << health.out;

  std::vector<Record> before;
  const Record clean = next_link(d, "mlx5_0/1", "clean", &before);
  EXPECT_EQ(clean.link->fault, "bit_errors");
  EXPECT_EQ(clean.link->value, 50u);
  // At the clean period counted from the last read over the rule before the restart (at most
  // 2 s after the bad one), and the timer's second.
  EXPECT_GE(clean.time_us - bad.time_us, 8'000'000);
  EXPECT_LT(clean.time_us - bad.time_us, 11'000'000);
  EXPECT_LT(clean.time_us - restarted_us, 7'000'000);
  const Record healthy = next_port_verdict(d, "mlx5_0/1", "healthy", &before);
  EXPECT_EQ(healthy.reason, "clean_period_elapsed");
  EXPECT_EQ(healthy.previous_health, "degraded");
  // Nothing else before it: no first verdict again, no link record (no reset, no bad again).
  expect_no_records(before, "before the clean period ended");
}

TEST_F(LinkHealth, TheAllowanceScalesWithTheRateAPortRetrainedToRunsAt) {
  // mlx5_1/1 is RoCE at EDR 4x (100 Gb/s): 1e-12 * 100e9 * 5 = 0.5 uncorrectable FEC blocks
  // allowed, so one is over; mlx5_0/1 (InfiniBand) at HDR 4x is allowed one symbol error.
  DaemonProcess& d = start();
  inject(sim_, {"counter", "add", "mlx5_0/1", "symbol_error", "1"});
  inject(sim_, {"counter", "add", "mlx5_1/1", "ethtool/fec_uncorrectable_blocks", "1"});
  const Record bad = first_link(d, "mlx5_1/1", "bad");
  EXPECT_EQ(bad.link->rate_gbps, 100);
  EXPECT_EQ(bad.link->allowed, 0u);
  EXPECT_EQ(bad.link->count, 1u);
}

TEST_F(LinkHealth, PeggedAndResetCountersPassNeitherForHealthyNorForBroken) {
  // An allowance large enough that the climb to the maximum is not itself over it.
  json link = fast_link_health();
  link["bit_errors"] = json::array({{{"ber", 1e-6}, {"window_s", 5}}});
  DaemonProcess& d = start_judged(link);

  // At 65535 the 16-bit symbol_error counts nothing more: reported once.
  inject(sim_, {"counter", "set", "mlx5_0/1", "symbol_error", "65535"});
  const Record pegged = next_link(d, "mlx5_0/1", "pegged");
  EXPECT_EQ(pegged.link->counter, "symbol_error");
  EXPECT_EQ(pegged.link->value, 65535u);
  EXPECT_EQ(pegged.link->pegged, std::vector<std::string>{"symbol_error"});
  EXPECT_EQ(pegged.severity, Severity::kWarning);
  // Its bit error rate is not known from then on: no estimate, in status and the metrics.
  const json st = d.status();
  size_t seen = 0;
  for (const json& port : st["link_health"]["ports"]) {
    if (port["device"] == "mlx5_0" && port["port"] == 1) {
      ++seen;
      EXPECT_EQ(port["ber_estimate"], nullptr) << port;
      EXPECT_EQ(port["pegged"], "symbol_error") << port;
    }
  }
  EXPECT_EQ(seen, 1u) << st["link_health"];
  const rdmatest::CommandResult metrics =
      rdmatest::run_command({rdmatest::bin("rdma-eventctl"), "--socket", d.socket(), "metrics"});
  ASSERT_EQ(metrics.exit_code(), 0) << metrics.err;
  EXPECT_NE(metrics.out.find("# TYPE rdma_eventd_link_ber_estimate gauge\n"), std::string::npos);
  EXPECT_EQ(metrics.out.find("rdma_eventd_link_ber_estimate{device=\"mlx5_0\",port=\"1\"}"),
            std::string::npos)
      << metrics.out;

  // Someone resets the counters: a new baseline, said once, no verdict either way.
  inject(sim_, {"counter", "reset", "mlx5_0/1"});
  std::vector<Record> between;
  const Record reset = next_link(d, "mlx5_0/1", "reset", &between);
  EXPECT_EQ(reset.link->counter, "symbol_error");
  EXPECT_EQ(reset.link->value, 0u);
  EXPECT_EQ(reset.link->pegged, std::vector<std::string>{});
  EXPECT_EQ(reset.severity, Severity::kInfo);
  // Then real growth over the rule: the one record that follows is bad, nothing before it.
  inject(sim_, {"counter", "add", "mlx5_0/1", "link_error_recovery", "3"});
  const Record bad = next_link(d, "mlx5_0/1", "bad", &between);
  EXPECT_EQ(bad.link->fault, "link_recoveries");
  EXPECT_EQ(bad.link->count, 3u);
  for (const Record& r : between) {
    EXPECT_NE(r.event, EventKind::kPortHealth) << r.health;
    EXPECT_NE(r.event, EventKind::kLinkQuality) << r.link->change;
  }
  EXPECT_EQ(next_port_verdict(d, "mlx5_0/1", "degraded").reason, "link_recoveries");
}

TEST_F(LinkHealth, ALinkDownTooBriefForAnEventCountsAsADown) {
  DaemonProcess& d = start_judged(fast_link_health(),
                                  {{"enabled", true}, {"flap_downs", 3}, {"flap_window_s", 60}});
  // Once its first read is done: a down read while that read opens link_downed may be in its
  // value or not, so it is carried to the next read, which may then find one hidden down less.
  ASSERT_TRUE(judged_clean(d, "mlx5_0", 1));
  // A real down and up: link_downed steps with the port_err the daemon saw: tied, not hidden.
  // The up waits for the down's verdict: injected at once, it could come before the daemon
  // queried the port for the port_err, which would then read the port active.
  inject(sim_, {"port", "down", "mlx5_0/1"});
  EXPECT_EQ(next_port_verdict(d, "mlx5_0/1", "down").reason, "link_down");
  inject(sim_, {"port", "up", "mlx5_0/1"});
  EXPECT_EQ(next_port_verdict(d, "mlx5_0/1", "healthy").reason, "link_up");
  // Two downs no event told of.
  inject(sim_, {"counter", "add", "mlx5_0/1", "link_downed", "2"});
  const Record hidden = first_link(d, "mlx5_0/1", "hidden_down");
  EXPECT_EQ(hidden.link->counter, "link_downed");
  EXPECT_EQ(hidden.link->count, 2u);
  EXPECT_EQ(hidden.link->value, 3u);
  // With the real one, three downs within the window: flapping.
  const Record flapping = next_port_verdict(d, "mlx5_0/1", "flapping");
  EXPECT_EQ(flapping.reason, "flaps_in_window");
  EXPECT_EQ(flapping.downs_in_window, 3u);
}

TEST_F(LinkHealth, ADownReadBeforeTheFirstReadOfItsCounterIsInThatBaseline) {
  // mlx5_1's first read waits on port 1's link_downed while port 2 goes down and up: port 2's
  // files are opened once it is released, after its port_err was read, so port 2's first
  // value holds that down. A baseline shows no growth, yet that down is no more to explain:
  // the two downs no event told of that follow are one hidden_down of two.
  inject(sim_, {"counter", "fail", "mlx5_1/1", "link_downed", "hang"});
  DaemonProcess& d = launch(fast_link_health(), {{"enabled", true}, {"flap_downs", 10}});
  EXPECT_EQ(next_port_verdict(d, "mlx5_1/2", "healthy").reason, "first_seen");
  inject(sim_, {"port", "down", "mlx5_1/2"});
  EXPECT_EQ(next_port_verdict(d, "mlx5_1/2", "down").reason, "link_down");
  inject(sim_, {"port", "up", "mlx5_1/2"});
  EXPECT_EQ(next_port_verdict(d, "mlx5_1/2", "healthy").reason, "link_up");
  EXPECT_EQ(link_port(d.status(), "mlx5_1", 2)["unknown"], "not_read");
  inject(sim_, {"counter", "fail", "mlx5_1/1", "link_downed", "ok"});
  ASSERT_TRUE(rdmatest::wait_until(
      [&] { return link_port(d.status(), "mlx5_1", 2)["counters"]["link_downed"] == 1; },
      std::chrono::seconds(10)));
  inject(sim_, {"counter", "add", "mlx5_1/2", "link_downed", "2"});
  const Record hidden = first_link(d, "mlx5_1/2", "hidden_down");
  EXPECT_EQ(hidden.link->count, 2u);
  EXPECT_EQ(hidden.link->value, 3u);
}

TEST_F(LinkHealth, DownsWhoseEventsAreReadAfterTheCounterAreNotHidden) {
  // A burst of flaps: the counter shows three downs before the daemon has read their three
  // events (queued, read in a later batch). They are explained once read: no hidden_down. A
  // fourth step of the counter with no event at all is one, counted alone.
  // Read every 5 s, and at a port's link event when its last read is a second old or more:
  // the first port_err's record reads the counters, while the other two events wait.
  DaemonProcess& d = start_between_reads(5);
  inject(sim_, {"counter", "add", "mlx5_0/1", "link_downed", "3"});
  for (int i = 0; i < 3; ++i)
    inject(sim_, {"event", "mlx5_0/1", "port_err"});
  inject(sim_, {"counter", "add", "mlx5_0/1", "link_downed", "1"});
  expect_one_hidden_down(d, "mlx5_0/1", 4, 3);
}

TEST_F(LinkHealth, DownsReadBeforeTheCounterShowsThemAreCarriedAcrossTwoReads) {
  // The other way round: port_errs read before link_downed shows their downs (a burst read
  // while the counter is read beside the loop). Each read sets the downs carried from the one
  // before against its growth first: one down left over is no hidden_down; a step of the
  // counter with no event at all is one, counted alone.
  DaemonProcess& d = start_between_reads(4);
  uint64_t before = link_samples(d);
  inject(sim_, {"event", "mlx5_0/1", "port_err"});  // its down not counted yet: carried
  ASSERT_TRUE(sampled_after(d, before));
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  before = link_samples(d);
  inject(sim_, {"counter", "add", "mlx5_0/1", "link_downed", "1"});  // the first down shows
  inject(sim_, {"event", "mlx5_0/1", "port_err"});  // the second down, not counted yet
  ASSERT_TRUE(sampled_after(d, before));
  // The second down shows, with one no event told of: the timer's read finds them.
  inject(sim_, {"counter", "add", "mlx5_0/1", "link_downed", "2"});
  expect_one_hidden_down(d, "mlx5_0/1", 3, 2);
}

TEST_F(LinkHealth, ACounterThatCannotBeReadIsLoggedOnceAndItsDeviceLeftAloneUntilOpenedAgain) {
  // Each way a counter file fails is unit-tested (SysfsCounters.*); here the daemon's handling
  // of one that will not pass: a file that holds no number.
  DaemonProcess& d = start_judged();
  inject(sim_, {"counter", "fail", "mlx5_0/1", "symbol_error", "garbage"});
  EXPECT_EQ(read_failure(d), "(" + symbol_error_file() +
                                 ": not a number: 'N/A (no PMA)'): link quality is not judged on "
                                 "mlx5_0 until it is opened again");
  EXPECT_EQ(d.status()["link_health"]["read_failures"], 1);
  EXPECT_EQ(d.status()["link_health"]["read_retries"], 0);
  // Left alone while the other device is still read: its errors make it bad, and its clean
  // period (3 s, three of the timer's periods) passes without another line about mlx5_0.
  inject(sim_, {"counter", "add", "mlx5_1/1", "ethtool/fec_uncorrectable_blocks", "10"});
  // mlx5_1/1 is RoCE: its bit errors are its netdev's uncorrectable FEC blocks.
  EXPECT_EQ(next_link(d, "mlx5_1/1", "bad").link->counter, "ethtool/fec_uncorrectable_blocks");
  EXPECT_EQ(next_link(d, "mlx5_1/1", "clean").link->counter, "ethtool/fec_uncorrectable_blocks");
  EXPECT_EQ(d.status()["link_health"]["read_failures"], 1);

  // Fixed and opened again (a replug, found by the rescan SIGUSR1 asks for): read again, from
  // a new baseline.
  inject(sim_, {"counter", "fail", "mlx5_0/1", "symbol_error", "ok"});
  inject(sim_, {"unplug", "mlx5_0"});
  EXPECT_EQ(next_port_verdict(d, "mlx5_0/1", "gone").reason, "device_removed");
  inject(sim_, {"replug", "mlx5_0"});
  ::kill(d.process().pid(), SIGUSR1);
  EXPECT_EQ(next_port_verdict(d, "mlx5_0/1", "healthy").reason, "device_added");
  inject(sim_, {"counter", "add", "mlx5_0/1", "symbol_error", "50"});
  EXPECT_EQ(next_link(d, "mlx5_0/1", "bad").link->count, 50u);
  // One line for the failure, never one per read.
  EXPECT_EQ(read_failure_lines(d), 1u);
}

// A read that fails as a failed firmware command does (EIO, ETIMEDOUT, EINVAL: here the
// simulator's unreadable file) may pass: the device is read again after one interval (1 s
// here), then 2 s, 4 s ..., logged once, each failure counted; when a read succeeds, what the
// counters gained meanwhile is judged.
TEST_F(LinkHealth, AReadThatFailsInAWayThatMayPassIsRetriedLessAndLessOftenUntilItSucceeds) {
  DaemonProcess& d = start_judged();
  inject(sim_, {"counter", "fail", "mlx5_0/1", "symbol_error", "unreadable"});
  EXPECT_EQ(read_failure(d), "(" + symbol_error_file() +
                                 ": Is a directory), a failure that may pass: reading mlx5_0 "
                                 "again in 1 s, then at twice the interval each time up to 32 s "
                                 "while it fails; its link quality is not judged meanwhile");
  // Read again (1 s after the first failure), and failed again.
  ASSERT_TRUE(rdmatest::wait_until([&] { return d.status()["link_health"]["read_retries"] >= 2; },
                                   std::chrono::seconds(15)));
  EXPECT_EQ(d.status()["link_health"]["read_failures"], 0);

  inject(sim_, {"counter", "add", "mlx5_0/1", "symbol_error", "50"});
  inject(sim_, {"counter", "fail", "mlx5_0/1", "symbol_error", "ok"});
  const Record bad = next_link(d, "mlx5_0/1", "bad");
  EXPECT_EQ(bad.link->counter, "symbol_error");
  EXPECT_EQ(bad.link->count, 50u);
  const std::string back = d.require_log("mlx5_0: its counters are read again, after ");
  const uint64_t retries = d.status()["link_health"]["read_retries"].get<uint64_t>();
  EXPECT_NE(back.find("after " + std::to_string(retries) + " failed reads"), std::string::npos)
      << back << " (" << retries << " retries)";
  // One warning for the whole failure, never one per read.
  EXPECT_EQ(read_failure_lines(d), 1u);
}

// Unknown is not clean: a bad link that is not read keeps its fault past its clean period,
// whether its device's reads fail (mlx5_0) or its link is down (mlx5_1); a read once it is
// readable and up again, finding no growth, clears it.
TEST_F(LinkHealth, ABadLinkThatIsNotReadStaysDegradedPastItsCleanPeriodUntilAReadShowsItClean) {
  DaemonProcess& d = start_judged();
  EXPECT_EQ(next_port_verdict(d, "mlx5_1/1", "healthy").reason, "first_seen");
  // The time of the `change` record of each of the two ports, in whichever order they come.
  auto both = [&d](const std::string& change) {
    std::map<std::string, int64_t> at;
    while (at.size() < 2) {
      const Record r = next_record_where(
          d,
          [&](const Record& one) {
            return one.event == EventKind::kLinkQuality && one.link && one.link->change == change &&
                   one.port == 1;
          },
          "a link_quality " + change + " record");
      at[r.device] = r.time_us;
    }
    return at;
  };
  inject(sim_, {"counter", "add", "mlx5_0/1", "symbol_error", "50"});
  inject(sim_, {"counter", "add", "mlx5_1/1", "ethtool/fec_uncorrectable_blocks", "50"});
  const std::map<std::string, int64_t> bad = both("bad");
  inject(sim_, {"counter", "fail", "mlx5_0/1", "symbol_error", "unreadable"});
  inject(sim_, {"port", "down", "mlx5_1/1"});
  d.require_log("mlx5_0/1: cannot read its counters");
  // Past the clean period (3 s) of both, by a second more: a span to measure, not a wait.
  const int64_t past = std::max(bad.at("mlx5_0"), bad.at("mlx5_1")) + 4'000'000;
  ASSERT_TRUE(rdmatest::wait_until([&] { return link_test_wall_now_us() >= past; },
                                   std::chrono::seconds(10)));
  const json st = d.status();
  for (const json& port : st["link_health"]["ports"]) {
    if (port["port"] == 1) {
      EXPECT_EQ(port["bad"], true) << port;
    }
  }

  const int64_t back = link_test_wall_now_us();
  inject(sim_, {"counter", "fail", "mlx5_0/1", "symbol_error", "ok"});
  inject(sim_, {"port", "up", "mlx5_1/1"});
  const std::map<std::string, int64_t> clean = both("clean");
  EXPECT_GE(clean.at("mlx5_0"), back);
  EXPECT_GE(clean.at("mlx5_1"), back);
}

TEST_F(LinkHealth, AReloadThatStopsJudgingAPortDropsItsFaultAndOneThatStartsReadsAgain) {
  const DaemonOptions o = link_options(sim_, state_.path());
  DaemonProcess d(sim_, o);
  EXPECT_EQ(next_port_verdict(d, "mlx5_0/1", "healthy").reason, "first_seen");
  ASSERT_TRUE(every_port_read(d));
  inject(sim_, {"counter", "add", "mlx5_0/1", "symbol_error", "50"});
  EXPECT_EQ(next_port_verdict(d, "mlx5_0/1", "degraded").reason, "bit_errors");
  // Off: nothing judges its counters any more, so nothing would ever clean it.
  json off = json::parse(o.config_json);
  off["link_health"]["enabled"] = false;
  d.write_config(off.dump());
  d.reload();
  const Record healthy = next_port_verdict(d, "mlx5_0/1", "healthy");
  EXPECT_EQ(healthy.reason, "config_changed");
  EXPECT_EQ(healthy.previous_health, "degraded");
  EXPECT_EQ(d.status()["link_health"]["enabled"], false);
  EXPECT_EQ(d.status()["link_health"]["ports"], json::array());
  // On again: the ports up are read from a new baseline, and new errors count.
  d.write_config(o.config_json);
  d.reload();
  ASSERT_TRUE(judged_clean(d, "mlx5_0", 1));
  EXPECT_EQ(d.status()["link_health"]["ports"].size(), 3u);
  inject(sim_, {"counter", "add", "mlx5_0/1", "symbol_error", "50"});
  const Record bad = next_link(d, "mlx5_0/1", "bad");
  EXPECT_EQ(bad.link->count, 50u);
  EXPECT_EQ(bad.link->value, 100u);
}

TEST_F(LinkHealth, ASweepOfManyDevicesReadsEveryPortWithinThePeriod) {
  // 16 devices x 2 ports: a sweep reads every device beside the loop (one thread reads them one
  // after another), and reaches them all within the period: the last port's errors and the
  // first's are both found.
  // A fabric of its own (the two-adapter one stays idle).
  SimFabric sixteen(topology("sixteen-devices"));
  DaemonProcess d(sixteen,
                  link_options(sixteen, state_.path(), fast_link_health(), {{"enabled", false}}));
  const auto samples = [&] { return link_samples(d); };
  // Each port's first read, asked for at start.
  ASSERT_TRUE(rdmatest::wait_until([&] { return samples() >= 32; }, std::chrono::seconds(10)));
  const uint64_t at_start = samples();
  // mlx5_15/2 is RoCE: its netdev's uncorrectable FEC blocks.
  inject(sixteen, {"counter", "add", "mlx5_15/2", "ethtool/fec_uncorrectable_blocks", "50"});
  inject(sixteen, {"counter", "add", "mlx5_0/1", "symbol_error", "50"});
  std::vector<Record> bad = {next_record_where(
      d, [](const Record& r) { return r.event == EventKind::kLinkQuality; }, "link_quality")};
  bad.push_back(next_record_where(
      d, [](const Record& r) { return r.event == EventKind::kLinkQuality; }, "link_quality"));
  std::set<std::string> ports;
  for (const Record& r : bad) {
    EXPECT_EQ(r.link->change, "bad");
    ports.insert(r.device + "/" + std::to_string(r.port));
  }
  EXPECT_EQ(ports, (std::set<std::string>{"mlx5_0/1", "mlx5_15/2"}));
  // Whole sweeps: the reads come 32 at a time, a period apart.
  ASSERT_TRUE(
      rdmatest::wait_until([&] { return samples() >= at_start + 64; }, std::chrono::seconds(10)));
}

TEST_F(LinkHealth, ASweepOfManyDevicesWakesTheLoopTwiceAndOneThread) {
  // 16 devices x 2 ports read every second. Each sweep wakes the loop (its timer), one thread
  // that reads the 16 devices one after another, and the loop again when it hands their values
  // back: 3 wakeups, where a thread and a hand-back per device made 33. The RoCE ports' PHY
  // counters are asked of this kernel's ethtool family, as on a host (the simulator's stand-in,
  // another process, would cost the reader a wakeup per port): it answers at once that it has
  // no such netdev.
  SimFabric sixteen(topology("sixteen-devices"));
  DaemonOptions o;
  o.config_json =
      json{{"health", {{"enabled", false}}}, {"link_health", fast_link_health()}}.dump();
  o.env = {{"STATE_DIRECTORY", state_.path()}};
  DaemonProcess d(sixteen, o);
  const auto samples = [&] { return link_samples(d); };
  ASSERT_TRUE(rdmatest::wait_until([&] { return samples() >= 64; }, std::chrono::seconds(10)));
  // Over 3.5 s (3 or 4 sweeps): 12 at most, and one more per sweep for a thread meeting the
  // loop at their shared lock (a sanitizer's build, a loaded machine). ThreadSanitizer's
  // runtime has a thread of its own in the daemon, which wakes ten times a second whatever
  // the daemon does: under it, the loop's own wakeups are counted (2 a sweep, 3 where the
  // values come back in two hand-backs, a read having taken 250 ms), against the same bound.
#if defined(__SANITIZE_THREAD__)
  constexpr int kRuntimeThreads = 1;
  const auto wakeups = [](pid_t pid) { return rdmatest::main_thread_wakeups(pid); };
#else
  constexpr int kRuntimeThreads = 0;
  const auto wakeups = [](pid_t pid) { return rdmatest::all_threads_wakeups(pid); };
#endif
  const pid_t pid = d.process().pid();
  const uint64_t before = wakeups(pid);
  const uint64_t sampled = samples();
  std::this_thread::sleep_for(std::chrono::milliseconds(3500));
  const uint64_t woken = wakeups(pid) - before;
  const uint64_t sweeps = (samples() - sampled) / 32;
  EXPECT_GE(sweeps, 3u);
  EXPECT_LE(woken, 16u) << sweeps << " sweeps";
  // Its threads: the loop, the journal's writer and the one reader, none per device (one more
  // where a sweep took longer than the 250 ms after which jobs still queued get another thread,
  // as on a loaded machine).
  EXPECT_LE(rdmatest::thread_count(pid), 4u + kRuntimeThreads);
}

TEST_F(LinkHealth, ExcludedDevicesAreNeverRead) {
  json link = fast_link_health();
  link["exclude"] = json::array({"mlx5_0"});
  DaemonProcess& d = start(link);
  inject(sim_, {"counter", "fail", "mlx5_0/1", "symbol_error", "unreadable"});
  inject(sim_, {"counter", "add", "mlx5_1/1", "ethtool/fec_uncorrectable_blocks", "10"});
  std::vector<Record> before;
  next_link(d, "mlx5_1/1", "bad", &before);
  // Two more sweeps of the timer (each reads mlx5_1's two ports, never mlx5_0's).
  const auto samples = [&] { return link_samples(d); };
  const uint64_t now = samples();
  ASSERT_TRUE(rdmatest::wait_until([&] { return samples() >= now + 4; }, std::chrono::seconds(10)));
  EXPECT_FALSE(d.logged("cannot read its counters")) << d.log_tail();
  EXPECT_EQ(d.status()["link_health"]["read_failures"], 0);
  // The reply is kept: a range-for over a part of a temporary would read freed memory.
  const json status = d.status();
  for (const json& p : status["link_health"]["ports"])
    EXPECT_NE(p["device"], "mlx5_0") << p;
}

TEST_F(LinkHealth, ABadLinkWhoseDeviceIsRepluggedIsCleanAfterItsCleanPeriod) {
  // Port health takes a replugged device's history back, its link fault with it; the counters
  // start from a new baseline, and the fault cleans when its clean period ends.
  DaemonProcess& d = start_judged();
  inject(sim_, {"counter", "add", "mlx5_0/1", "symbol_error", "50"});
  const Record bad = next_link(d, "mlx5_0/1", "bad");
  EXPECT_EQ(next_port_verdict(d, "mlx5_0/1", "degraded").reason, "bit_errors");
  inject(sim_, {"unplug", "mlx5_0"});
  EXPECT_EQ(next_port_verdict(d, "mlx5_0/1", "gone").reason, "device_removed");
  inject(sim_, {"replug", "mlx5_0"});
  ::kill(d.process().pid(), SIGUSR1);
  EXPECT_EQ(next_port_verdict(d, "mlx5_0/1", "degraded").reason, "bit_errors");
  const Record clean = next_link(d, "mlx5_0/1", "clean");
  EXPECT_EQ(clean.link->fault, "bit_errors");
  EXPECT_GE(clean.time_us - bad.time_us, 3'000'000);
  const Record healthy = next_port_verdict(d, "mlx5_0/1", "healthy");
  EXPECT_EQ(healthy.reason, "clean_period_elapsed");
  EXPECT_EQ(healthy.previous_health, "degraded");
}

TEST_F(LinkHealth, WithCounterHealthOffTheIdleDaemonNeverWakesAndOnItWakesOncePerPeriod) {
  auto wakeups_over = [](DaemonProcess& d, std::chrono::milliseconds span) {
    const pid_t pid = d.process().pid();
    // Settled first: the status request of the harness and the start are over.
    const uint64_t before = settled_wakeups(pid, std::chrono::milliseconds(200));
    std::this_thread::sleep_for(span);
    return rdmatest::main_thread_wakeups(pid) - before;
  };
  json off = fast_link_health();
  off["enabled"] = false;
  DaemonProcess quiet(sim_, link_options(sim_, state_.path(), off, {{"enabled", false}}));
  EXPECT_EQ(wakeups_over(quiet, std::chrono::milliseconds(3500)), 0u);

  rdmatest::TempDir state2("rdma-link");
  json on = fast_link_health();
  on["interval_s"] = 2;
  DaemonProcess sampling(sim_, link_options(sim_, state2.path(), on, {{"enabled", false}}));
  const uint64_t woken = wakeups_over(sampling, std::chrono::milliseconds(7000));
  // Every 2 s: three or four periods in 7 s, two wakeups each (the timer, and both devices'
  // values handed back at once by the thread that read them), and at times up to three more
  // where everything runs slower (a sanitizer's build, a loaded machine): the loop meeting that
  // thread at their shared lock, the stall timer of a read still out after 250 ms, and the
  // values handed back in two: at most 4 x 5. No journal writer's: no record is written. A loop
  // that spins wakes thousands of times. (A wakeup per device is the sixteen-device test's.)
  EXPECT_GE(woken, 3u);
  EXPECT_LE(woken, 20u);
}

}  // namespace
}  // namespace rdma_eventd::test
