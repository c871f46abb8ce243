// Helpers for the subscriber tests: the real daemon on the simulator with its socket in a
// private directory (the harness's DaemonProcess, without the journal), a raw protocol client
// (the harness's LineClient), and predicates over the lines it reads.
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
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "eventd_process.h"
#include "line_client.h"
#include "paths.h"
#include "sim_fabric.h"

namespace rdma_eventd::subtest {

using namespace std::chrono_literals;
using nlohmann::json;
using rdmatest::CommandResult;
using rdmatest::Credentials;
using rdmatest::Duration;
using rdmatest::inject;
using rdmatest::LineClient;
using rdmatest::Process;
using rdmatest::reply_to;
using rdmatest::run_command;
using rdmatest::SimFabric;
using rdmatest::topology;

struct HubOptions {
  std::string
      socket;  // more members of the configuration's "socket" object, e.g. "\"mode\": \"0600\""
  std::vector<std::string> extra_args;
  bool print_records = false;  // --print-records: the records on the daemon's stdout
};

// rdma-eventd -f --no-journal -c DIR/rdma-eventd.json --socket DIR/events.sock, on the
// simulated fabric, ready once it says READY=1.
class HubDaemon : public rdmatest::DaemonProcess {
 public:
  explicit HubDaemon(const rdmatest::SimFabric& sim, const HubOptions& options = {});
};

// A client of the daemon's socket whose hello has been read, for the tests that do not look at
// it.
class GreetedClient : public LineClient {
 public:
  explicit GreetedClient(const HubDaemon& d) : LineClient(d.socket()) {
    require_json(10s, "the hello");
  }
};

// Lets other users reach the daemon's socket: its directory 0755 (the socket's own mode is the
// configuration's, e.g. "mode": "0666").
void open_directory_to_everyone(const HubDaemon& d);

// Rewrites the daemon's configuration ({"socket": {...}}), reloads it (SIGHUP, until READY=1)
// and checks the outcome in its log: "configuration reloaded", or, when `expect_failure`,
// "reload failed".
void reload(HubDaemon& d, const std::string& socket_members, bool expect_failure = false);

// All a connection refused for its user's cap gets: one error line, then the end.
std::vector<json> refused_for_user(uid_t uid, int max_subscribers_per_user);

// Line predicates.
bool is_record(const json& line);    // a record or a snapshot record: no "type"
bool is_snapshot(const json& line);  // "event": "snapshot"
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
