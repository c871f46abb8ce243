// Reporters (client.h, rdmaev_reporter_*): reports from an async-event loop, which must never
// wait for the daemon. Through the real daemon: one stopped with SIGSTOP takes a report at
// once and publishes it when it resumes, replying on the reporter's fd; a report written just
// before the reporter closes is published all the same; a reporter whose queue is full says so
// (RDMAEV_E_FULL) and sends what it queued once the daemon reads again; no daemon is
// RDMAEV_E_CONNECT at once.
#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include "daemon_process.h"
#include "line_client.h"
#include "paths.h"
#include "rdma_eventd/client.h"
#include "reporter_support.h"
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

// A daemon on the two-adapter fabric and a subscriber to its app_report records.
struct DaemonWithReportSubscriber {
  explicit DaemonWithReportSubscriber(const std::string& config = "{}")
      : daemon(sim, quiet_daemon(config)), subscriber(daemon.socket()) {
    subscribe_to_app_reports(subscriber);
  }

  SimFabric sim{topology("two-adapters")};
  DaemonProcess daemon;
  LineClient subscriber;
};

// A daemon on the two-adapter fabric and a reporter connected to it (closed before the daemon
// stops).
struct DaemonWithReporter {
  SimFabric sim{topology("two-adapters")};
  DaemonProcess daemon{sim};
  ReporterPtr r = open_reporter(daemon.socket());
};

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
  DaemonWithReporter setup;
  const ReporterPtr& r = setup.r;
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
  DaemonWithReporter setup;
  const ReporterPtr& r = setup.r;
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

TEST(Reporter, AFullQueueRefusesTheReportAndWhatWasQueuedIsPublishedOnceTheDaemonReads) {
  // The daemon is stopped, so it reads nothing: the socket fills, then the reporter's queue,
  // then a report is refused with RDMAEV_E_FULL, at once, and not sent. Once the daemon runs
  // again, every report taken before is published, in order, and the refused ones are not.
  DaemonWithReportSubscriber setup(R"({"socket": {"max_requests_per_second": 1000000},)"
                                   R"( "reports": {"max_per_second": 10000}})");
  auto& [sim, daemon, subscriber] = setup;
  std::vector<std::string> taken;
  {
    Stopped stopped(daemon.process());
    ReporterPtr r = open_reporter(daemon.socket());
    ASSERT_TRUE(r);
    int status = RDMAEV_OK;
    // Enough for any socket buffer and the queue's 64 KiB: each report is about 110 bytes.
    while (taken.size() < 100000) {
      const std::string detail = "report " + std::to_string(taken.size() + 1);
      const rdmaev_event_report report = qp_fatal(detail.c_str());
      uint64_t id = 0;
      const auto start = Steady::now();
      status = rdmaev_reporter_send(r.get(), &report, &id);
      EXPECT_LT(Steady::now() - start, kAtOnce);
      if (status != RDMAEV_OK) break;
      taken.push_back(detail);
      ASSERT_EQ(id, taken.size());
    }
    ASSERT_EQ(status, RDMAEV_E_FULL) << rdmaev_strerror(status);
    const std::string why = rdmaev_reporter_last_error(r.get());
    EXPECT_EQ(why.rfind("the daemon has not read the last ", 0), 0u) << why;
    EXPECT_NE(why.find(" bytes of reports; this one was not sent"), std::string::npos) << why;
    // Still full while the daemon reads nothing; the refusal takes nothing away.
    const rdmaev_event_report refused = qp_fatal("refused");
    EXPECT_EQ(rdmaev_reporter_send(r.get(), &refused, nullptr), RDMAEV_E_FULL);
    // The queue is at least 64 KiB less one report: more than the socket alone took.
    EXPECT_GT(taken.size(), RDMAEV_REPORTER_QUEUE_BYTES / 128);

    stopped.resume();
    // The replies come in the order of the reports, one per report, while the queue is
    // written out: poll_reply writes it whenever the fd takes more.
    uint64_t last_seq = 0;
    for (size_t i = 1; i <= taken.size(); ++i) {
      const ReplyResult reply = poll_reply(r.get(), std::chrono::seconds(20));
      ASSERT_EQ(reply.status, RDMAEV_OK) << "reply " << i << ": " << rdmaev_strerror(reply.status)
                                         << ": " << rdmaev_reporter_last_error(r.get());
      ASSERT_EQ(reply.id, i);
      EXPECT_GT(reply.seq, last_seq);
      last_seq = reply.seq;
    }
  }
  for (const std::string& detail : taken)
    expect_our_qp_fatal(subscriber.require_json(20s, detail), detail);
  // Nothing more: the refused reports were never sent.
  const json status = daemon.status();
  EXPECT_EQ(status["reports"]["accepted"], taken.size());
  EXPECT_EQ(status["counters"]["records"], taken.size());
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
