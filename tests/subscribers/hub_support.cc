#include "hub_support.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

namespace rdma_eventd::subtest {

using rdmatest::HarnessError;

namespace {

// The default log level: the test reads the daemon's log only when it waits for a line, and a
// debug log of a thousand subscribers would fill the pipe and block the daemon.
rdmatest::DaemonOptions hub_options(const HubOptions& o) {
  return {.config_json = "{\"socket\": {" + o.socket + "}}",
          .extra_args = o.extra_args,
          .print_records = o.print_records};
}

}  // namespace

HubDaemon::HubDaemon(const rdmatest::SimFabric& sim, const HubOptions& options)
    : rdmatest::DaemonProcess(sim, hub_options(options)) {}

void open_directory_to_everyone(const HubDaemon& d) {
  if (::chmod(d.dir().c_str(), 0755) != 0) {
    throw HarnessError("chmod " + d.dir() + ": " + std::strerror(errno));
  }
}

void reload(HubDaemon& d, const std::string& socket_members, bool expect_failure) {
  d.write_config("{\"socket\": {" + socket_members + "}}");
  d.reload();
  // Logged before READY=1 was sent: already there.
  d.require_log(expect_failure ? "reload failed" : "configuration reloaded", 0s);
}

void storm(const rdmatest::SimFabric& sim, int count, const std::string& target) {
  inject(sim, {"storm", "--count", std::to_string(count), "--targets", target});
}

void wait_for_seq(const std::string& socket, uint64_t seq, Duration timeout) {
  // A connection that took the records would count them as sent in the status the test reads
  // next: this one takes none, and asks for the seq until it is there.
  LineClient c(socket);
  c.send(R"({"op":"subscribe","events":["unknown"],"devices":["none"]})"
         "\n");
  uint64_t last = 0;
  int id = 0;
  const bool reached = rdmatest::wait_until(
      [&] {
        c.send(json{{"op", "ping"}, {"id", ++id}}.dump() + "\n");
        last = c.read_until(reply_to(id), timeout).back()["seq"].get<uint64_t>();
        return last >= seq;
      },
      timeout);
  if (!reached) {
    throw HarnessError("the daemon published up to seq " + std::to_string(last) + ", not " +
                       std::to_string(seq));
  }
}

std::vector<json> refused_for_user(uid_t uid, int max_subscribers_per_user) {
  return {{{"type", "error"},
           {"error", "too_many_subscribers"},
           {"message", "too many subscribers for uid " + std::to_string(uid) +
                           " (socket.max_subscribers_per_user is " +
                           std::to_string(max_subscribers_per_user) + ")"}}};
}

bool is_record(const json& line) {
  return line.is_object() && !line.contains("type");
}

bool is_snapshot(const json& line) {
  return is_record(line) && line.value("event", "") == "snapshot";
}

std::function<bool(const json&)> record_with_seq(uint64_t seq) {
  return [seq](const json& l) { return is_record(l) && !is_snapshot(l) && l["seq"] == seq; };
}

std::vector<json> live_records(const std::vector<json>& lines) {
  std::vector<json> out;
  for (const auto& l : lines) {
    if (is_record(l) && !is_snapshot(l)) out.push_back(l);
  }
  return out;
}

std::vector<uint64_t> seqs_of(const std::vector<json>& records) {
  std::vector<uint64_t> out;
  for (const auto& r : records)
    out.push_back(r.at("seq").get<uint64_t>());  // at(): a line without one fails the test
  return out;
}

}  // namespace rdma_eventd::subtest
