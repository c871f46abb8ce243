#include "reporter_support.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "harness.h"

namespace rdma_eventd::test {

using nlohmann::json;
using rdmatest::HarnessError;
using Steady = std::chrono::steady_clock;

DaemonOptions quiet_daemon(const std::string& config_json) {
  return DaemonOptions{.config_json = config_json, .print_records = false};
}

Stopped::Stopped(rdmatest::Process& p) : p_(p) {
  p_.signal(SIGSTOP);
}

void Stopped::resume() {
  if (std::exchange(stopped_, false)) p_.signal(SIGCONT);
}

ReporterPtr open_reporter(const std::string& socket) {
  rdmaev_reporter* r = nullptr;
  const int rc = rdmaev_reporter_open(socket.c_str(), &r);
  EXPECT_EQ(rc, RDMAEV_OK) << rdmaev_strerror(rc) << ": " << rdmaev_last_error(nullptr);
  return ReporterPtr(r);
}

ReporterPtr open_reporter_as(const std::string& socket, uid_t uid) {
  ReporterPtr out;
  std::string failed;
  // The raw system calls change this thread's credentials alone (glibc's wrappers would change
  // every thread's); the real and saved ids stay root's, so the thread can take root back.
  std::thread([&] {
    if (::syscall(SYS_setresgid, -1, uid, -1) != 0 || ::syscall(SYS_setresuid, -1, uid, -1) != 0) {
      failed = std::string("setresuid: ") + std::strerror(errno);
      return;
    }
    out = open_reporter(socket);
    if (::syscall(SYS_setresuid, -1, 0, -1) != 0 || ::syscall(SYS_setresgid, -1, 0, -1) != 0) {
      failed = std::string("taking root back: ") + std::strerror(errno);
    }
  }).join();
  if (!failed.empty()) throw HarnessError(failed);
  return out;
}

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

int send_for_reply(rdmaev_reporter* r, const rdmaev_event_report& report, uint64_t* seq) {
  uint64_t id = 0;
  const int sent = rdmaev_reporter_send(r, &report, &id);
  EXPECT_EQ(sent, RDMAEV_OK) << rdmaev_reporter_last_error(r);
  if (sent != RDMAEV_OK) return sent;
  const ReplyResult reply = poll_reply(r, std::chrono::seconds(10));
  EXPECT_EQ(reply.id, id);
  if (seq) *seq = reply.seq;
  return reply.status;
}

rdmaev_event_report qp_fatal(const char* detail) {
  rdmaev_event_report r = RDMAEV_EVENT_REPORT_INIT;
  r.event_type = 1;  // IBV_EVENT_QP_FATAL
  r.device = "mlx5_0";
  r.port = 1;
  r.object_id = 4660;
  r.detail = detail;
  return r;
}

void expect_our_qp_fatal(const json& record, const std::string& detail, uid_t uid) {
  EXPECT_EQ(record["event"], "app_report");
  EXPECT_EQ(record["reported_event"], "qp_fatal");
  EXPECT_EQ(record["device"], "mlx5_0");
  EXPECT_EQ(record["port"], 1);
  EXPECT_EQ(record["object"], "qp");
  EXPECT_EQ(record["object_id"], 4660);
  EXPECT_EQ(record["detail"], detail);
  EXPECT_EQ(record["reporter"]["pid"], getpid());
  EXPECT_EQ(record["reporter"]["uid"], uid);
}

void subscribe_to_app_reports(rdmatest::LineClient& c) {
  using namespace std::chrono_literals;
  c.require_json(10s);  // hello
  c.send(R"({"op":"subscribe","id":1,"events":["app_report"]})"
         "\n");
  c.read_until(rdmatest::reply_to(1), 10s);
}

StatusAsker::StatusAsker(const std::string& socket) : c_(socket) {
  using namespace std::chrono_literals;
  c_.require_json(10s);  // hello
  c_.send(R"({"op":"subscribe","id":0,"events":["unknown"],"devices":["none"]})"
          "\n");
  c_.read_until(rdmatest::reply_to(0), 10s);
}

json StatusAsker::status() {
  using namespace std::chrono_literals;
  c_.send(json{{"op", "status"}, {"id", ++id_}}.dump() + "\n");
  return c_.read_until(rdmatest::reply_to(id_), 10s).back();
}

size_t unread_bytes(int fd) {
  int n = 0;
  if (::ioctl(fd, FIONREAD, &n) != 0) {
    throw HarnessError(std::string("FIONREAD: ") + std::strerror(errno));
  }
  return static_cast<size_t>(n);
}

}  // namespace rdma_eventd::test
