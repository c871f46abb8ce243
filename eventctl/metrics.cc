// rdma-eventctl metrics: the daemon's state as Prometheus exposition text, printed once, or kept
// in node_exporter's textfile directory (--textfile) and rewritten whenever a record arrives.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>

#include "client/follower.h"
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
textfile collector, and writes it again (to a new DIR/.rdma_eventd.prom.XXXXXX, renamed over it)
whenever the daemon publishes a record; records that arrive while it is reading the daemon's
state lead to one more rewrite, not one each, and rewrites are at least 0.1 s apart. While the
daemon cannot be reached the file holds rdma_eventd_up 0, and it connects again (after 0.2 s,
doubling to 10 s, the backoff of every retry; each wait lengthened by up to half at random).
It also rewrites the file every 60 to 90 s when nothing happened, so that the file's age
(node_textfile_mtime_seconds) says the follower is alive. A rewrite that fails (a full file
system, a directory gone) removes the file, so that nothing stale is read as current, and is
tried again with the same backoff until it succeeds; each different failure is logged once.
On SIGTERM or SIGINT it removes the file and exits.

Options:
      --textfile DIR   keep DIR/rdma_eventd.prom up to date
      --socket PATH    the daemon's socket
  -h, --help           this text

Exit status: 0 printed (or stopped by a signal), 2 the daemon cannot be reached or did not
answer (rdma_eventd_up 0 is printed), 64 bad command line, 71 the loop failed, 73 DIR is not
a directory at the start.
)";

namespace {

constexpr int kExitDaemonDown = 2;
constexpr const char* kFileName = "rdma_eventd.prom";
constexpr auto kMinRewriteInterval = std::chrono::milliseconds(100);
// The file's age is how a reader tells a live follower from a dead one (the shipped rule
// RDMAEventdMetricsStale): an idle daemon publishes nothing for days, so the follower rewrites
// the file this often anyway, at the cost of two requests.
constexpr auto kRefreshInterval = std::chrono::seconds(60);

// The daemon's status and health, rendered. nullopt (and *why) when a request failed.
std::optional<std::string> read_metrics(Client& client, std::string* why) {
  Message status_reply;
  Message health_reply;
  ClientStatus s = client.call(Request{Op::kStatus}, kRequestTimeout, status_reply);
  if (s == ClientStatus::kOk) s = client.call(Request{Op::kHealth}, kRequestTimeout, health_reply);
  if (s != ClientStatus::kOk) {
    *why = std::string(client_status_name(s)) + ": " + client.last_error();
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
  if (Client::connect(global.socket, kRequestTimeout, client, &error) == ClientStatus::kOk)
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

// Keeps the textfile in line with the daemon, as a policy over the one daemon follower
// (client/follower.h): every record or lost line leads to one rewrite, at least
// kMinRewriteInterval after the last one, so that a storm of records costs one rewrite per
// round trip and a steady trickle keeps the two requests per rewrite within the daemon's request
// rate; refused over it anyway, the follower retries with its backoff. While the daemon cannot be
// reached the file says rdma_eventd_up 0 (written once an outage). An idle daemon leaves it
// blocked on the socket but for the refresh.
class TextfilePolicy final : public FollowerPolicy {
 public:
  TextfilePolicy(const Global& global, std::string file)
      : global_(global), file_(std::move(file)) {}

  Outcome act(const std::vector<Message>* replies, std::string* failure) override {
    std::string text;
    if (!replies) {
      text = metrics_text_daemon_down();
    } else {
      const auto status = status_from_json(replies->at(0).text(), failure);
      if (!status) return Outcome::kRetry;
      const auto health = health_from_json(replies->at(1).text(), failure);
      if (!health) return Outcome::kRetry;
      text = metrics_text(*status, *health);
    }
    const int error = internal::write_file_atomically(file_, text, {.mode = 0644, .sync = false});
    if (error == 0) return Outcome::kDone;
    // The file as it was would be read as current for as long as the failure lasts (a full
    // file system can last days): it goes, which needs no space, and the rewrite is retried.
    *failure = file_ + ": " + std::strerror(error);
    if (::unlink(file_.c_str()) == 0 || errno == ENOENT)
      *failure += "; the file is removed until it can be written";
    else
      *failure += std::string("; cannot remove it either: ") + std::strerror(errno);
    return Outcome::kRetry;
  }

  void on_event(const FollowerEvent& e) override {
    switch (e.kind) {
      case FollowerEvent::kConnected:
        say("following " + global_.socket + ", writing " + file_);
        break;
      case FollowerEvent::kConnectionLost:
        say("lost rdma-eventd's connection (" + e.text + ")");
        break;
      case FollowerEvent::kDaemonAway:
        say("rdma-eventd cannot be reached (" + e.text + "); rdma_eventd_up is 0");
        break;
      case FollowerEvent::kActFailing:
        say(e.text + "; retrying");
        break;
      case FollowerEvent::kActRecovered:
        say(file_ + " is up to date again");
        break;
    }
  }

  void say(const std::string& line) const {
    std::fprintf(stderr, "%s: %s\n", global_.program.c_str(), line.c_str());
  }

 private:
  const Global& global_;
  std::string file_;
};

int run_textfile(const Global& global, const std::string& dir) {
  const std::string file = dir + "/" + kFileName;
  std::setvbuf(stderr, nullptr, _IOLBF, 0);
  const int signal_fd = stop_signal_fd();
  if (signal_fd < 0) {
    std::fprintf(stderr, "%s: signalfd: %s\n", global.program.c_str(), std::strerror(errno));
    return kExitOsErr;
  }
  TextfilePolicy policy(global, file);
  FollowerOptions options;
  options.queries = {Op::kStatus, Op::kHealth};
  options.query_timeout = kRequestTimeout;
  options.initial_backoff = std::chrono::milliseconds(200);
  options.max_backoff = std::chrono::seconds(10);
  options.min_act_interval = kMinRewriteInterval;
  options.refresh_interval = kRefreshInterval;
  options.jitter = 0.5;  // a fleet's followers restarted together do not rewrite in step
  const auto connector = socket_connector(global.socket, kRequestTimeout);
  DaemonFollower follower(steady_time(), *connector, policy, options);
  const int error = run_follower(follower, steady_time(), signal_fd);
  ::close(signal_fd);
  ::unlink(file.c_str());
  if (error != 0) {
    std::fprintf(stderr, "%s: poll: %s\n", global.program.c_str(), std::strerror(error));
    return kExitOsErr;
  }
  return kExitOk;
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
