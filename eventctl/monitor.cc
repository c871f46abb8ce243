// rdma-eventctl monitor: the record stream, for people (one line per record) or for programs
// (--json: the lines exactly as the daemon sends them).
#include <getopt.h>
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

constexpr auto kRequestTimeout = std::chrono::seconds(10);

void add_filter_option(Filter& f, int opt, const std::string& arg) {
  std::string error;
  if (opt == 'e') {
    for (const auto& name : split_commas(arg)) {
      auto kind = event_from_name(name);
      if (!kind) throw UsageError{"unknown event '" + name + "'"};
      f.events.push_back(*kind);
    }
  } else if (opt == 'd') {
    auto p = DevicePattern::parse(arg, &error);
    if (!p) throw UsageError{"--device: " + error};
    f.devices.push_back(std::move(*p));
  } else if (opt == 'p') {
    auto p = PortPattern::parse(arg, &error);
    if (!p) throw UsageError{"--port: " + error};
    f.ports.push_back(std::move(*p));
  } else if (opt == 's') {
    auto s = severity_from_name(arg);
    if (!s) throw UsageError{"unknown severity '" + arg + "'"};
    f.min_severity = *s;
  }
}

}  // namespace

int run_monitor(const Global& g, int argc, char** argv) {
  enum { kJson = 1000, kSnapshot, kSince, kColor, kSocket };
  static const option kLong[] = {
      {"json", no_argument, nullptr, kJson},
      {"event", required_argument, nullptr, 'e'},
      {"device", required_argument, nullptr, 'd'},
      {"port", required_argument, nullptr, 'p'},
      {"min-severity", required_argument, nullptr, 's'},
      {"snapshot", no_argument, nullptr, kSnapshot},
      {"since", required_argument, nullptr, kSince},
      {"count", required_argument, nullptr, 'n'},
      {"color", required_argument, nullptr, kColor},
      {"socket", required_argument, nullptr, kSocket},
      {"help", no_argument, nullptr, 'h'},
      {nullptr, 0, nullptr, 0},
  };
  Global global = g;
  Filter filter;
  bool json = false;
  bool snapshot = false;
  std::optional<uint64_t> since;
  uint64_t count = 0;
  ColorWhen color_when = ColorWhen::kAuto;
  optind = 0;
  opterr = 0;
  for (;;) {
    const int c = getopt_long(argc, argv, ":e:d:p:s:n:h", kLong, nullptr);
    if (c == -1) break;
    switch (c) {
      case 'e':
      case 'd':
      case 'p':
      case 's':
        add_filter_option(filter, c, optarg);
        break;
      case kJson:
        json = true;
        break;
      case kSnapshot:
        snapshot = true;
        break;
      case kSince: {
        char* end = nullptr;
        since = std::strtoull(optarg, &end, 10);
        if (!*optarg || *end) throw UsageError{"--since: not a seq: '" + std::string(optarg) + "'"};
        break;
      }
      case 'n': {
        char* end = nullptr;
        count = std::strtoull(optarg, &end, 10);
        if (!*optarg || *end || count == 0) {
          throw UsageError{"--count: not a positive number: '" + std::string(optarg) + "'"};
        }
        break;
      }
      case kColor: {
        auto w = parse_color_when(optarg);
        if (!w)
          throw UsageError{"--color: auto, always or never, not '" + std::string(optarg) + "'"};
        color_when = *w;
        break;
      }
      case kSocket:
        global.socket = optarg;
        break;
      case 'h':
        std::fputs(kMonitorHelp, stdout);
        return kExitOk;
      case ':':
        throw UsageError{std::string("option '") + argv[optind - 1] + "' needs a value"};
      default:
        throw UsageError{std::string("unknown option '") + argv[optind - 1] + "'"};
    }
  }
  if (optind < argc) throw UsageError{std::string("unexpected argument '") + argv[optind] + "'"};
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
