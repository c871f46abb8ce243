// Helpers for the subscriber tests: the real daemon on the simulator with its socket in a
// private directory, and a raw protocol client that reads lines with deadlines.
//
//   rdmatest::SimFabric sim(rdmatest::topology("two-adapters"));
//   HubDaemon d(sim, {.socket = R"("ring_records": 16)"});
//   LineClient c(d.socket());
//   json hello = c.require_json(10s);
//   c.send(R"({"op":"ping","id":1})" "\n");
//   std::vector<json> lines = c.read_until(reply_to(1), 10s);
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "process.h"
#include "sim_fabric.h"
#include "temp_dir.h"

namespace rdma_eventd::subtest {

using namespace std::chrono_literals;
using nlohmann::json;
using rdmatest::Duration;

struct HubOptions {
  std::string
      socket;  // more members of the configuration's "socket" object, e.g. "\"mode\": \"0600\""
  std::vector<std::string> extra_args;
  bool print_records = false;  // --print-records: the records on the daemon's stdout
};

// rdma-eventd -f --no-journal --socket DIR/events.sock, on the simulated fabric.
class HubDaemon {
 public:
  explicit HubDaemon(const rdmatest::SimFabric& sim, const HubOptions& options = {});
  ~HubDaemon();
  HubDaemon(const HubDaemon&) = delete;
  HubDaemon& operator=(const HubDaemon&) = delete;

  const std::string& socket() const { return socket_; }
  const std::string& stream() const { return stream_; }
  const std::string& dir() const { return dir_.path(); }
  rdmatest::Process& process() { return *proc_; }
  rdmatest::ExitStatus stop() { return proc_->stop(); }
  // The daemon's last log lines, for failure messages.
  std::string log_tail(size_t lines = 20);

 private:
  rdmatest::TempDir dir_{"rdma-hub"};
  std::string socket_;
  std::string stream_;
  std::unique_ptr<rdmatest::Process> proc_;
};

// Lets other users reach the daemon's socket: its directory 0755 (the socket's own mode is the
// configuration's, e.g. "mode": "0666").
void open_directory_to_everyone(const HubDaemon& d);

// Rewrites the daemon's configuration ({"socket": {...}}), sends SIGHUP and waits for the
// outcome in its log: "configuration reloaded", or, when `expect_failure`, "reload failed".
void reload(HubDaemon& d, const std::string& socket_members, bool expect_failure = false);

// Runs a control command of the simulator and fails loudly if it is refused.
void inject(const rdmatest::SimFabric& sim, const std::vector<std::string>& args);

// Another user, for a connection made by a short-lived child of the test that takes these ids
// (no passwd entry needed) before it connects and hands the connection back.
struct Credentials {
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // supplementary
};

// A connection to the socket that speaks the protocol by hand.
class LineClient {
 public:
  explicit LineClient(const std::string& path);  // HarnessError when it cannot connect
  LineClient(const std::string& path, const Credentials& as);
  ~LineClient();
  LineClient(const LineClient&) = delete;
  LineClient& operator=(const LineClient&) = delete;

  int fd() const { return fd_; }
  // Writes all of `text`, waiting for room up to 10 s.
  void send(std::string_view text);
  void shutdown_write();

  // The next line; nullopt on timeout or at end of file (then eof() is true).
  std::optional<std::string> next_line(Duration timeout);
  std::string require_line(Duration timeout, const std::string& what = "a line");
  json require_json(Duration timeout, const std::string& what = "a line");
  // Lines up to and including the first for which `done` holds (HarnessError on timeout,
  // showing what was read).
  std::vector<json> read_until(const std::function<bool(const json&)>& done, Duration timeout);
  // Reads until the daemon closes the connection; returns the lines read on the way.
  std::vector<json> read_to_eof(Duration timeout);
  bool eof() const { return eof_; }

 private:
  bool fill(Duration timeout);  // reads more; false on timeout or end of file

  int fd_ = -1;
  std::string buf_;  // received; lines before pos_ have been returned
  size_t pos_ = 0;
  bool eof_ = false;
};

// Line predicates.
bool is_record(const json& line);    // a record or a snapshot record: no "type"
bool is_snapshot(const json& line);  // "event": "snapshot"
std::function<bool(const json&)> reply_to(const json& id);  // a reply or an error with this id
std::function<bool(const json&)> record_with_seq(uint64_t seq);

// The records among `lines` (snapshot records excluded).
std::vector<json> live_records(const std::vector<json>& lines);
// Their seqs.
std::vector<uint64_t> seqs_of(const std::vector<json>& records);

// Waits until the daemon has published record `seq` (pings it until the reply says so).
void wait_for_seq(const std::string& socket, uint64_t seq, Duration timeout = 30s);

// A storm: `count` events on `target` (port_err and port_active in turn, no state change).
void storm(const rdmatest::SimFabric& sim, int count, const std::string& target);

}  // namespace rdma_eventd::subtest
