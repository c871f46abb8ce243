// A storm of a million events: sixteen simulated dual-port adapters, fifty subscribers of which
// five read slowly or not at all, and a real journald with no rate limit. Every subscriber that
// keeps up gets every record once, in order; the slow ones get every record or an exact "lost"
// line for it; the journal holds every record; the daemon's memory stays bounded.
// In a sanitizer build the storm is 200,000 events: the same paths run (every slow and stalled
// subscriber's queue overflows many times over, the journal writer's queue fills and holds the
// loop back), and a memory error shows on the first pass through them. The million, whose time
// and memory are what the test bounds, is the plain build's: under ASan+UBSan it took 202 CPU s
// of the stage's 700 (docs/testing.md).
#include <gtest/gtest.h>
#include <sys/epoll.h>

#include <atomic>
#include <functional>
#include <memory>
#include <set>
#include <thread>

#include "daemon_process.h"
#include "harness.h"
#include "journal_sandbox.h"
#include "stream_check.h"
#include "test_support.h"

namespace rdma_eventd::test {
namespace {

using nlohmann::json;
using rdmatest::Clock;

#ifdef RDMA_TEST_SANITIZE
constexpr uint64_t kStormEvents = 200000;
#else
constexpr uint64_t kStormEvents = 1000000;
#endif
constexpr int kFast = 45;
constexpr int kSlow = 2;     // read 16 KiB every 100 ms
constexpr int kStalled = 3;  // read nothing until the storm is over
constexpr auto kStormTimeout = std::chrono::minutes(20);
constexpr int kReaderThreads = 3;

// What "keeping up" means here: each subscriber's queue holds 8 MiB of records (about 13,000),
// so a subscriber keeps up as long as it is never more than about half a second behind the
// storm. With the default 1 MiB, a busy two-core test machine that leaves the readers' threads
// off the CPU for a tenth of a second would make them lose records while they do keep up on
// average.
constexpr uint64_t kQueueBytes = 8 << 20;

// The bound the daemon's peak memory (VmHWM) stays under during the storm, and why: the
// journal writer's queue (16,384 entries of about 2 KiB: 32 MiB), the subscribers' queues (8 MiB
// of record lines each, shared between subscribers: the five that fall behind hold at most
// 40 MiB), the replay ring (4,096 records: 3 MiB), and the rest of the process (libraries,
// loop, devices: a few MiB) all fit in it. A sanitizer build's allocator keeps freed memory in
// quarantine (limited to 64 MiB here) and pads every block, so it gets more room.
#ifdef RDMA_TEST_SANITIZE
constexpr uint64_t kMemoryBound = 384ull << 20;
#else
constexpr uint64_t kMemoryBound = 128ull << 20;
#endif

// A million entries take about 1.5 GiB of journal files: on disk, not in /run's memory. For
// every test of this program, before any starts the sandbox.
[[maybe_unused]] const bool kJournalOnDisk = [] {
  JournalSandbox::set_storage({.max_use = "4G", .on_disk = true});
  return true;
}();

struct Reader {
  std::unique_ptr<LineClient> conn;
  StreamCheck check;
};

// Reads some fast subscribers as fast as the daemon writes, on a thread of its own, until each
// has seen kStormEvents records (or the deadline passes).
void read_fast(std::vector<Reader*> readers, Clock::time_point deadline) {
  const rdma_eventd::internal::UniqueFd ep(epoll_create1(EPOLL_CLOEXEC));
  for (size_t i = 0; i < readers.size(); ++i) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = i;
    epoll_ctl(ep.get(), EPOLL_CTL_ADD, readers[i]->conn->fd(), &ev);
  }
  size_t done = 0;
  epoll_event events[64];
  while (done < readers.size() && Clock::now() < deadline) {
    const int n = epoll_wait(ep.get(), events, 64, 100);
    for (int k = 0; k < n; ++k) {
      Reader& r = *readers[events[k].data.u64];
      const bool was_done = r.check.next_seq() > kStormEvents;
      r.conn->read_available(4 << 20);
      r.check.feed(r.conn->take_complete_lines());
      if (!was_done && r.check.next_seq() > kStormEvents) ++done;
    }
  }
}

// Starts reading the fast subscribers on kReaderThreads threads, then `start`s the storm;
// meanwhile the slow ones read 16 KiB each every 100 ms.
void follow(std::vector<Reader>& fast, std::vector<Reader>& slow, Clock::time_point deadline,
            const std::function<void()>& start) {
  std::vector<std::vector<Reader*>> shares(kReaderThreads);
  for (size_t i = 0; i < fast.size(); ++i)
    shares[i % kReaderThreads].push_back(&fast[i]);
  std::atomic<int> running{kReaderThreads};
  std::vector<std::thread> threads;
  for (auto& share : shares) {
    threads.emplace_back([share, deadline, &running] {
      read_fast(share, deadline);
      --running;
    });
  }
  start();
  while (running > 0 && Clock::now() < deadline) {
    for (Reader& r : slow) {
      r.conn->read_available(16 * 1024);
      r.check.feed(r.conn->take_complete_lines());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  for (auto& t : threads)
    t.join();
}

// The seqs of the stream's first `count` journal entries, in journal order, as journald takes
// them.
std::vector<uint64_t> journal_seqs(const std::string& stream, uint64_t count) {
  const std::vector<std::string> lines = JournalSandbox::instance().follow(
      {"-o", "cat", "--output-fields=RDMA_SEQ", "RDMA_STREAM=" + stream}, count,
      std::chrono::minutes(5));
  std::vector<uint64_t> seqs;
  seqs.reserve(count);
  for (const std::string& line : lines)
    seqs.push_back(std::stoull(line));
  return seqs;
}

TEST(Storm, EveryEventReachesEverySubscriberThatKeepsUpAndTheJournalExactlyOnce) {
  JournalSandbox::instance();
  rdmatest::SimFabric sim(rdmatest::topology("sixteen-devices"));
  // The journal budget is off: every one of the million records goes through the journal
  // writer and its backpressure, and the journal must hold each exactly once.
  DaemonProcess daemon(
      sim, DaemonOptions{.config_json = R"({"socket": {"max_queued_bytes": )" +
                                        std::to_string(kQueueBytes) +
                                        R"(}, "journal": {"budget": {"enabled": false}}})",
                         .print_records = false,
                         .env = {{"ASAN_OPTIONS", "quarantine_size_mb=64"}}});
  const pid_t pid = daemon.process().pid();

  std::vector<Reader> fast(kFast), slow(kSlow + kStalled);
  for (auto* group : {&fast, &slow}) {
    for (Reader& r : *group) {
      r.conn = std::make_unique<LineClient>(daemon.socket());
      EXPECT_EQ(r.conn->require_json(std::chrono::seconds(10))["type"], "hello");
    }
  }
  std::vector<Reader> sipping(std::make_move_iterator(slow.begin()),
                              std::make_move_iterator(slow.begin() + kSlow));
  std::vector<Reader> stalled(std::make_move_iterator(slow.begin() + kSlow),
                              std::make_move_iterator(slow.end()));

  const auto start = Clock::now();
  follow(fast, sipping, start + kStormTimeout, [&] {
    inject(sim, {"storm", "--count", std::to_string(kStormEvents)});
  });
  const auto storm_s = std::chrono::duration<double>(Clock::now() - start).count();
  std::cout << "[ storm    ] " << kStormEvents << " records to " << kFast << " fast subscribers in "
            << storm_s << " s; journal: " << daemon.status()["journal"].dump() << std::endl;

  // Everyone who kept up: every record, once, in order, nothing lost.
  for (size_t i = 0; i < fast.size(); ++i) {
    SCOPED_TRACE("fast subscriber " + std::to_string(i));
    EXPECT_EQ(fast[i].check.problem(), "");
    EXPECT_EQ(fast[i].check.records(), kStormEvents);
    EXPECT_EQ(fast[i].check.lost_records(), 0u) << json(fast[i].check.losses()).dump();
  }

  // The slow and the stalled ones: now they read everything. Each seq was delivered or
  // reported lost, exactly once, in order; and the daemon counted the same losses.
  std::vector<Reader*> behind;
  for (Reader& r : sipping)
    behind.push_back(&r);
  for (Reader& r : stalled)
    behind.push_back(&r);
  uint64_t lost_total = 0;
  for (size_t i = 0; i < behind.size(); ++i) {
    SCOPED_TRACE("slow subscriber " + std::to_string(i));
    Reader& r = *behind[i];
    r.conn->send(json{{"op", "ping"}, {"id", 1}}.dump() + "\n");
    const auto until = Clock::now() + std::chrono::minutes(2);
    while (r.check.replies().empty() && Clock::now() < until) {
      r.conn->wait_readable(std::chrono::seconds(1));
      r.conn->read_available(1 << 20);
      r.check.feed(r.conn->take_complete_lines());
    }
    ASSERT_EQ(r.check.replies().size(), 1u) << "no reply to the ping";
    EXPECT_EQ(r.check.problem(), "");
    EXPECT_EQ(r.check.next_seq(), kStormEvents + 1);
    EXPECT_EQ(r.check.records() + r.check.lost_records(), kStormEvents);
    EXPECT_GE(r.check.lost_notices(), 1u);
    lost_total += r.check.lost_records();
  }
  const json status = daemon.status();
  EXPECT_EQ(status["subscribers"]["records_lost"], lost_total);
  EXPECT_EQ(status["subscribers"]["count"], kFast + kSlow + kStalled + 1);  // and the asker

  // The journal: every record, once, in order (written once each, so there is no entry beyond
  // these). Nothing dropped or failed on the way.
  const std::vector<uint64_t> seqs = journal_seqs(daemon.stream(), kStormEvents);
  ASSERT_EQ(seqs.size(), kStormEvents);
  for (uint64_t i = 0; i < kStormEvents; ++i)
    ASSERT_EQ(seqs[i], i + 1) << "journal entry " << i;
  const json journal = daemon.status()["journal"];
  EXPECT_EQ(journal["written"], kStormEvents);
  EXPECT_EQ(journal["dropped"], 0);
  EXPECT_EQ(journal["failed"], 0);
  EXPECT_EQ(journal["stalls"], 0);
  std::cout << "[ storm    ] the daemon waited for the journal " << journal["waits"] << " times\n";

  const uint64_t peak = rdmatest::status_bytes(pid, "VmHWM");
  std::cout << "[ storm    ] daemon peak memory (VmHWM) " << (peak >> 20) << " MiB, bound "
            << (kMemoryBound >> 20) << " MiB\n";
  EXPECT_LE(peak, kMemoryBound);
  const rdmatest::ExitStatus exit = daemon.stop();
  EXPECT_TRUE(exit.success()) << exit.describe();
}

}  // namespace
}  // namespace rdma_eventd::test
