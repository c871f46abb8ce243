// Faults around the daemon, with the real binaries: journald going away and coming back while
// records flow, a subscriber killed while the daemon writes to it, ten thousand connections
// coming and going, the daemon killed and restarted, and stopped in the middle of a storm.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "daemon_process.h"
#include "harness.h"
#include "journal_sandbox.h"
#include "stream_check.h"
#include "test_support.h"

namespace rdma_eventd::test {
namespace {

using nlohmann::json;
using rdmatest::Clock;
using rdmatest::SimFabric;
using rdmatest::topology;

// The daemon's ASAN_OPTIONS (a sanitizer build only reads them): the caller's, without the
// quarantine, so that freed memory is reused at once and a memory check measures the daemon,
// not the quarantine filling (with 1 MiB of it, 10,000 connections grew the daemon by 0.6 MiB
// in a window now and then). Use after free is checked by every other test.
std::map<std::string, std::string> no_quarantine() {
  const char* base = std::getenv("ASAN_OPTIONS");
  return {{"ASAN_OPTIONS",
           std::string(base && *base ? std::string(base) + ":" : "") + "quarantine_size_mb=0"}};
}

// Follows one subscriber's whole stream on a thread of its own, until `count` records (or
// their loss) have been seen, the daemon closes, or `timeout` passes.
class StreamFollower {
 public:
  StreamFollower(const std::string& socket, uint64_t count, rdmatest::Duration timeout)
      : conn_(socket), thread_([this, count, timeout] { run(count, timeout); }) {}
  ~StreamFollower() { join(); }
  void join() {
    if (thread_.joinable()) thread_.join();
  }
  // Waits until the stream has reached record `seq` (or ended); whether it has.
  bool wait_seen(uint64_t seq, rdmatest::Duration timeout = std::chrono::seconds(120)) {
    std::unique_lock lock(mu_);
    seen_cv_.wait_for(lock, timeout, [&] { return seen_ >= seq || ended_; });
    return seen_ >= seq;
  }
  const StreamCheck& check() {
    join();
    return check_;
  }

 private:
  void run(uint64_t count, rdmatest::Duration timeout) {
    const auto deadline = Clock::now() + timeout;
    bool open = true;
    while (open && check_.next_seq() <= count && Clock::now() < deadline) {
      // In slices, to notice the deadline; data is taken the moment it comes.
      if (!conn_.wait_readable(std::chrono::milliseconds(200))) continue;
      open = conn_.read_available(4 << 20);
      check_.feed(conn_.take_complete_lines());
      std::lock_guard lock(mu_);
      seen_ = check_.next_seq() - 1;
      seen_cv_.notify_all();
    }
    std::lock_guard lock(mu_);
    ended_ = true;
    seen_cv_.notify_all();
  }

  LineClient conn_;
  StreamCheck check_;
  std::mutex mu_;
  std::condition_variable seen_cv_;
  uint64_t seen_ = 0;  // the last seq seen (or reported lost)
  bool ended_ = false;
  std::thread thread_;
};

// The daemon's journal counters once every one of `records` is written, failed or dropped and
// none is queued. They are the writer thread's, with nothing to wait on: polled.
json journal_settled(DaemonProcess& daemon, uint64_t records) {
  json j;
  const bool settled = rdmatest::wait_until(
      [&] {
        j = daemon.status()["journal"];
        return j["queued"] == 0 && j["written"].get<uint64_t>() + j["failed"].get<uint64_t>() +
                                           j["dropped"].get<uint64_t>() ==
                                       records;
      },
      std::chrono::seconds(60));
  if (!settled) throw rdmatest::HarnessError("the journal did not settle: " + j.dump());
  return j;
}

// For the tests where a follower witnesses that records still flow while something else goes
// wrong: a subscriber queue of 64 MiB, so that the follower keeps up even when a busy test
// machine leaves its thread off the CPU for a second or two. The journal budget is off: these
// tests put every record through the journal writer while journald fails or stalls (the
// budget has its own tests, journal_budget_test.cc and the container's).
const std::string kRoomyQueues =
    R"({"socket": {"max_queued_bytes": 67108864}, "journal": {"budget": {"enabled": false}}})";

// A daemon with roomy queues on the simulated fabric `fabric`, and a follower of its stream that
// expects `events` records.
struct FollowedDaemon {
  FollowedDaemon(const std::string& fabric, uint64_t events)
      : sim(topology(fabric)),
        daemon(sim, DaemonOptions{.config_json = kRoomyQueues, .print_records = false}),
        follower(daemon.socket(), events, std::chrono::minutes(5)) {}

  SimFabric sim;
  DaemonProcess daemon;
  StreamFollower follower;
};

TEST(Faults, JournaldGoingAwayAndComingBackNeverTouchesTheSocketStream) {
  JournalSandbox& journal = JournalSandbox::instance();
  constexpr uint64_t kEvents = 200000;
  FollowedDaemon run("two-adapters", kEvents);
  auto& [sim, daemon, follower] = run;

  inject(sim, {"storm", "--count", std::to_string(kEvents)});
  ASSERT_TRUE(follower.wait_seen(30000));
  journal.stop_journald();
  ASSERT_TRUE(follower.wait_seen(80000));
  journal.start_journald();

  // The socket: every record once, in order, none lost.
  const StreamCheck& check = follower.check();
  EXPECT_EQ(check.problem(), "");
  EXPECT_EQ(check.records(), kEvents);
  EXPECT_EQ(check.lost_records(), 0u);

  // The journal: the writes that failed are counted, every record is accounted for, and the
  // journal has entries again once journald is back, up to the last record.
  const json j = journal_settled(daemon, kEvents);
  EXPECT_GT(j["failed"].get<uint64_t>(), 0u) << j.dump();
  daemon.require_log("journal: cannot write records");
  daemon.require_log("journal: writing records again");
  const std::string seqs = journal.journalctl(
      {"-o", "cat", "--output-fields=RDMA_SEQ", "RDMA_STREAM=" + daemon.stream()});
  std::istringstream in(seqs);
  uint64_t previous = 0, entries = 0;
  for (std::string line; std::getline(in, line);) {
    const uint64_t seq = std::stoull(line);
    EXPECT_GT(seq, previous) << "journal entries out of order or twice";
    previous = seq;
    ++entries;
  }
  EXPECT_EQ(previous, kEvents) << "the journal resumed";
  EXPECT_LE(entries, j["written"].get<uint64_t>());
  EXPECT_LT(entries, kEvents);
}

TEST(Faults, AFrozenJournaldIsWaitedForTwoSecondsAtMostThenRecordsFlowWithoutIt) {
  JournalSandbox& journal = JournalSandbox::instance();
  constexpr uint64_t kEvents = 150000;
  FollowedDaemon run("two-adapters", kEvents);
  auto& [sim, daemon, follower] = run;
  journal.freeze_journald(true);
  inject(sim, {"storm", "--count", std::to_string(kEvents)});

  // The socket stream is not held up beyond the bounded wait: every record arrives, once, in
  // order, while journald takes nothing.
  const StreamCheck& check = follower.check();
  EXPECT_EQ(check.problem(), "");
  EXPECT_EQ(check.records(), kEvents) << json(check.losses()).dump();
  daemon.require_log("journal: journald took no entry for 2 s; reading device events again");
  const json frozen = daemon.status()["journal"];
  EXPECT_GE(frozen["stalls"].get<uint64_t>(), 1u) << frozen.dump();
  EXPECT_GT(frozen["dropped"].get<uint64_t>(), 0u) << frozen.dump();

  // journald thaws: what it had taken is written, the queue drains, and every record is
  // accounted for as written or dropped.
  journal.freeze_journald(false);
  daemon.require_log("journal: journald takes entries again");
  const json j = journal_settled(daemon, kEvents);
  EXPECT_EQ(j["failed"], 0);
  inject(sim, {"port", "down", "mlx5_0/1"});
  const auto entries = daemon.journal_entries(j["written"].get<uint64_t>() + 1);
  EXPECT_EQ(entries.back()["RDMA_SEQ"], std::to_string(kEvents + 1));
}

TEST(Faults, ASubscriberKilledWhileTheDaemonWritesToItCostsNothing) {
  constexpr uint64_t kEvents = 100000;
  FollowedDaemon run("two-adapters", kEvents);
  auto& [sim, daemon, follower] = run;
  // socat copies the stream to its stdout, a pipe nobody reads: it soon stops reading the
  // socket, and the daemon has output queued for it when it dies.
  rdmatest::Process victim =
      rdmatest::Process::spawn({"socat", "-u", "UNIX-CONNECT:" + daemon.socket(), "STDOUT"});
  daemon.require_subscribers(2);  // the follower and the victim

  inject(sim, {"storm", "--count", std::to_string(kEvents)});
  // A subscriber's queue is accounting state with nothing to wait on: polled.
  ASSERT_TRUE(rdmatest::wait_until(
      [&] {
        const json status = daemon.status();
        for (const json& s : status["subscribers"]["list"]) {
          if (s["pid"] == victim.pid() && s["bytes_queued"].get<uint64_t>() > 0) return true;
        }
        return false;
      },
      std::chrono::seconds(60)));
  victim.signal(SIGKILL);
  victim.require_exit(std::chrono::seconds(10));

  const StreamCheck& check = follower.check();
  EXPECT_EQ(check.problem(), "");
  EXPECT_EQ(check.records(), kEvents);
  EXPECT_TRUE(daemon.process().running());
  // The victim is gone: the follower is left (the status requests above came and went).
  daemon.require_subscribers(1);
  const rdmatest::ExitStatus exit = daemon.stop();
  EXPECT_TRUE(exit.success()) << exit.describe() << daemon.process().describe();
}

TEST(Faults, TenThousandConnectionsComingAndGoingLeakNoDescriptorAndNoMemory) {
  SimFabric sim(topology("two-adapters"));
  DaemonProcess daemon(sim, DaemonOptions{.print_records = false, .env = no_quarantine()});
  const pid_t pid = daemon.process().pid();
  // Four ways to leave: at once, after the hello, with a request unanswered, in the middle of
  // a request.
  auto cycle = [&](int i) {
    LineClient c(daemon.socket());
    switch (i % 4) {
      case 0:
        return;
      case 1:
        c.require_json(std::chrono::seconds(10));
        return;
      case 2:
        c.send(R"({"op":"status","id":1})"
               "\n");
        return;
      default:
        c.send(R"({"op":"snapshot",)");
        return;
    }
  };
  // One connection asks for the status all along: a fresh asker per question would leave a
  // descriptor in the daemon that it closes whenever it reads the asker's end of file, and the
  // count would depend on when it is taken.
  LineClient asker(daemon.socket());
  asker.require_json(std::chrono::seconds(10));  // the hello
  uint64_t connections = 1;                      // made so far, the asker included
  int question = 0;
  // Accepted and reaped connections are counters with nothing to wait on (the subscriber count
  // passes through 1 many times on the way): polled.
  auto settled = [&] {
    // Every connection accepted and reaped: the asker is the only subscriber.
    return rdmatest::wait_until(
        [&] {
          const int id = ++question;
          asker.send(R"({"op":"status","id":)" + std::to_string(id) + "}\n");
          const json st = asker.read_until(rdmatest::reply_to(id), std::chrono::seconds(10)).back();
          return st["subscribers"]["accepted"] == connections && st["subscribers"]["count"] == 1;
        },
        std::chrono::seconds(30));
  };
  auto cycles = [&](int n) {
    for (int i = 0; i < n; ++i)
      cycle(i);
    connections += n;
    return settled();
  };
  ASSERT_TRUE(cycles(1000));
  const size_t fds = rdmatest::open_fds(pid);
  // Two windows of 10,000: a leak grows the daemon in both, by the same amount. A one-off step
  // grows it in one: the allocator reaching a new high-water mark when connections pile up in
  // the backlog, or a sanitizer's shadow memory (ThreadSanitizer maps and resets its own on a
  // schedule of its own) touching new pages.
  std::vector<uint64_t> rss{rdmatest::status_bytes(pid, "VmRSS")};
  for (int window = 0; window < 2; ++window) {
    ASSERT_TRUE(cycles(10000));
    EXPECT_EQ(rdmatest::open_fds(pid), fds) << "after window " << window + 1;
    rss.push_back(rdmatest::status_bytes(pid, "VmRSS"));
  }
  const auto grew = [&](size_t window) {
    return rss[window + 1] > rss[window] ? rss[window + 1] - rss[window] : 0;
  };
  // 10,000 connections that each kept 52 bytes would grow each window by 512 KiB.
  EXPECT_LE(std::min(grew(0), grew(1)), 512 * 1024)
      << "VmRSS " << rss[0] << " -> " << rss[1] << " -> " << rss[2];
  EXPECT_TRUE(daemon.process().running());
}

TEST(Faults, AfterSigkillARestartedDaemonIsANewStreamAndClientsResnapshot) {
  SimFabric sim(topology("two-adapters"));
  rdmatest::TempDir dir("rdma-restart");
  const std::string socket = dir.file("events.sock");
  auto first = std::make_unique<DaemonProcess>(sim, DaemonOptions{.socket = socket});
  LineClient c(socket);
  const json hello = c.require_json(std::chrono::seconds(10));
  inject(sim, {"lid", "mlx5_0/1", "9"});
  const json record = c.require_json(std::chrono::seconds(10));
  EXPECT_EQ(record["seq"], 1);

  first->process().signal(SIGKILL);
  EXPECT_EQ(first->process().require_exit(std::chrono::seconds(10)).signal, SIGKILL);
  EXPECT_FALSE(c.next_line(std::chrono::seconds(10))) << "the connection ends";
  // The simulator saw the contexts go with the process.
  const int first_pid = first->process().pid();
  sim.wait_stats([&](const json& s) {
    for (const auto& ctx : contexts_of(s, first_pid))
      if (ctx["open"].get<bool>()) return false;
    return true;
  });
  inject(sim, {"lid", "mlx5_0/1", "11"});  // while no daemon runs

  // The new daemon takes over the stale socket; the client reconnects and asks for what it
  // missed since its last record: another stream, so a snapshot instead, with the state now.
  DaemonProcess second(sim, DaemonOptions{.socket = socket});
  LineClient again(socket);
  const json hello2 = again.require_json(std::chrono::seconds(10));
  EXPECT_NE(hello2["stream"], hello["stream"]);
  EXPECT_EQ(hello2["seq"], 0);
  again.send(json{{"op", "since"}, {"id", 1}, {"seq", 1}, {"stream", hello["stream"]}}.dump() +
             "\n");
  const auto lines = again.read_until(reply_to(1), std::chrono::seconds(10));
  const json& reply = lines.back();
  EXPECT_EQ(reply["covered"], false);
  EXPECT_EQ(reply["reason"], "stream");
  ASSERT_EQ(reply["records"], 3);
  const json snap = again.require_json(std::chrono::seconds(10));
  EXPECT_EQ(snap["event"], "snapshot");
  EXPECT_EQ(snap["stream"], hello2["stream"]);
  EXPECT_EQ(snap["device"], "mlx5_0");
  EXPECT_EQ(snap["lid"], 11);
  // And the stream goes on from there.
  again.require_json(std::chrono::seconds(10));
  again.require_json(std::chrono::seconds(10));
  inject(sim, {"port", "down", "mlx5_0/1"});
  const json next = again.require_json(std::chrono::seconds(10));
  EXPECT_EQ(next["seq"], 1);
  EXPECT_EQ(next["event"], "port_err");
}

TEST(Faults, SigtermInTheMiddleOfAStormEndsTheDaemonCleanly) {
  JournalSandbox::instance();
  constexpr uint64_t kEvents = 1000000;
  FollowedDaemon run("sixteen-devices", kEvents);
  auto& [sim, daemon, follower] = run;
  LineClient idle(daemon.socket());  // never reads
  inject(sim, {"storm", "--count", std::to_string(kEvents)});
  ASSERT_TRUE(follower.wait_seen(50000));

  const auto asked = Clock::now();
  daemon.process().signal(SIGTERM);
  // A clean exit: status 0 (under sanitizers, no error and no leak either), in bounded time
  // (the journal writer gets at most a few seconds to finish its queue).
  const rdmatest::ExitStatus exit = daemon.process().require_exit(std::chrono::seconds(30));
  EXPECT_TRUE(exit.success()) << exit.describe() << daemon.process().describe();
  EXPECT_LT(Clock::now() - asked, std::chrono::seconds(10));
  // The orderly way out: the loop ended, the service manager was told, the summary logged.
  daemon.notify().require([](const rdmatest::Notification& m) { return m.has("STOPPING", "1"); },
                          0s, "STOPPING=1");
  daemon.require_log("stopped after");
  const StreamCheck& check = follower.check();
  EXPECT_EQ(check.problem(), "");
  EXPECT_GE(check.records(), 50000u);
  EXPECT_LT(check.records(), kEvents);
  const std::string log = daemon.process().stderr_text();
  EXPECT_EQ(log.find("Sanitizer"), std::string::npos) << log;
  EXPECT_EQ(log.find("runtime error"), std::string::npos) << log;
}

}  // namespace
}  // namespace rdma_eventd::test
