// Reporters across versions (docs/protocol.md, "Versions"). A daemon without a report socket
// (an older one, or one whose socket unit passes none) is shown to the client library by
// removing the path of the report socket: the library then reports over the events socket, as
// it did before, where records come too; each of its calls still reads a bounded amount of
// them, and its reports are published and answered. And a reporter of an older library, which
// speaks on the events socket, is served as before.
#include <gtest/gtest.h>
#include <unistd.h>

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
using rdmatest::inject;
using rdmatest::LineClient;
using rdmatest::reply_to;
using rdmatest::SimFabric;
using rdmatest::topology;

// What one call of the library reads at most (lib/src/reporter.cc, kReadPerCall).
constexpr size_t kReadPerCall = 2048;

// The daemon as an older one looks to a client: no report socket where the library looks.
void hide_report_socket(const DaemonProcess& daemon) {
  const std::string path = daemon.socket() + ".report";
  ASSERT_EQ(::unlink(path.c_str()), 0) << path << ": " << std::strerror(errno);
}

TEST(ReporterCompat, WithoutAReportSocketTheLibraryReportsOnTheEventsSocket) {
  SimFabric sim(topology("two-adapters"));
  DaemonProcess daemon(sim, quiet_daemon());
  hide_report_socket(daemon);
  LineClient subscriber(daemon.socket());
  subscribe_to_app_reports(subscriber);
  StatusAsker asker(daemon.socket());

  ReporterPtr r = open_reporter(daemon.socket());
  ASSERT_TRUE(r);
  inject(sim, {"port", "down", "mlx5_0/1"});  // a record its connection gets, and skips
  uint64_t seq = 0;
  ASSERT_EQ(send_for_reply(r.get(), qp_fatal("fallback"), &seq), RDMAEV_OK)
      << rdmaev_reporter_last_error(r.get());
  const json record = subscriber.require_json(10s);
  expect_our_qp_fatal(record, "fallback");
  EXPECT_EQ(record["seq"], seq);
  // It is a subscriber of that daemon, as reporters were before the report socket.
  const json st = asker.status();
  EXPECT_EQ(st["reporters"]["count"], 0);
  EXPECT_EQ(st["subscribers"]["count"], 3);
}

TEST(ReporterCompat, OnTheEventsSocketEachCallReadsABoundedAmountOfRecords) {
  // The records of a storm fill the reporter's socket; a call reads at most kReadPerCall bytes
  // of them, where it used to read and parse all there was. The daemon drops for it what does
  // not fit ("lost" lines, skipped too), and its report is still answered.
  SimFabric sim(topology("two-adapters"));
  DaemonProcess daemon(sim, quiet_daemon());
  hide_report_socket(daemon);
  ReporterPtr r = open_reporter(daemon.socket());
  ASSERT_TRUE(r);
  int fd = -1;
  ASSERT_EQ(rdmaev_reporter_get_fd(r.get(), &fd, nullptr), RDMAEV_OK);
  inject(sim, {"storm", "--count", "3000", "--targets", "mlx5_0/1"});
  ASSERT_TRUE(rdmatest::wait_until([&] { return unread_bytes(fd) >= 64 * 1024; }, 20s))
      << unread_bytes(fd) << " bytes unread";

  // The daemon may write more meanwhile, never less: what a call took is at most the drop.
  size_t before = unread_bytes(fd);
  EXPECT_EQ(rdmaev_reporter_next_reply(r.get(), nullptr, nullptr), RDMAEV_E_NO_MESSAGE);
  EXPECT_GE(unread_bytes(fd) + kReadPerCall, before);
  before = unread_bytes(fd);
  uint64_t id = 0;
  const rdmaev_event_report report = qp_fatal("amid a storm");
  ASSERT_EQ(rdmaev_reporter_send(r.get(), &report, &id), RDMAEV_OK)
      << rdmaev_reporter_last_error(r.get());
  EXPECT_GE(unread_bytes(fd) + kReadPerCall, before);

  // Call after call, the records are skipped until the reply.
  const ReplyResult reply = poll_reply(r.get(), std::chrono::seconds(30));
  ASSERT_EQ(reply.status, RDMAEV_OK)
      << rdmaev_strerror(reply.status) << ": " << rdmaev_reporter_last_error(r.get());
  EXPECT_EQ(reply.id, id);
  EXPECT_GT(reply.seq, 0u);
}

TEST(ReporterCompat, AReporterOfAnOlderLibraryOnTheEventsSocketIsServedAsBefore) {
  // What an older library sends: its report on the events socket, where it is a subscriber and
  // gets its own record before the reply.
  SimFabric sim(topology("two-adapters"));
  DaemonProcess daemon(sim, quiet_daemon());
  LineClient old(daemon.socket());
  const json hello = old.require_json(10s);
  EXPECT_TRUE(hello.contains("subscriber"));
  EXPECT_FALSE(hello.contains("reporter"));
  old.send(R"({"op":"report","id":1,"event":"qp_fatal","device":"mlx5_0","port":1,)"
           R"("qp_num":4660,"detail":"old"})"
           "\n");
  const std::vector<json> lines = old.read_until(reply_to(1), 10s);
  ASSERT_EQ(lines.size(), 2u);
  expect_our_qp_fatal(lines[0], "old");
  EXPECT_EQ(lines[1], json({{"type", "reply"}, {"op", "report"}, {"id", 1}, {"seq", 1}}));
  EXPECT_EQ(lines[0]["seq"], 1);
  const json st = StatusAsker(daemon.socket()).status();
  EXPECT_EQ(st["reports"]["accepted"], 1);
  EXPECT_EQ(st["reporters"]["count"], 0);
  EXPECT_EQ(st["subscribers"]["list"][0]["id"], hello["subscriber"]);
}

}  // namespace
}  // namespace rdma_eventd::test
