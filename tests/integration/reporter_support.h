// What the reporter tests share (reporter_test.cc, reporter_socket_test.cc,
// reporter_compat_test.cc): reporters of the client library's C API opened as this process's
// user or as another, their replies awaited on their fd, a daemon stopped for a while, and the
// report every test sends.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "daemon_process.h"
#include "line_client.h"
#include "process.h"
#include "rdma_eventd/client.h"

namespace rdma_eventd::test {

// Below the 200 ms that rdmaev_report_verbs() may wait, and far above what a few system calls
// take, sanitizers and a loaded machine included. A stopped daemon is the proof that nothing
// waits for it; the bound only says that nothing else was waited for either.
inline constexpr auto kAtOnce = std::chrono::milliseconds(150);

// A daemon that does not print its records: the tests read them from the socket, and a
// daemon printing thousands that nobody reads would wait for its standard output.
DaemonOptions quiet_daemon(const std::string& config_json = "{}");

// Stops a process (SIGSTOP) and resumes it however the test ends, so that it can be stopped
// with SIGTERM.
class Stopped {
 public:
  explicit Stopped(rdmatest::Process& p);
  ~Stopped() { resume(); }
  Stopped(const Stopped&) = delete;
  Stopped& operator=(const Stopped&) = delete;
  void resume();

 private:
  rdmatest::Process& p_;
  bool stopped_ = true;
};

struct ReporterCloser {
  void operator()(rdmaev_reporter* r) const { rdmaev_reporter_close(r); }
};
using ReporterPtr = std::unique_ptr<rdmaev_reporter, ReporterCloser>;

// rdmaev_reporter_open(socket), expecting RDMAEV_OK.
ReporterPtr open_reporter(const std::string& socket);
// The same as another user: the connection is made on a thread of its own whose effective uid
// and gid are `uid` (credentials are per thread in Linux; SO_PEERCRED keeps those of connect()).
ReporterPtr open_reporter_as(const std::string& socket, uid_t uid);

struct ReplyResult {
  int status = RDMAEV_E_TIMEOUT;
  uint64_t id = 0;
  uint64_t seq = 0;
};

// Polls the reporter's fd for what it asks for until a reply comes (or `timeout` passes).
ReplyResult poll_reply(rdmaev_reporter* r, std::chrono::milliseconds timeout);

// Sends `report` and waits for its reply, which must answer that report's id; returns the
// reply's status (the send's own status where the send failed) and *seq its record's seq.
int send_for_reply(rdmaev_reporter* r, const rdmaev_event_report& report, uint64_t* seq = nullptr);

// A QP_FATAL of QP 4660 on mlx5_0 port 1, with `detail`.
rdmaev_event_report qp_fatal(const char* detail);

// The record a subscriber reads for qp_fatal(detail) from this process, reported as `uid`,
// without its stamps.
void expect_our_qp_fatal(const nlohmann::json& record, const std::string& detail,
                         uid_t uid = ::getuid());

// Reads the hello and subscribes `c` to app_report records only.
void subscribe_to_app_reports(rdmatest::LineClient& c);

// A connection of its own that asks the daemon for its status, and takes no records: it is one
// subscriber for as long as the test, where each rdma-eventctl would be one more.
class StatusAsker {
 public:
  explicit StatusAsker(const std::string& socket);
  nlohmann::json status();

 private:
  rdmatest::LineClient c_;
  int id_ = 0;
};

// Bytes waiting to be read on a socket (FIONREAD).
size_t unread_bytes(int fd);

}  // namespace rdma_eventd::test
