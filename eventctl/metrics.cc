// rdma-eventctl metrics: the daemon's state as Prometheus exposition text, printed once, or kept
// in node_exporter's textfile directory (--textfile) and rewritten whenever a record arrives.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "commands.h"
#include "metrics_text.h"
#include "rdma_eventd/internal/atomic_file.h"
#include "schema/health_reply.h"
#include "schema/status_reply.h"

namespace rdma_eventctl {

using namespace rdma_eventd;

const char* const kMetricsHelp = R"(Usage: rdma-eventctl metrics [OPTIONS]

Prints rdma-eventd's metrics in Prometheus' text format: the state, health verdict, rate and
LID of every port, the daemon's counts of events by port and event, and its own counters
(docs/metrics.md).

With --textfile DIR it keeps running: it writes DIR/rdma_eventd.prom for node_exporter's
textfile collector, and writes it again (to DIR/.rdma_eventd.prom.tmp, then renamed over it)
whenever the daemon publishes a record; records that arrive while it is reading the daemon's
state lead to one more rewrite, not one each, and rewrites are at least 0.1 s apart. While the
daemon cannot be reached the file holds rdma_eventd_up 0, and it connects again (after 0.2 s,
doubling to 10 s). On SIGTERM or SIGINT it removes the file and exits.

Options:
      --textfile DIR   keep DIR/rdma_eventd.prom up to date
      --socket PATH    the daemon's socket
  -h, --help           this text

Exit status: 0 printed (or stopped by a signal), 2 the daemon cannot be reached or did not
answer (rdma_eventd_up 0 is printed), 64 bad command line, 73 DIR cannot be written.
)";

namespace {

constexpr int kExitDaemonDown = 2;
constexpr int kExitCantCreate = 73;  // EX_CANTCREAT
constexpr auto kTimeout = std::chrono::seconds(10);
constexpr const char* kFileName = "rdma_eventd.prom";
constexpr const char* kTempName = ".rdma_eventd.prom.tmp";
constexpr auto kMinRewriteInterval = std::chrono::milliseconds(100);
constexpr auto kRateLimitedPause = std::chrono::seconds(1);

bool is_rate_limited(const Message& reply) {
  const RequestError* e = reply.error();
  return e && e->code == ErrorCode::kRateLimited;
}

// The daemon's status and health, rendered. nullopt (and *why) when a request failed;
// *rate_limited when the daemon refused one over socket.max_requests_per_second.
std::optional<std::string> read_metrics(Client& client, std::string* why,
                                        bool* rate_limited = nullptr) {
  Message status_reply;
  Message health_reply;
  ClientStatus s = client.call(Request{Op::kStatus}, kTimeout, status_reply);
  if (s == ClientStatus::kOk) s = client.call(Request{Op::kHealth}, kTimeout, health_reply);
  if (s != ClientStatus::kOk) {
    *why = std::string(client_status_name(s)) + ": " + client.last_error();
    if (rate_limited)
      *rate_limited = is_rate_limited(status_reply) || is_rate_limited(health_reply);
    return std::nullopt;
  }
  const auto status = status_from_json(status_reply.text(), why);
  if (!status) return std::nullopt;
  const auto health = health_from_json(health_reply.text(), why);
  if (!health) return std::nullopt;
  return metrics_text(*status, *health);
}

int print_once(const Global& global) {
  std::string error;
  std::unique_ptr<Client> client;
  std::optional<std::string> text;
  if (Client::connect(global.socket, kTimeout, client, &error) == ClientStatus::kOk)
    text = read_metrics(*client, &error);
  if (!text) {
    std::fprintf(stderr, "%s: %s\n", global.program.c_str(), error.c_str());
    std::fputs(metrics_text_daemon_down().c_str(), stdout);
    return kExitDaemonDown;
  }
  std::fputs(text->c_str(), stdout);
  return kExitOk;
}

// --- the textfile follower ---------------------------------------------------------------------

// The files the signal handler removes: set once, before the handler is installed.
std::string g_file;
std::string g_temp;

extern "C" void remove_and_exit(int) {
  ::unlink(g_temp.c_str());
  ::unlink(g_file.c_str());
  ::_exit(kExitOk);
}

// Writes the temporary file, then renames it over the textfile: node_exporter reads either the
// old file or the new one, never half of one. Readable by node_exporter's user whatever the
// umask; not synced (it is rewritten from the daemon's state, and removed at exit). false (and
// *why) when it could not.
bool write_textfile(const std::string& text, std::string* why) {
  const int error = internal::write_file_atomically(
      g_file, text, {.temp_path = g_temp, .mode = 0644, .sync = false});
  if (error == 0) return true;
  *why = g_temp + ": " + std::strerror(error);
  return false;
}

// Follows one connection: a rewrite, then one more after every read that brought records. The
// records that arrive while a rewrite's requests are answered are kept by the client and read
// together afterwards, so a storm leads to one rewrite per round trip, not one per record.
// Rewrites are at least kMinRewriteInterval apart, so that a steady trickle of records keeps
// the follower's two requests per rewrite within the daemon's request rate (100 per second by
// default); refused over it anyway, it tries again after kRateLimitedPause. Only while a
// rewrite is due does it wait with a deadline: an idle daemon leaves it blocked on the socket.
// Returns why the connection ended, or the textfile error (*file_error set).
std::string follow(Client& client, bool* file_error) {
  using SteadyClock = std::chrono::steady_clock;
  bool dirty = true;
  SteadyClock::time_point not_before = SteadyClock::now();
  for (;;) {
    if (dirty && SteadyClock::now() >= not_before) {
      std::string why;
      bool rate_limited = false;
      const auto text = read_metrics(client, &why, &rate_limited);
      if (!text && !rate_limited) return why;
      if (text && !write_textfile(*text, &why)) {
        *file_error = true;
        return why;
      }
      dirty = !text;
      not_before = SteadyClock::now() + (text ? kMinRewriteInterval : kRateLimitedPause);
    }
    Message m;
    ClientStatus s = ClientStatus::kOk;
    if (dirty) {
      const auto left =
          std::chrono::ceil<std::chrono::milliseconds>(not_before - SteadyClock::now());
      s = client.next(m, std::max(left, std::chrono::milliseconds(1)));
      if (s == ClientStatus::kTimeout) continue;  // the rewrite is due
    } else {
      s = client.next(m, Client::kForever);
    }
    while (s == ClientStatus::kOk) {
      dirty = dirty || m.record() || m.lost();
      s = client.next(m);  // what has arrived already, without waiting
    }
    if (s != ClientStatus::kNoMessage)
      return std::string(client_status_name(s)) + ": " + client.last_error();
  }
}

int run_textfile(const Global& global, const std::string& dir) {
  g_file = dir + "/" + kFileName;
  g_temp = dir + "/" + kTempName;
  struct sigaction sa {};
  sa.sa_handler = remove_and_exit;
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGINT, &sa, nullptr);
  std::setvbuf(stderr, nullptr, _IOLBF, 0);

  auto backoff = std::chrono::milliseconds(200);
  bool down_written = false;
  for (;;) {
    std::string why;
    std::unique_ptr<Client> client;
    if (Client::connect(global.socket, kTimeout, client, &why) == ClientStatus::kOk) {
      std::fprintf(stderr, "%s: following %s, writing %s\n", global.program.c_str(),
                   global.socket.c_str(), g_file.c_str());
      bool file_error = false;
      why = follow(*client, &file_error);
      if (file_error) {
        std::fprintf(stderr, "%s: %s\n", global.program.c_str(), why.c_str());
        return kExitCantCreate;
      }
      backoff = std::chrono::milliseconds(200);
      down_written = false;
    }
    if (!down_written) {  // once an outage: the reason, and the file saying the daemon is down
      std::fprintf(stderr, "%s: rdma-eventd cannot be reached (%s); rdma_eventd_up is 0\n",
                   global.program.c_str(), why.c_str());
      std::string file_why;
      if (!write_textfile(metrics_text_daemon_down(), &file_why)) {
        std::fprintf(stderr, "%s: %s\n", global.program.c_str(), file_why.c_str());
        return kExitCantCreate;
      }
      down_written = true;
    }
    std::this_thread::sleep_for(backoff);
    backoff = std::min(backoff * 2, std::chrono::milliseconds(10000));
  }
}

}  // namespace

int run_metrics(const Global& g, int argc, char** argv) {
  Global global = g;
  std::string textfile_dir;
  const auto args =
      parse_command_line(argc, argv, kMetricsHelp, global,
                         {{"textfile", 0, true, [&textfile_dir](const char* v) {
                             textfile_dir = v;
                             if (textfile_dir.empty())
                               throw UsageError{"--textfile: an empty directory name"};
                           }}});
  if (!args) return kExitOk;
  expect_no_arguments(*args);
  if (textfile_dir.empty()) return print_once(global);
  struct stat st {};
  if (::stat(textfile_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    std::fprintf(stderr, "%s: --textfile %s: not a directory\n", global.program.c_str(),
                 textfile_dir.c_str());
    return kExitCantCreate;
  }
  return run_textfile(global, textfile_dir);
}

}  // namespace rdma_eventctl
