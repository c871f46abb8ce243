// The report socket (docs/protocol.md, "The report socket"), through the real daemon and the
// client library: a reporter gets no records, whatever flows to the subscribers, and the status
// reply lists it as a reporter; the socket takes reports and pings and refuses what would send
// records; reporters have limits of their own, which are not the subscribers': a user holds more
// reporters than socket.max_subscribers_per_user, all working, and one over
// reports.max_reporters_per_user or reports.max_reporters is refused with too_many_reporters.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "daemon_process.h"
#include "harness.h"
#include "reporter_support.h"

namespace rdma_eventd::test {
namespace {

using nlohmann::json;
using rdmatest::Credentials;
using rdmatest::inject;
using rdmatest::LineClient;
using rdmatest::reply_to;
using rdmatest::SimFabric;
using rdmatest::topology;

constexpr uid_t kUser = 4242;

// What can be read on `fd` now, left there for its owner.
std::string peek(int fd) {
  std::string buf(65536, '\0');
  const ssize_t n = ::recv(fd, buf.data(), buf.size(), MSG_PEEK | MSG_DONTWAIT);
  if (n < 0 && errno == EAGAIN) return "";
  if (n < 0) throw rdmatest::HarnessError(std::string("recv: ") + std::strerror(errno));
  buf.resize(static_cast<size_t>(n));
  return buf;
}

int fd_of(rdmaev_reporter* r) {
  int fd = -1;
  EXPECT_EQ(rdmaev_reporter_get_fd(r, &fd, nullptr), RDMAEV_OK);
  return fd;
}

// The ids of the connections a status reply lists under `block`.
std::vector<uint64_t> ids_in(const json& status, const char* block) {
  std::vector<uint64_t> ids;
  for (const json& c : status[block]["list"])
    ids.push_back(c["id"].get<uint64_t>());
  return ids;
}

TEST(ReporterSocket, AReporterGetsNoRecordsAndTheStatusListsItAsAReporter) {
  SimFabric sim(topology("two-adapters"));
  DaemonProcess daemon(sim, quiet_daemon());
  LineClient subscriber(daemon.socket());
  subscriber.require_json(10s);  // hello: every record from now on
  StatusAsker asker(daemon.socket());
  ReporterPtr r = open_reporter(daemon.socket());
  ASSERT_TRUE(r);
  const int fd = fd_of(r.get());
  // Accepted before any record: had it been a subscriber, it would have been sent them all.
  ASSERT_TRUE(rdmatest::wait_until([&] { return asker.status()["reporters"]["count"] == 1; }, 10s));

  inject(sim, {"port", "down", "mlx5_0/1"});
  inject(sim, {"lid", "mlx5_0/1", "23"});
  inject(sim, {"port", "down", "mlx5_1/2"});
  for (uint64_t seq = 1; seq <= 3; ++seq)
    EXPECT_EQ(subscriber.require_json(10s)["seq"], seq);

  // By the time the status is answered, the daemon has written those records to every
  // connection they were for. The reporter's holds its hello, and nothing else.
  const json before = asker.status();
  ASSERT_EQ(before["reporters"]["count"], 1) << before["reporters"].dump();
  const json& listed = before["reporters"]["list"][0];
  EXPECT_EQ(listed["pid"], getpid());
  EXPECT_EQ(listed["uid"], 0);
  EXPECT_EQ(listed["bytes_queued"], 0);
  EXPECT_EQ(before["reporters"]["socket"], daemon.socket() + ".report");
  const std::vector<uint64_t> subscribers = ids_in(before, "subscribers");
  EXPECT_EQ(subscribers.size(), 2u);  // the subscriber, and the connection asking
  EXPECT_EQ(std::count(subscribers.begin(), subscribers.end(), listed["id"].get<uint64_t>()), 0);
  const std::string waiting = peek(fd);
  ASSERT_FALSE(waiting.empty());
  EXPECT_EQ(waiting.find('\n'), waiting.size() - 1) << waiting;  // one line
  const json hello = json::parse(waiting);
  EXPECT_EQ(hello["type"], "hello");
  EXPECT_EQ(hello["reporter"], listed["id"]);
  EXPECT_FALSE(hello.contains("subscriber"));
  EXPECT_EQ(hello["seq"], 0);
  EXPECT_EQ(hello["stream"], daemon.stream());
  EXPECT_EQ(listed["bytes_sent"], waiting.size());

  // Its own report is published to the subscribers, and it gets the reply alone.
  uint64_t seq = 0;
  ASSERT_EQ(send_for_reply(r.get(), qp_fatal("no records"), &seq), RDMAEV_OK)
      << rdmaev_reporter_last_error(r.get());
  EXPECT_EQ(seq, 4u);
  expect_our_qp_fatal(subscriber.require_json(10s), "no records");
  inject(sim, {"port", "up", "mlx5_0/1"});
  EXPECT_EQ(subscriber.require_json(10s)["seq"], 5);
  const json after = asker.status();
  const std::string reply = R"({"type":"reply","op":"report","id":1,"seq":4})"
                            "\n";
  EXPECT_EQ(after["reporters"]["list"][0]["bytes_sent"], waiting.size() + reply.size());
  EXPECT_EQ(after["reporters"]["list"][0]["requests"], 1);
  EXPECT_EQ(after["reporters"]["accepted"], 1);
}

TEST(ReporterSocket, TakesReportsAndPingsAndRefusesWhatWouldSendRecords) {
  SimFabric sim(topology("two-adapters"));
  DaemonProcess daemon(sim, quiet_daemon());
  LineClient subscriber(daemon.socket());
  subscriber.require_json(10s);
  const std::string report_socket = daemon.socket() + ".report";
  LineClient c(report_socket);
  const json hello = c.require_json(10s, "the hello");
  EXPECT_EQ(hello["type"], "hello");
  EXPECT_EQ(hello["protocol"], 1);
  EXPECT_TRUE(hello.contains("reporter"));
  EXPECT_FALSE(hello.contains("subscriber"));
  inject(sim, {"port", "down", "mlx5_0/1"});
  EXPECT_EQ(subscriber.require_json(10s)["seq"], 1);  // published
  c.send(R"({"op":"ping","id":1})"
         "\n");
  // The record published meanwhile is not among what comes back: the reply alone.
  EXPECT_EQ(c.require_json(10s), json({{"type", "reply"}, {"op", "ping"}, {"id", 1}, {"seq", 1}}));
  int id = 1;
  for (const char* op : {"subscribe", "snapshot", "status", "health"}) {
    c.send(json{{"op", op}, {"id", ++id}}.dump() + "\n");
    EXPECT_EQ(c.require_json(10s),
              json({{"type", "error"},
                    {"op", op},
                    {"id", id},
                    {"error", "reports_only"},
                    {"message", "the report socket takes report and ping; " + std::string(op) +
                                    " is a request for the events socket, " + daemon.socket()}}));
  }
  c.send(R"({"op":"since","id":9,"seq":0})"
         "\n");
  EXPECT_EQ(c.require_json(10s)["error"], "reports_only");
  // The connection goes on.
  c.send(R"({"op":"report","id":10,"event":"qp_fatal","device":"mlx5_0","qp_num":7})"
         "\n");
  EXPECT_EQ(c.require_json(10s),
            json({{"type", "reply"}, {"op", "report"}, {"id", 10}, {"seq", 2}}));
  const json st = StatusAsker(daemon.socket()).status()["reporters"];
  EXPECT_EQ(st["request_errors"], 5);
  EXPECT_EQ(st["list"][0]["requests"], 7);
}

TEST(ReporterSocket, AUserHoldsMoreReportersThanSubscribersAllWorkingUpToItsOwnCap) {
  // Two subscriber connections per user, five reporters: a job of five ranks on this node.
  SimFabric sim(topology("two-adapters"));
  DaemonProcess daemon(
      sim, quiet_daemon(R"({"socket": {"mode": "0666", "max_subscribers_per_user": 2},)"
                        R"( "reports": {"max_reporters_per_user": 5, "max_per_second": 1000}})"));
  ASSERT_EQ(::chmod(daemon.dir().c_str(), 0755), 0);
  LineClient subscriber(daemon.socket());
  subscribe_to_app_reports(subscriber);

  std::vector<ReporterPtr> ranks;
  for (int i = 0; i < 5; ++i) {
    ranks.push_back(open_reporter_as(daemon.socket(), kUser));
    ASSERT_TRUE(ranks.back());
  }
  for (size_t i = 0; i < ranks.size(); ++i) {
    const std::string detail = "rank " + std::to_string(i);
    uint64_t seq = 0;
    ASSERT_EQ(send_for_reply(ranks[i].get(), qp_fatal(detail.c_str()), &seq), RDMAEV_OK)
        << detail << ": " << rdmaev_reporter_last_error(ranks[i].get());
    const json record = subscriber.require_json(10s, detail);
    expect_our_qp_fatal(record, detail, kUser);
    EXPECT_EQ(record["seq"], seq);
  }

  // The sixth is refused, saying why, and closed.
  ReporterPtr sixth = open_reporter_as(daemon.socket(), kUser);
  ASSERT_TRUE(sixth);  // connecting does not wait for the daemon's answer
  const ReplyResult refused = poll_reply(sixth.get(), std::chrono::seconds(10));
  EXPECT_EQ(refused.status, RDMAEV_E_REFUSED) << rdmaev_strerror(refused.status);
  EXPECT_EQ(refused.id, 0u);
  EXPECT_EQ(std::string(rdmaev_reporter_last_error(sixth.get())),
            "too_many_reporters: too many reporters for uid 4242 "
            "(reports.max_reporters_per_user is 5)");
  EXPECT_EQ(poll_reply(sixth.get(), std::chrono::seconds(10)).status, RDMAEV_E_CLOSED);

  // The user's subscriber slots are its own still: two, and a third is refused.
  const Credentials user{kUser, kUser, {}};
  LineClient first(daemon.socket(), user), second(daemon.socket(), user);
  EXPECT_EQ(first.require_json(10s)["type"], "hello");
  EXPECT_EQ(second.require_json(10s)["type"], "hello");
  LineClient third(daemon.socket(), user);
  EXPECT_EQ(third.read_to_eof(10s)[0]["error"], "too_many_subscribers");

  const json st = StatusAsker(daemon.socket()).status();
  EXPECT_EQ(st["reporters"]["count"], 5);
  EXPECT_EQ(st["reporters"]["max_per_user"], 5);
  EXPECT_EQ(st["reporters"]["refused"], 1);
  EXPECT_EQ(st["reporters"]["refused_by"],
            json({{"max_reporters", 0}, {"max_reporters_per_user", 1}, {"access", 0}}));
  for (const json& r : st["reporters"]["list"])
    EXPECT_EQ(r["uid"], kUser);
  EXPECT_EQ(st["subscribers"]["refused"], 1);
  EXPECT_EQ(st["subscribers"]["refused_by"]["max_subscribers_per_user"], 1);
  EXPECT_EQ(st["reports"]["accepted"], 5);
}

TEST(ReporterSocket, OverMaxReportersEvenRootIsRefusedUntilOneCloses) {
  // Two subscribers at most, the test's and the status's: reporters do not count.
  SimFabric sim(topology("two-adapters"));
  DaemonProcess daemon(
      sim, quiet_daemon(R"({"socket": {"max_subscribers": 2},)"
                        R"( "reports": {"max_reporters": 3, "max_per_second": 1000}})"));
  LineClient subscriber(daemon.socket());
  subscribe_to_app_reports(subscriber);
  StatusAsker asker(daemon.socket());
  std::vector<ReporterPtr> held;
  for (int i = 0; i < 3; ++i) {
    held.push_back(open_reporter(daemon.socket()));
    ASSERT_EQ(send_for_reply(held.back().get(), qp_fatal("held")), RDMAEV_OK)
        << rdmaev_reporter_last_error(held.back().get());
    expect_our_qp_fatal(subscriber.require_json(10s), "held");
  }
  ReporterPtr fourth = open_reporter(daemon.socket());
  ASSERT_TRUE(fourth);
  EXPECT_EQ(poll_reply(fourth.get(), std::chrono::seconds(10)).status, RDMAEV_E_REFUSED);
  EXPECT_EQ(std::string(rdmaev_reporter_last_error(fourth.get())),
            "too_many_reporters: too many reporters (reports.max_reporters is 3)");

  // One goes: once the daemon has seen it go, there is room for another.
  held.pop_back();
  ASSERT_TRUE(rdmatest::wait_until([&] { return asker.status()["reporters"]["count"] == 2; }, 10s));
  ReporterPtr again = open_reporter(daemon.socket());
  ASSERT_EQ(send_for_reply(again.get(), qp_fatal("again")), RDMAEV_OK)
      << rdmaev_reporter_last_error(again.get());
  expect_our_qp_fatal(subscriber.require_json(10s), "again");
  const json st = asker.status();
  EXPECT_EQ(st["reporters"]["refused_by"]["max_reporters"], 1);
  EXPECT_EQ(st["reporters"]["accepted"], 4);
  EXPECT_EQ(st["subscribers"]["refused"], 0);
  EXPECT_EQ(st["subscribers"]["count"], 2);
}

}  // namespace
}  // namespace rdma_eventd::test
