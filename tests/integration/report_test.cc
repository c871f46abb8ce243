// Application reports end to end: a C program on the simulator reads an affiliated event from
// its own context and reports it through librdma-eventd; a subscriber, the daemon's output and
// journald see who reported it. Then who may report, how often, and what is refused.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "daemon_process.h"
#include "journal_sandbox.h"
#include "line_client.h"
#include "paths.h"
#include "rdma_eventd/client.h"
#include "test_support.h"

namespace rdma_eventd::test {
namespace {

using nlohmann::json;
using rdmatest::Credentials;
using rdmatest::LineClient;
using rdmatest::Process;
using rdmatest::reply_to;
using rdmatest::SimFabric;
using rdmatest::topology;

// The cgroup v2 path of this process (its children's too), from /proc/self/cgroup.
std::string own_cgroup() {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("0::", 0) == 0) return line.substr(3);
  }
  return "";
}

// "key=value" out of the report program's "ready pid=1 qp=2 cq=3" line.
std::string ready_field(const std::string& line, const std::string& key) {
  const size_t at = line.find(key + "=");
  EXPECT_NE(at, std::string::npos) << key << " in " << line;
  if (at == std::string::npos) return "";
  const size_t end = line.find(' ', at);
  return line.substr(at + key.size() + 1,
                     end == std::string::npos ? end : end - at - key.size() - 1);
}

// The simulator's id of the context `pid` opened on `device`.
std::string context_of(const SimFabric& sim, int pid, const std::string& device) {
  for (const auto& c : contexts_of(sim.stats(), pid)) {
    if (c["device"] == device) return std::to_string(c["id"].get<uint64_t>());
  }
  ADD_FAILURE() << "pid " << pid << " has no context on " << device << ": " << sim.stats().dump();
  return "";
}

json subscribe_to_reports(LineClient& c) {
  c.require_json(10s);  // hello
  c.send(R"({"op":"subscribe","id":1,"events":["app_report"],"devices":["mlx5_0"]})"
         "\n");
  return c.read_until(reply_to(1), 10s).back();
}

json status_reports(const std::string& socket) {
  LineClient c(socket);
  c.require_json(10s);
  c.send(R"({"op":"status","id":"s"})"
         "\n");
  return c.read_until(reply_to("s"), 10s).back()["reports"];
}

// The app_report record of a QP_FATAL on mlx5_0's QP 0x1234, reported by the program `comm`
// (pid) run by this test's user.
void expect_qp_fatal_report(const json& record, int pid, const std::string& comm) {
  EXPECT_EQ(record["event"], "app_report");
  EXPECT_EQ(record["event_type"], 1);
  EXPECT_EQ(record["severity"], "error");
  EXPECT_EQ(record["device"], "mlx5_0");
  EXPECT_EQ(record["reported_event"], "qp_fatal");
  EXPECT_EQ(record["object"], "qp");
  EXPECT_EQ(record["object_id"], 4660);
  EXPECT_EQ(record["reporter"]["pid"], pid);
  EXPECT_EQ(record["reporter"]["uid"], getuid());
  EXPECT_EQ(record["reporter"]["comm"], comm);
}

TEST(Reports, AnApplicationReportsAQpFatalAndEverySinkSeesWhoItIs) {
  JournalSandbox& journal = JournalSandbox::instance();
  (void)journal;
  SimFabric sim(topology("two-adapters"));
  DaemonProcess daemon(sim);
  LineClient subscriber(daemon.socket());
  subscribe_to_reports(subscriber);

  Process app = sim.spawn({rdmatest::bin("report_app"), daemon.socket(), "mlx5_0", "1"});
  const std::string ready = app.require_next_line(20s);
  const int pid = std::stoi(ready_field(ready, "pid"));
  ASSERT_EQ(pid, app.pid()) << ready;
  // QP_FATAL (1) to the application's context only, carrying its QP as the kernel would.
  inject(sim, {"event", "mlx5_0", "1", "--element", ready_field(ready, "qp"), "--context",
               context_of(sim, pid, "mlx5_0")});
  const std::string reported = app.require_next_line(20s);
  ASSERT_EQ(reported.rfind("reported 1 seq=", 0), 0u) << reported;
  const uint64_t seq = std::stoull(ready_field(reported, "seq"));
  EXPECT_TRUE(app.require_exit(20s).success()) << app.describe();

  const json record = subscriber.require_json(10s);
  EXPECT_EQ(record["seq"], seq);
  expect_qp_fatal_report(record, pid, "report_app");
  EXPECT_EQ(record["detail"], "job 17 rank 3");
  EXPECT_EQ(record["reporter"]["gid"], getgid());
  EXPECT_EQ(record["reporter"]["cgroup"], own_cgroup());
  // Every sink has the same record: the daemon's output...
  const Record printed = daemon.next_record();
  EXPECT_EQ(printed.seq, seq);
  EXPECT_EQ(printed.event, EventKind::kAppReport);
  EXPECT_EQ(printed.reporter.pid, pid);
  // ...and the journal, with its own message id and the reporter's fields.
  const auto entries = daemon.journal_entries(1);
  ASSERT_EQ(entries.size(), 1u);
  const json& e = entries[0];
  EXPECT_EQ(e["MESSAGE_ID"], "0513127955ef45d9a80cf6a8e4e25548");
  EXPECT_EQ(e["RDMA_SEQ"], std::to_string(seq));
  EXPECT_EQ(e["RDMA_EVENT"], "app_report");
  EXPECT_EQ(e["RDMA_REPORTER_PID"], std::to_string(pid));
  EXPECT_EQ(e["RDMA_REPORTER_UID"], std::to_string(getuid()));
  EXPECT_EQ(e["RDMA_REPORTER_COMM"], "report_app");
  EXPECT_EQ(json::parse(e["RDMA_RECORD"].get<std::string>()), record);
  EXPECT_EQ(status_reports(daemon.socket())["accepted"], 1);
}

TEST(Reports, TheDocsExampleReportsAQpFatalOnItsOwnContext) {
  // Given the C example of docs/protocol.md ("report") linked into a program that opens mlx5_0
  // and runs it, a QP_FATAL the simulator raises on that program's context is reported: a
  // subscriber reads the app_report record, with the program as the reporter.
  SimFabric sim(topology("two-adapters"));
  DaemonProcess daemon(sim);
  LineClient subscriber(daemon.socket());
  subscribe_to_reports(subscriber);

  // The example reports to the default socket (RDMAEV_DEFAULT_SOCKET): in a mount namespace of
  // its own, that path is this test's daemon's socket, and the host's /run is left alone.
  const std::string script =
      "mount -t tmpfs -o mode=0755 tmpfs /run && mkdir /run/rdma-eventd && "
      ": >" RDMAEV_DEFAULT_SOCKET " && mount --bind \"$1\" " RDMAEV_DEFAULT_SOCKET
      " && exec \"$2\" mlx5_0";
  Process app = sim.spawn({"unshare", "--mount", "--propagation", "private", "sh", "-c", script,
                           "sh", daemon.socket(), rdmatest::bin("report_example")});
  const std::string ready = app.require_next_line(20s);
  const int pid = std::stoi(ready_field(ready, "pid"));
  ASSERT_EQ(pid, app.pid()) << ready;
  // QP_FATAL (1) to the example's context only, carrying its QP as the kernel would.
  inject(sim, {"event", "mlx5_0", "1", "--element", ready_field(ready, "qp"), "--context",
               context_of(sim, pid, "mlx5_0")});

  const json record = subscriber.require_json(10s);
  expect_qp_fatal_report(record, pid, "report_example");
  EXPECT_EQ(daemon.next_record().seq, record["seq"].get<uint64_t>());
  EXPECT_EQ(status_reports(daemon.socket())["accepted"], 1);
  // The example reads events until it is stopped; it was still running, having reported.
  EXPECT_TRUE(app.running()) << app.describe();
  app.stop();
}

TEST(Reports, OnlyTheAllowedMayReport) {
  SimFabric sim(topology("two-adapters"));
  DaemonProcess daemon(sim, R"({"socket": {"mode": "0666"},
                               "reports": {"allow_users": [4243], "allow_groups": [4300]}})");
  ASSERT_EQ(::chmod(daemon.dir().c_str(), 0755), 0);
  const std::string report = R"({"op":"report","id":7,"event":"cq_err","device":"mlx5_0","cq":9})"
                             "\n";
  auto answer = [&](const Credentials& who) {
    LineClient c(daemon.socket(), who);
    c.require_json(10s);
    c.send(report);
    return c.read_until(reply_to(7), 10s).back();
  };
  const json refused = answer(Credentials{4242, 4242, {}});
  EXPECT_EQ(refused["type"], "error");
  EXPECT_EQ(refused["error"], "report_denied");
  EXPECT_EQ(refused["message"],
            "uid 4242 (gid 4242) may not report: not in reports.allow_users and in none of "
            "reports.allow_groups");
  EXPECT_EQ(answer(Credentials{4243, 4243, {}})["type"], "reply");      // listed user
  EXPECT_EQ(answer(Credentials{4244, 4244, {4300}})["type"], "reply");  // listed group
  EXPECT_EQ(answer(Credentials{0, 0, {}})["type"], "reply");            // root
  const json counted = status_reports(daemon.socket());
  EXPECT_EQ(counted["denied"], 1);
  EXPECT_EQ(counted["accepted"], 3);
}

TEST(Reports, AReporterOverItsRateIsRefusedAndCounted) {
  SimFabric sim(topology("two-adapters"));
  DaemonProcess daemon(sim, R"({"reports": {"max_per_second": 2}})");
  LineClient c(daemon.socket());
  c.require_json(10s);
  // Three in one write: the daemon reads them at once, within the second of the bucket.
  std::string three;
  for (int id = 1; id <= 3; ++id) {
    three += json{{"op", "report"},
                  {"id", id},
                  {"event", "qp_fatal"},
                  {"device", "mlx5_0"},
                  {"qp_num", 100 + id}}
                 .dump() +
             "\n";
  }
  c.send(three);
  const auto lines = c.read_until(reply_to(3), 10s);
  std::vector<json> answers;
  for (const json& l : lines) {
    if (l.contains("type")) answers.push_back(l);
  }
  ASSERT_EQ(answers.size(), 3u) << json(lines).dump();
  EXPECT_EQ(answers[0]["type"], "reply");
  EXPECT_EQ(answers[1]["type"], "reply");
  EXPECT_EQ(answers[1]["seq"], answers[0]["seq"].get<uint64_t>() + 1);
  EXPECT_EQ(answers[2]["error"], "rate_limited");
  EXPECT_EQ(answers[2]["message"],
            "over reports.max_per_second (2 for uid 0); the report was not published");
  const json counted = status_reports(daemon.socket());
  EXPECT_EQ(counted["accepted"], 2);
  EXPECT_EQ(counted["rate_limited"], 1);
  EXPECT_EQ(counted["max_per_second"], 2);
}

TEST(Reports, AMalformedReportGetsItsErrorAndPublishesNothing) {
  SimFabric sim(topology("two-adapters"));
  DaemonProcess daemon(sim);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"("event":"port_err","device":"mlx5_0")", "bad_report"},
      {R"("event":4,"device":"mlx5_0")", "bad_report"},  // COMM_EST: a healthy connection
      {R"("event":"qp_fatal","device":"mlx5_9")", "bad_report"},
      {R"("event":"qp_fatal","device":"mlx5_0","port":7)", "bad_report"},
      {R"("event":"qp_fatal")", "bad_request"},
      {R"("device":"mlx5_0")", "bad_request"},
      {R"("event":"qp_fatal","device":"mlx5_0","port":0)", "bad_request"},
      {R"("event":"qp_fatal","device":"mlx5_0","cq":3)", "bad_request"},
      {R"("event":"qp_fatal","device":"mlx5_0","qp_num":-1)", "bad_request"},
      {R"("event":"qp_fatal","device":"mlx5_0","detail":"a\nb")", "bad_request"},
      {R"("event":"qp_fatal","device":"mlx5_0","detail":")" + std::string(257, 'x') + "\"",
       "bad_request"},
      {R"("event":"qp_fatal","device":"mlx5_0","color":"red")", "bad_request"},
  };
  LineClient c(daemon.socket());
  c.require_json(10s);
  int id = 0;
  for (const auto& [body, code] : cases) {
    c.send(R"({"op":"report","id":)" + std::to_string(++id) + "," + body + "}\n");
    const json answer = c.read_until(reply_to(id), 10s).back();
    EXPECT_EQ(answer["type"], "error") << body;
    EXPECT_EQ(answer["error"], code) << body << ": " << answer.dump();
    EXPECT_FALSE(answer["message"].get<std::string>().empty());
  }
  const json counted = status_reports(daemon.socket());
  EXPECT_EQ(counted["invalid"], cases.size());
  EXPECT_EQ(counted["accepted"], 0);
  c.send(R"({"op":"ping","id":"p"})"
         "\n");
  EXPECT_EQ(c.read_until(reply_to("p"), 10s).back()["seq"], 0) << "nothing was published";
}

TEST(Reports, RdmaEventctlReportsForScriptsAndSaysWhyNot) {
  SimFabric sim(topology("two-adapters"));
  DaemonProcess daemon(sim);
  const std::string ctl = rdmatest::bin("rdma-eventctl");
  const auto ok = rdmatest::run_command({ctl, "--socket", daemon.socket(), "report", "mlx5_0/1",
                                         "srq_err", "--object", "5", "--detail", "from a script"});
  EXPECT_EQ(ok.exit_code(), 0) << ok.err;
  EXPECT_EQ(ok.out, "reported: seq 1\n");
  const Record r = daemon.next_record();
  EXPECT_EQ(r.event, EventKind::kAppReport);
  EXPECT_EQ(r.port, 1u);
  EXPECT_EQ(r.object, "srq");
  EXPECT_EQ(r.object_id, 5);
  EXPECT_EQ(r.detail, "from a script");
  EXPECT_EQ(r.reporter.comm, "rdma-eventctl");

  const auto bad =
      rdmatest::run_command({ctl, "--socket", daemon.socket(), "report", "mlx5_7", "qp_fatal"});
  EXPECT_EQ(bad.exit_code(), 76);
  EXPECT_NE(bad.err.find("bad_report: device: 'mlx5_7' is not a device rdma-eventd watches"),
            std::string::npos)
      << bad.err;
  const auto usage = rdmatest::run_command({ctl, "report", "mlx5_0", "port_err"});
  EXPECT_EQ(usage.exit_code(), 64) << usage.err;
  const auto down = rdmatest::run_command(
      {ctl, "--socket", daemon.dir() + "/nothing.sock", "report", "mlx5_0", "qp_fatal"});
  EXPECT_EQ(down.exit_code(), 69) << down.err;
}

// A process name may hold a newline. In the journal's native protocol such a value goes framed
// by its length; journald must store it whole, in RDMA_REPORTER_COMM and in the MESSAGE.
TEST(Reports, AReporterWhoseNameHoldsANewlineIsJournaledWhole) {
  JournalSandbox::instance();
  SimFabric sim(topology("two-adapters"));
  DaemonProcess daemon(sim);
  const std::string odd = daemon.dir() + "/odd\nctl";  // the kernel names a process after it
  ASSERT_EQ(::symlink(rdmatest::bin("rdma-eventctl").c_str(), odd.c_str()), 0);
  const auto ok = rdmatest::run_command(
      {odd, "--socket", daemon.socket(), "report", "mlx5_0/1", "qp_fatal", "--detail", "odd name"});
  ASSERT_EQ(ok.exit_code(), 0) << ok.err;
  const Record r = daemon.next_record();
  ASSERT_EQ(r.reporter.comm, "odd\nctl");

  const auto entries = daemon.journal_entries(1);
  ASSERT_EQ(entries.size(), 1u);
  const json& e = entries[0];
  EXPECT_EQ(e["RDMA_REPORTER_COMM"], "odd\nctl") << e.dump();
  EXPECT_NE(e["MESSAGE"].get<std::string>().find("(pid " + std::to_string(r.reporter.pid) +
                                                 " odd\nctl, uid"),
            std::string::npos)
      << e.dump();
  EXPECT_EQ(e["RDMA_SEQ"], std::to_string(r.seq));
  EXPECT_EQ(json::parse(e["RDMA_RECORD"].get<std::string>())["reporter"]["comm"], "odd\nctl");
}

}  // namespace
}  // namespace rdma_eventd::test
