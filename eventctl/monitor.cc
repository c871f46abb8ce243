// rdma-eventctl monitor: the record stream, for people (one line per record) or for programs
// (--json: the lines exactly as the daemon sends them).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "commands.h"
#include "format.h"

namespace rdma_eventctl {

using namespace rdma_eventd;

const char* const kMonitorHelp = R"(Usage: rdma-eventctl monitor [OPTIONS]

Prints every record rdma-eventd publishes, as it happens, one line each.

Options:
      --json               print the records exactly as the daemon sends them (NDJSON)
  -e, --event NAME[,NAME]  only these events (port_active, port_err, lid_change,
                           pkey_change, sm_change, client_reregister, gid_change,
                           device_fatal, unknown); repeatable
  -d, --device PATTERN     only these devices: a name, a glob (mlx5_*) or a node GUID;
                           repeatable
  -p, --port DEV/PORT      only these ports (and their devices' device-wide records);
                           repeatable
  -s, --min-severity LEVEL only records at least this severe (debug, info, notice,
                           warning, error, critical)
      --snapshot           first print the current state of every (selected) port
      --since SEQ          first replay the records after SEQ that the daemon still holds;
                           when it no longer holds them all, a snapshot comes instead
  -n, --count N            exit after N records (snapshot records count)
      --color WHEN         auto (default: on a terminal, unless NO_COLOR is set),
                           always or never
      --socket PATH        the daemon's socket
  -h, --help               this text

The lists combine: a record must match every option given.

Exit status: 0 after --count records, 64 bad command line, 69 the daemon cannot be
reached or closed the connection, 76 the daemon refused a request.
)";

namespace {

// A positive (or, for --since, any) decimal number, or a usage error saying what it is not.
uint64_t parse_number(const char* option, const char* text, bool positive) {
  char* end = nullptr;
  const uint64_t n = std::strtoull(text, &end, 10);
  if (!*text || *end || (positive && n == 0)) {
    throw UsageError{std::string(option) +
                     (positive ? ": not a positive number: '" : ": not a seq: '") + text + "'"};
  }
  return n;
}

// --device, --port: a pattern the filter takes, parsed by Pattern::parse.
template <typename Pattern>
OptionSpec pattern_option(const char* name, char letter, std::vector<Pattern>& into) {
  return {name, letter, true, [name, &into](const char* arg) {
            std::string error;
            auto p = Pattern::parse(arg, &error);
            if (!p) throw UsageError{std::string("--") + name + ": " + error};
            into.push_back(std::move(*p));
          }};
}

}  // namespace

// -e, -d, -p, -s: each adds to the filter.
std::vector<OptionSpec> filter_options(Filter& f) {
  return {
      {"event", 'e', true,
       [&f](const char* arg) {
         for (const auto& name : split_commas(arg)) {
           auto kind = event_from_name(name);
           if (!kind) throw UsageError{"unknown event '" + name + "'"};
           f.events.push_back(*kind);
         }
       }},
      pattern_option("device", 'd', f.devices),
      pattern_option("port", 'p', f.ports),
      {"min-severity", 's', true,
       [&f](const char* arg) {
         auto s = severity_from_name(arg);
         if (!s) throw UsageError{"unknown severity '" + std::string(arg) + "'"};
         f.min_severity = *s;
       }},
  };
}

int run_monitor(const Global& g, int argc, char** argv) {
  Global global = g;
  Filter filter;
  bool json = false;
  bool snapshot = false;
  std::optional<uint64_t> since;
  uint64_t count = 0;
  ColorWhen color_when = ColorWhen::kAuto;
  std::vector<OptionSpec> options = filter_options(filter);
  options.push_back(flag_option("json", json));
  options.push_back(flag_option("snapshot", snapshot));
  options.push_back(
      {"since", 0, true, [&since](const char* v) { since = parse_number("--since", v, false); }});
  options.push_back(
      {"count", 'n', true, [&count](const char* v) { count = parse_number("--count", v, true); }});
  options.push_back(color_option(color_when));
  const auto args = parse_command_line(argc, argv, kMonitorHelp, global, std::move(options));
  if (!args) return kExitOk;
  expect_no_arguments(*args);
  if (snapshot && since) throw UsageError{"--snapshot and --since exclude each other"};

  const bool color = !json && use_color(color_when, STDOUT_FILENO);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // one line at a time, even into a pipe
  auto client = connect_or_report(global, kRequestTimeout);
  if (!client) return kExitUnavailable;
  Message m;
  ClientStatus s = ClientStatus::kOk;
  if (!filter.matches_everything()) {
    Request r;
    r.op = Op::kSubscribe;
    r.filter = filter;
    s = client->call(r, kRequestTimeout, m);
  }
  if (s == ClientStatus::kOk && since) {
    Request r;
    r.op = Op::kSince;
    r.seq = *since;
    s = client->call(r, kRequestTimeout, m);
    if (s == ClientStatus::kOk && m.reply()->covered == false) {
      std::fprintf(stderr,
                   "%s: the daemon no longer holds every record after seq %llu; starting from a "
                   "snapshot of the current state\n",
                   global.program.c_str(), static_cast<unsigned long long>(*since));
    }
  } else if (s == ClientStatus::kOk && snapshot) {
    s = client->call(Request{Op::kSnapshot}, kRequestTimeout, m);
  }
  if (s != ClientStatus::kOk) return report_failure(global, s, *client);

  uint64_t printed = 0;
  for (;;) {
    s = client->next(m, Client::kForever);
    if (s != ClientStatus::kOk) break;
    if (const Record* r = m.record()) {
      std::puts(json ? m.text().c_str() : format_record(*r, color).c_str());
      ++printed;
    } else if (const PortSnapshot* snap = m.snapshot()) {
      std::puts(json ? m.text().c_str() : format_snapshot(*snap, color).c_str());
      ++printed;
    } else if (const Lost* lost = m.lost()) {
      std::puts(json ? m.text().c_str() : format_lost(*lost, color).c_str());
    }
    if (count && printed >= count) return kExitOk;
  }
  return report_failure(global, s, *client);
}

}  // namespace rdma_eventctl
