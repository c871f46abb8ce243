// The record stream under load: snapshots joining a storm, a slow subscriber losing its
// backlog while a fast one gets everything, a thousand subscribers at once.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <condition_variable>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>

#include "hub_support.h"
#include "paths.h"

namespace rdma_eventd::subtest {
namespace {

using rdmatest::Clock;

TEST(Stream, SnapshotsTakenDuringAStormJoinTheLiveStreamWithNoGapAndNoDuplicate) {
  // Given a storm of records, a client asks for a snapshot every few thousand records. Each
  // snapshot is the state as of some seq S: the records before its reply are those up to S,
  // and the first record after its snapshot records is S + 1.
  SimFabric sim(topology("two-adapters"));
  HubDaemon d(sim, {.socket = R"("max_queued_bytes": 268435456)"});  // nothing is lost here
  GreetedClient c(d);
  constexpr uint64_t kEvents = 100000;
  storm(sim, kEvents, "mlx5_0/1,mlx5_1/2");

  std::vector<json> lines;
  int requested = 0, replied = 0;
  uint64_t last_seq = 0, next_request_at = 1, snapshot_records_due = 0;
  while (last_seq < kEvents || replied < requested || snapshot_records_due > 0) {
    lines.push_back(c.require_json(60s, "the storm's records"));
    const json& l = lines.back();
    if (l.value("type", "") == "reply") {
      ++replied;
      snapshot_records_due += l["records"].get<uint64_t>();
    }
    if (is_snapshot(l)) --snapshot_records_due;
    if (is_record(l) && !is_snapshot(l)) last_seq = l["seq"];
    if (last_seq >= next_request_at && last_seq < kEvents) {
      c.send(json{{"op", "snapshot"}, {"id", ++requested}}.dump() + "\n");
      next_request_at = last_seq + 7000;
    }
  }

  std::vector<uint64_t> want(kEvents);
  for (uint64_t i = 0; i < kEvents; ++i)
    want[i] = i + 1;
  EXPECT_EQ(seqs_of(live_records(lines)), want) << "a gap or a duplicate in the live stream";

  int mid_storm = 0;
  uint64_t live_so_far = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    const json& l = lines[i];
    if (is_record(l) && !is_snapshot(l)) live_so_far = l["seq"];
    if (l.value("type", "") != "reply") continue;
    const uint64_t s = l["seq"];
    ASSERT_EQ(l["records"], 3);
    EXPECT_EQ(live_so_far, s) << "the records before the reply end at its seq";
    for (size_t k = 1; k <= 3; ++k) {
      ASSERT_LT(i + k, lines.size());
      EXPECT_TRUE(is_snapshot(lines[i + k])) << lines[i + k].dump();
      EXPECT_EQ(lines[i + k]["seq"], s);
    }
    if (s < kEvents) {
      ++mid_storm;
      ASSERT_LT(i + 4, lines.size());
      EXPECT_EQ(lines[i + 4]["seq"], s + 1) << "the live stream goes on at the snapshot's seq + 1";
    }
  }
  EXPECT_EQ(requested, replied);
  // The point of the test: at least one snapshot landed while records were flowing.
  EXPECT_GE(mid_storm, 1);
}

// Reads a socket until it has `lines` newlines, on a thread of its own so that nothing in the
// test slows it down.
// Reads a connection as fast as it can on a thread of its own, and says how many lines it has.
class FastReader {
 public:
  FastReader(int fd, size_t lines) : thread_([this, fd, lines] { run(fd, lines); }) {}
  ~FastReader() {
    if (thread_.joinable()) thread_.join();
  }
  // Waits until it has read `lines` lines in all; false when they did not come in time.
  bool wait_for(size_t lines, Duration timeout) {
    std::unique_lock lock(mu_);
    return more_.wait_for(lock, timeout, [&] { return seen_ >= lines || done_; }) && seen_ >= lines;
  }
  std::string take() {
    thread_.join();
    return std::move(text_);
  }

 private:
  void run(int fd, size_t lines) {
    const auto deadline = Clock::now() + 120s;
    size_t seen = 0;
    std::vector<char> chunk(1 << 20);
    while (seen < lines && Clock::now() < deadline) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 1000) <= 0) continue;
      const ssize_t n = ::recv(fd, chunk.data(), chunk.size(), MSG_DONTWAIT);
      if (n <= 0) {
        if (n < 0 && errno == EAGAIN) continue;
        break;
      }
      text_.append(chunk.data(), static_cast<size_t>(n));
      seen += static_cast<size_t>(std::count(chunk.data(), chunk.data() + n, '\n'));
      std::lock_guard lock(mu_);
      seen_ = seen;
      more_.notify_all();
    }
    std::lock_guard lock(mu_);
    done_ = true;
    more_.notify_all();
  }
  std::string text_;  // the reading thread's until take()
  std::mutex mu_;
  std::condition_variable more_;
  size_t seen_ = 0;
  bool done_ = false;
  std::thread thread_;
};

std::vector<json> parse_lines(const std::string& text) {
  std::vector<json> out;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t nl = text.find('\n', pos);
    out.push_back(json::parse(text.substr(pos, nl - pos)));
    pos = nl + 1;
  }
  return out;
}

TEST(Stream, ASlowSubscriberLosesItsBacklogAndIsToldExactlyWhatWhileAFastOneGetsEverything) {
  SimFabric sim(topology("two-adapters"));
  // Queues of 1 MiB, about 2,500 records: the storm is sixteen times that.
  HubDaemon d(sim, {.socket = R"("max_queued_bytes": 1048576)"});
  GreetedClient fast(d), slow(d);
  constexpr uint64_t kEvents = 40000;
  constexpr uint64_t kChunk = 1000;  // about 410 KB of records: the fast one's queue never fills
  FastReader reader(fast.fd(), kEvents);
  // In chunks, each once the fast one has read the last: it keeps up however the machine
  // schedules it, while the slow one, which reads nothing, overflows its queue again and again.
  for (uint64_t sent = kChunk; sent <= kEvents; sent += kChunk) {
    storm(sim, static_cast<int>(kChunk), "mlx5_0/1");
    ASSERT_TRUE(reader.wait_for(sent, 60s)) << "the fast subscriber got fewer than " << sent;
  }

  // The fast one: every record, in order.
  const std::vector<json> got = parse_lines(reader.take());
  std::vector<uint64_t> want(kEvents);
  for (uint64_t i = 0; i < kEvents; ++i)
    want[i] = i + 1;
  EXPECT_EQ(seqs_of(got), want);

  // The slow one has read nothing so far. Each seq is now either delivered or inside exactly
  // one "lost" range, in order, and the connection is still there.
  slow.send(R"({"op":"ping","id":1})"
            "\n");
  const std::vector<json> lines = slow.read_until(reply_to(1), 60s);
  EXPECT_EQ(lines.back()["seq"], kEvents);
  std::vector<int> seen(kEvents + 1, 0);
  uint64_t delivered = 0, lost = 0, notices = 0, previous = 0;
  for (const json& l : lines) {
    if (is_record(l)) {
      const uint64_t s = l["seq"];
      EXPECT_GT(s, previous);
      previous = s;
      ++seen[s];
      ++delivered;
    } else if (l["type"] == "lost") {
      const uint64_t first = l["first_seq"], last = l["last_seq"];
      EXPECT_GT(first, previous);
      EXPECT_LE(first, last);
      EXPECT_EQ(l["records"], last - first + 1) << "no filter: every seq in the range was lost";
      for (uint64_t s = first; s <= last && s <= kEvents; ++s)
        ++seen[s];
      previous = last;
      lost += l["records"].get<uint64_t>();
      ++notices;
    }
  }
  for (uint64_t s = 1; s <= kEvents; ++s)
    ASSERT_EQ(seen[s], 1) << "seq " << s << " delivered or reported lost " << seen[s] << " times";
  EXPECT_GE(notices, 1u);
  EXPECT_EQ(delivered + lost, kEvents);

  slow.send(R"({"op":"status","id":2})"
            "\n");
  const json st = slow.read_until(reply_to(2), 20s).back();
  const json& me = st["subscribers"]["list"][1];
  ASSERT_EQ(me["self"], true);
  EXPECT_EQ(me["records_lost"], lost);
  EXPECT_EQ(me["records_sent"], delivered);
  EXPECT_EQ(me["lost_notices"], notices);
  EXPECT_EQ(st["subscribers"]["list"][0]["records_lost"], 0);
  EXPECT_EQ(st["subscribers"]["records_lost"], lost);
  EXPECT_EQ(st["subscribers"]["count"], 2);
}

// Raw connections, many at once.
struct Conn {
  int fd = -1;
  std::string buf;
};

// Reads until every connection has one more complete line; returns them in order.
std::vector<std::string> one_line_each(std::vector<Conn>& conns, Duration timeout) {
  const auto deadline = Clock::now() + timeout;
  std::vector<std::string> out(conns.size());
  std::vector<bool> done(conns.size(), false);
  size_t left = conns.size();
  std::vector<pollfd> fds;
  while (left > 0) {
    fds.clear();
    std::vector<size_t> index;
    for (size_t i = 0; i < conns.size(); ++i) {
      const size_t nl = conns[i].buf.find('\n');
      if (!done[i] && nl != std::string::npos) {
        out[i] = conns[i].buf.substr(0, nl);
        conns[i].buf.erase(0, nl + 1);
        done[i] = true;
        --left;
      }
      if (!done[i]) {
        fds.push_back({conns[i].fd, POLLIN, 0});
        index.push_back(i);
      }
    }
    if (left == 0) break;
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (ms.count() <= 0) throw rdmatest::HarnessError(std::to_string(left) + " connections silent");
    ::poll(fds.data(), fds.size(), static_cast<int>(ms.count()));
    for (size_t k = 0; k < fds.size(); ++k) {
      if (!(fds[k].revents & (POLLIN | POLLHUP))) continue;
      char chunk[8192];
      const ssize_t n = ::recv(fds[k].fd, chunk, sizeof chunk, MSG_DONTWAIT);
      if (n > 0) conns[index[k]].buf.append(chunk, static_cast<size_t>(n));
    }
  }
  return out;
}

TEST(Stream, AThousandSubscribersEachGetTheRecordAndOneMoreIsRefused) {
  rlimit rl{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &rl), 0);
  if (rl.rlim_cur < 4096) {
    ASSERT_GE(rl.rlim_max, 4096u) << "this test needs 1,000 descriptors and then some";
    rl.rlim_cur = 4096;
    ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &rl), 0);
  }
  SimFabric sim(topology("two-adapters"));
  HubDaemon d(sim, {.socket = R"("max_subscribers": 1000)"});
  std::vector<Conn> conns(1000);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strcpy(addr.sun_path, d.socket().c_str());
  for (Conn& c : conns) {
    c.fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(c.fd, 0);
    ASSERT_EQ(::connect(c.fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0)
        << std::strerror(errno);
  }
  std::set<uint64_t> ids;
  for (const std::string& line : one_line_each(conns, 60s)) {
    const json hello = json::parse(line);
    ASSERT_EQ(hello["type"], "hello") << line;
    ids.insert(hello["subscriber"].get<uint64_t>());
  }
  EXPECT_EQ(ids.size(), 1000u);
  {
    LineClient extra(d.socket());
    EXPECT_EQ(extra.require_json(10s)["error"], "too_many_subscribers");
  }

  inject(sim, {"port", "down", "mlx5_0/1"});
  const std::vector<std::string> records = one_line_each(conns, 60s);
  EXPECT_EQ(json::parse(records[0])["seq"], 1);
  EXPECT_EQ(json::parse(records[0])["event"], "port_err");
  for (const std::string& r : records)
    ASSERT_EQ(r, records[0]);  // the same bytes for everyone

  const std::string status = R"({"op":"status","id":1})"
                             "\n";
  ASSERT_EQ(::send(conns[0].fd, status.data(), status.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(status.size()));
  std::vector<Conn> first(1);
  first[0].fd = conns[0].fd;
  const json st = json::parse(one_line_each(first, 30s)[0]);
  EXPECT_EQ(st["subscribers"]["count"], 1000);
  EXPECT_EQ(st["subscribers"]["refused"], 1);
  EXPECT_EQ(st["subscribers"]["records_sent"], 1000);
  EXPECT_EQ(st["subscribers"]["list"].size(), 1000u);

  // Once they have all gone, the daemon gives their slots back (its status line says 0
  // subscribers): a newcomer is accepted again, and alone.
  for (Conn& c : conns)
    ::close(c.fd);
  d.require_subscribers(0, 60s);
  LineClient after(d.socket());
  EXPECT_EQ(after.require_json(10s, "the hello")["type"], "hello");
  after.send(R"({"op":"status","id":1})"
             "\n");
  EXPECT_EQ(after.read_until(reply_to(1), 20s).back()["subscribers"]["count"], 1);
  EXPECT_TRUE(d.process().running());
}

}  // namespace
}  // namespace rdma_eventd::subtest
