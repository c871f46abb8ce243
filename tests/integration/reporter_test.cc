// Reporters (client.h, rdmaev_reporter_*): reports from an async-event loop, which must never
// wait for the daemon. Through the real daemon: one stopped with SIGSTOP takes a report at
// once and publishes it when it resumes, replying on the reporter's fd; a report written just
// before the reporter closes is published all the same; no daemon is RDMAEV_E_CONNECT at once.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <utility>

#include "daemon_process.h"
#include "line_client.h"
#include "paths.h"
#include "rdma_eventd/client.h"
#include "temp_dir.h"
#include "test_support.h"

namespace rdma_eventd::test {
namespace {

using nlohmann::json;
using rdmatest::LineClient;
using rdmatest::reply_to;
using rdmatest::SimFabric;
using rdmatest::topology;
using Steady = std::chrono::steady_clock;

// Below the 200 ms that rdmaev_report_verbs() may wait, and far above what a few system calls
// take, sanitizers and a loaded machine included. The stopped daemon is the proof that nothing
// waits for it; the bound only says that nothing else was waited for either.
constexpr auto kAtOnce = std::chrono::milliseconds(150);

// Resumes a stopped daemon however the test ends, so that it can be stopped with SIGTERM.
class Stopped {
 public:
  explicit Stopped(rdmatest::Process& p) : p_(p) { p_.signal(SIGSTOP); }
  ~Stopped() { resume(); }
  void resume() {
    if (std::exchange(stopped_, false)) p_.signal(SIGCONT);
  }

 private:
  rdmatest::Process& p_;
  bool stopped_ = true;
};

struct ReporterCloser {
  void operator()(rdmaev_reporter* r) const { rdmaev_reporter_close(r); }
};
using ReporterPtr = std::unique_ptr<rdmaev_reporter, ReporterCloser>;

ReporterPtr open_reporter(const std::string& socket) {
  rdmaev_reporter* r = nullptr;
  const int rc = rdmaev_reporter_open(socket.c_str(), &r);
  EXPECT_EQ(rc, RDMAEV_OK) << rdmaev_strerror(rc) << ": " << rdmaev_last_error(nullptr);
  return ReporterPtr(r);
}

struct ReplyResult {
  int status = RDMAEV_E_TIMEOUT;
  uint64_t id = 0;
  uint64_t seq = 0;
};

// Polls the reporter's fd for what it asks for until a reply comes (or `timeout` passes).
ReplyResult poll_reply(rdmaev_reporter* r, std::chrono::milliseconds timeout) {
  const auto deadline = Steady::now() + timeout;
  ReplyResult out;
  for (;;) {
    out.status = rdmaev_reporter_next_reply(r, &out.id, &out.seq);
    if (out.status != RDMAEV_E_NO_MESSAGE) return out;
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Steady::now());
    if (left.count() <= 0) {
      out.status = RDMAEV_E_TIMEOUT;
      return out;
    }
    pollfd p{};
    EXPECT_EQ(rdmaev_reporter_get_fd(r, &p.fd, &p.events), RDMAEV_OK);
    (void)::poll(&p, 1, static_cast<int>(left.count()));
  }
}

// Sends `report` and waits for its reply, which must answer that report's id; returns the
// reply's status (the send's own status where the send failed).
int send_for_reply(rdmaev_reporter* r, const rdmaev_event_report& report) {
  uint64_t id = 0;
  const int sent = rdmaev_reporter_send(r, &report, &id);
  EXPECT_EQ(sent, RDMAEV_OK) << rdmaev_reporter_last_error(r);
  if (sent != RDMAEV_OK) return sent;
  const ReplyResult reply = poll_reply(r, std::chrono::seconds(10));
  EXPECT_EQ(reply.id, id);
  return reply.status;
}

void subscribe_to_app_reports(LineClient& c) {
  c.require_json(10s);  // hello
  c.send(R"({"op":"subscribe","id":1,"events":["app_report"]})"
         "\n");
  c.read_until(reply_to(1), 10s);
}

// A daemon on the two-adapter fabric and a subscriber to its app_report records.
struct DaemonWithReportSubscriber {
  DaemonWithReportSubscriber() { subscribe_to_app_reports(subscriber); }

  SimFabric sim{topology("two-adapters")};
  DaemonProcess daemon{sim};
  LineClient subscriber{daemon.socket()};
};

rdmaev_event_report qp_fatal(const char* detail) {
  rdmaev_event_report r = RDMAEV_EVENT_REPORT_INIT;
  r.event_type = 1;  // IBV_EVENT_QP_FATAL
  r.device = "mlx5_0";
  r.port = 1;
  r.object_id = 4660;
  r.detail = detail;
  return r;
}

// The record a subscriber reads for qp_fatal(detail) from this process, without its stamps.
void expect_our_qp_fatal(const json& record, const std::string& detail) {
  EXPECT_EQ(record["event"], "app_report");
  EXPECT_EQ(record["reported_event"], "qp_fatal");
  EXPECT_EQ(record["device"], "mlx5_0");
  EXPECT_EQ(record["port"], 1);
  EXPECT_EQ(record["object"], "qp");
  EXPECT_EQ(record["object_id"], 4660);
  EXPECT_EQ(record["detail"], detail);
  EXPECT_EQ(record["reporter"]["pid"], getpid());
  EXPECT_EQ(record["reporter"]["uid"], getuid());
}

TEST(Reporter, AStoppedDaemonTakesTheReportAtOnceAndAnswersWhenItResumes) {
  DaemonWithReportSubscriber setup;
  auto& [sim, daemon, subscriber] = setup;

  Stopped stopped(daemon.process());
  const auto start = Steady::now();
  ReporterPtr r = open_reporter(daemon.socket());
  ASSERT_TRUE(r);
  const rdmaev_event_report report = qp_fatal("job 17 rank 3");
  uint64_t id = 0;
  ASSERT_EQ(rdmaev_reporter_send(r.get(), &report, &id), RDMAEV_OK)
      << rdmaev_reporter_last_error(r.get());
  const auto took = Steady::now() - start;
  EXPECT_LT(took, kAtOnce);
  EXPECT_EQ(id, 1u);
  // The daemon is stopped: no reply can exist yet.
  uint64_t no_id = 0;
  EXPECT_EQ(rdmaev_reporter_next_reply(r.get(), &no_id, nullptr), RDMAEV_E_NO_MESSAGE);

  stopped.resume();
  const json record = subscriber.require_json(10s);
  expect_our_qp_fatal(record, "job 17 rank 3");
  const ReplyResult reply = poll_reply(r.get(), std::chrono::seconds(10));
  ASSERT_EQ(reply.status, RDMAEV_OK)
      << rdmaev_strerror(reply.status) << ": " << rdmaev_reporter_last_error(r.get());
  EXPECT_EQ(reply.id, id);
  EXPECT_EQ(reply.seq, record["seq"].get<uint64_t>());
  EXPECT_EQ(rdmaev_reporter_next_reply(r.get(), nullptr, nullptr), RDMAEV_E_NO_MESSAGE);
}

TEST(Reporter, AReportWrittenBeforeTheReporterClosesIsPublished) {
  // The reporter closes before the stopped daemon has even accepted its connection: the hello
  // it then writes finds nobody, and the report must be read and published all the same.
  DaemonWithReportSubscriber setup;
  auto& [sim, daemon, subscriber] = setup;
  {
    Stopped stopped(daemon.process());
    ReporterPtr r = open_reporter(daemon.socket());
    ASSERT_TRUE(r);
    const rdmaev_event_report first = qp_fatal("first");
    const rdmaev_event_report second = qp_fatal("second");
    ASSERT_EQ(rdmaev_reporter_send(r.get(), &first, nullptr), RDMAEV_OK);
    ASSERT_EQ(rdmaev_reporter_send(r.get(), &second, nullptr), RDMAEV_OK);
  }
  const json a = subscriber.require_json(10s);
  expect_our_qp_fatal(a, "first");
  const json b = subscriber.require_json(10s);
  expect_our_qp_fatal(b, "second");
  EXPECT_EQ(b["seq"].get<uint64_t>(), a["seq"].get<uint64_t>() + 1);
  EXPECT_EQ(daemon.status()["reports"]["accepted"], 2);
}

TEST(Reporter, ARefusedReportIsAnsweredOnTheFdWithTheDaemonsWords) {
  SimFabric sim(topology("two-adapters"));
  DaemonProcess daemon(sim);
  ReporterPtr r = open_reporter(daemon.socket());
  ASSERT_TRUE(r);
  rdmaev_event_report report = qp_fatal(nullptr);
  report.device = "mlx9_9";
  EXPECT_EQ(send_for_reply(r.get(), report), RDMAEV_E_REFUSED);
  EXPECT_EQ(std::string(rdmaev_reporter_last_error(r.get()))
                .rfind("bad_report: device: 'mlx9_9' is not a device rdma-eventd watches", 0),
            0u)
      << rdmaev_reporter_last_error(r.get());
}

// struct rdmaev_event_report carries its size: a struct not started from
// RDMAEV_EVENT_REPORT_INIT is refused before anything is sent, saying why; one from a newer
// client.h, with members this library does not know after its own, is taken.
TEST(Reporter, AReportIsReadUpToTheSizeItCarries) {
  SimFabric sim(topology("two-adapters"));
  DaemonProcess daemon(sim);
  ReporterPtr r = open_reporter(daemon.socket());
  ASSERT_TRUE(r);
  rdmaev_event_report unsized = qp_fatal(nullptr);
  unsized.size = 0;
  EXPECT_EQ(rdmaev_reporter_send(r.get(), &unsized, nullptr), RDMAEV_E_INVAL);
  EXPECT_EQ(std::string(rdmaev_reporter_last_error(r.get())),
            "struct rdmaev_event_report's size is 0, less than " +
                std::to_string(sizeof(rdmaev_event_report)) +
                ": start from RDMAEV_EVENT_REPORT_INIT");

  struct NewerReport {
    rdmaev_event_report known;
    uint64_t added_later;
  } newer{qp_fatal("newer"), 7};
  newer.known.size = sizeof newer;
  EXPECT_EQ(send_for_reply(r.get(), newer.known), RDMAEV_OK) << rdmaev_reporter_last_error(r.get());
}

TEST(Reporter, NoDaemonIsConnectErrorAtOnce) {
  rdmatest::TempDir dir("rdma-reporter");
  const std::string socket = dir.file("events.sock");
  const auto start = Steady::now();
  rdmaev_reporter* r = nullptr;
  EXPECT_EQ(rdmaev_reporter_open(socket.c_str(), &r), RDMAEV_E_CONNECT);
  EXPECT_LT(Steady::now() - start, kAtOnce);
  EXPECT_EQ(r, nullptr);
  EXPECT_EQ(std::string(rdmaev_last_error(nullptr)), socket + ": No such file or directory");
}

TEST(Reporter, ADaemonThatStoppedListeningIsConnectErrorAtOnce) {
  SimFabric sim(topology("two-adapters"));
  DaemonProcess daemon(sim);
  const std::string socket = daemon.socket();
  ASSERT_TRUE(daemon.stop().success());
  const auto start = Steady::now();
  rdmaev_reporter* r = nullptr;
  EXPECT_EQ(rdmaev_reporter_open(socket.c_str(), &r), RDMAEV_E_CONNECT);
  EXPECT_LT(Steady::now() - start, kAtOnce);
  EXPECT_EQ(r, nullptr);
}

}  // namespace
}  // namespace rdma_eventd::test
