// rdma-eventctl history: the daemon's records read back from a journal (this host's, or a
// directory such as a central systemd-journal-remote receiver's), with the monitor's filters
// and formats, or as a summary per host and port.
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "commands.h"
#include "format.h"
#include "history_incidents.h"
#include "history_repeats.h"
#include "history_time.h"
#include "journal_reader.h"

namespace rdma_eventctl {

using namespace rdma_eventd;

const char* const kHistoryHelp = R"(Usage: rdma-eventctl history [OPTIONS]

Prints the records rdma-eventd wrote to the journal, oldest first, one line each: the host,
then the record as monitor prints it.

Options:
  -D, --directory DIR      read the journal files in DIR (e.g. a systemd-journal-remote
                           receiver's /var/log/journal/remote) instead of the local journal
  -S, --since TIME         only records at or after TIME
  -U, --until TIME         only records at or before TIME
      --host NAME[,NAME]   only records of these hosts (_HOSTNAME); repeatable
  -e, --event NAME[,NAME]  only these events; repeatable
  -d, --device PATTERN     only these devices: a name, a glob (mlx5_*) or a node GUID;
                           repeatable
  -p, --port DEV/PORT      only these ports (and their devices' device-wide records);
                           repeatable
  -s, --min-severity LEVEL only records at least this severe
      --json               the records exactly as the daemon wrote them (NDJSON)
      --summary            per host and port: the count of each event and the last health
                           verdict in the window (with --json: one JSON object per line)
      --incidents          fault records of every host grouped into incidents by time, each
                           with its class (fabric, host, port, application) and the evidence,
                           newest first (with --json: one JSON object per line, oldest
                           first, each as soon as it is closed)
      --incident-gap DUR   an incident ends when no fault came for DUR (default 5s; 1ms to 1h)
      --fabric-hosts N     hosts losing links or seeing SM/LID changes in one incident that make
                           it a fabric incident (default 3; 2 to 100000)
      --html FILE          write a page with the timeline of hosts and incidents to FILE
      --identifier NAME    the daemon's SYSLOG_IDENTIFIER (default: rdma-eventd)
      --color WHEN         auto (default), always or never
  -h, --help               this text

TIME, as journalctl takes it (local time): "2026-11-24", "2026-11-24 18:30[:15]", "today",
"yesterday", "now", "@SECONDS", or relative: "-1h", "-30min", "-1h30min", "2d ago".

--incidents and --html take --directory, --since, --until and --host, not the record filters.

Exit status: 0 done (also when nothing matched), 64 bad command line, 66 no journal files
there, 73 the --html file cannot be written, 77 this user may not read the journal (root and
the groups systemd-journal and adm may).
)";

namespace {

struct HistoryOptions {
  JournalQuery query{.identifier = "rdma-eventd"};
  Filter filter;
  bool json = false;
  bool summary = false;
  ColorWhen color_when = ColorWhen::kAuto;
  IncidentsRequest incidents;
};

int64_t now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

OptionSpec time_option(const char* name, char letter, std::optional<int64_t>& into) {
  return {name, letter, true, [name, &into](const char* arg) {
            into = parse_journal_time(arg, now_us());
            if (!into) {
              throw UsageError{std::string("--") + name + ": not a time: '" + arg + "'"};
            }
          }};
}

std::vector<OptionSpec> history_options(HistoryOptions& o) {
  std::vector<OptionSpec> options = filter_options(o.filter);
  options.push_back({"directory", 'D', true, [&o](const char* v) { o.query.directory = v; }});
  options.push_back(time_option("since", 'S', o.query.since_us));
  options.push_back(time_option("until", 'U', o.query.until_us));
  options.push_back({"host", 0, true, [&o](const char* v) {
                       for (auto& h : split_commas(v))
                         o.query.hosts.push_back(std::move(h));
                     }});
  options.push_back({"identifier", 0, true, [&o](const char* v) {
                       if (!*v) throw UsageError{"--identifier: empty"};
                       o.query.identifier = v;
                     }});
  options.push_back(flag_option("json", o.json));
  options.push_back(flag_option("summary", o.summary));
  options.push_back(flag_option("incidents", o.incidents.print));
  options.push_back({"incident-gap", 0, true, [&o](const char* v) {
                       const auto gap = parse_duration(v);
                       if (!gap || *gap < std::chrono::milliseconds(1) ||
                           *gap > std::chrono::hours(1)) {
                         throw UsageError{std::string("--incident-gap: '") + v +
                                          "' is not a duration from 1ms to 1h"};
                       }
                       o.incidents.grouping.gap_us =
                           std::chrono::duration_cast<std::chrono::microseconds>(*gap).count();
                     }});
  options.push_back({"fabric-hosts", 0, true, [&o](const char* v) {
                       char* end = nullptr;
                       errno = 0;
                       const unsigned long n = std::strtoul(v, &end, 10);
                       if (!*v || *end || errno || *v == '-' || n < 2 || n > 100000) {
                         throw UsageError{std::string("--fabric-hosts: '") + v +
                                          "' is not a number of hosts from 2 to 100000"};
                       }
                       o.incidents.grouping.fabric_hosts = n;
                     }});
  options.push_back({"html", 0, true, [&o](const char* v) {
                       if (!*v) throw UsageError{"--html: empty file name"};
                       o.incidents.html = v;
                     }});
  options.push_back(color_option(o.color_when));
  return options;
}

// Whether the filter lets an entry through. A record this rdma-eventctl cannot read (an event
// of a newer daemon) passes only a filter that matches everything: nothing else can be known.
bool passes(const Filter& filter, const std::optional<Record>& record) {
  if (filter.matches_everything()) return true;
  return record && filter.matches(key_of(*record));
}

// --summary: per host and port (device-wide records: port 0), the count of each event name and
// the last health verdict, from the journal's own fields so that event names this client does
// not know are counted too.
class Summary {
 public:
  void add(const JournalEntry& e) {
    const uint32_t port = static_cast<uint32_t>(std::strtoul(e.port.c_str(), nullptr, 10));
    Row& row = rows_[{e.hostname, e.device, port}];
    ++row.events[e.event.empty() ? "unknown" : e.event];
    if (!e.health.empty()) row.health = e.health;
  }

  void print(bool json) const {
    if (!json && !rows_.empty())
      std::printf("%-20s %-14s %-8s %s\n", "HOST", "PORT", "HEALTH", "EVENTS");
    for (const auto& [key, row] : rows_) {
      const auto& [host, device, port] = key;
      if (json) {
        nlohmann::ordered_json j{
            {"host", host},
            {"device", device},
            {"port", port},
            {"health",
             row.health.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(row.health)},
            {"events", row.events}};
        std::puts(j.dump().c_str());
        continue;
      }
      std::string events;
      for (const auto& [name, count] : row.events) {
        events += (events.empty() ? "" : ", ") + name + " " + std::to_string(count);
      }
      const std::string where = port ? device + "/" + std::to_string(port) : device;
      std::printf("%-20s %-14s %-8s %s\n", host.c_str(), where.c_str(),
                  row.health.empty() ? "-" : row.health.c_str(), events.c_str());
    }
  }

 private:
  struct Row {
    std::map<std::string, uint64_t> events;
    std::string health;
  };
  std::map<std::tuple<std::string, std::string, uint32_t>, Row> rows_;
};

// One entry as a line: the record as monitor shows it, after the host. A record this client
// cannot read is shown by the journal's MESSAGE.
std::string readable(const JournalEntry& e, const std::optional<Record>& record, bool color) {
  const std::string host = e.hostname.empty() ? "-" : e.hostname;
  if (record) return host + "  " + format_record(*record, color);
  return host + "  " + format_rfc3339_us(e.realtime_us) + " " + e.event + ": " + e.message;
}

}  // namespace

int run_history(const Global& g, int argc, char** argv) {
  Global global = g;
  HistoryOptions o;
  const auto args = parse_command_line(argc, argv, kHistoryHelp, global, history_options(o));
  if (!args) return kExitOk;
  expect_no_arguments(*args);
  if (o.query.since_us && o.query.until_us && *o.query.since_us > *o.query.until_us) {
    throw UsageError{"--since is after --until"};
  }
  if (o.incidents.print || !o.incidents.html.empty()) {
    if (o.summary) throw UsageError{"--summary and --incidents/--html: one at a time"};
    if (!o.filter.matches_everything()) {
      throw UsageError{"--incidents and --html take no -e/-d/-p/-s: incidents are of every fault"};
    }
    o.incidents.json = o.json;
    return run_history_incidents(global, o.query, o.incidents);
  }

  JournalError error;
  auto reader = JournalReader::open(o.query, &error);
  if (!reader) {
    std::fprintf(stderr, "%s: %s\n", global.program.c_str(), error.message.c_str());
    return error.exit_code;
  }
  const bool color = !o.json && !o.summary && use_color(o.color_when, STDOUT_FILENO);
  Summary summary;
  SeenRecords seen;
  const bool ok = reader->for_each(
      [&](const JournalEntry& e) {
        if (e.record.empty()) return;  // not a record: a journal budget summary, say
        if (seen.seen_before(e.stream, e.seq)) return;
        std::string parse_error;
        const std::optional<Record> record = record_from_json(e.record, &parse_error);
        if (!passes(o.filter, record)) return;
        if (o.summary) {
          summary.add(e);
        } else {
          std::puts(o.json ? e.record.c_str() : readable(e, record, color).c_str());
        }
      },
      &error);
  if (o.summary) summary.print(o.json);
  if (!ok) {
    std::fprintf(stderr, "%s: %s\n", global.program.c_str(), error.message.c_str());
    return error.exit_code;
  }
  return kExitOk;
}

}  // namespace rdma_eventctl
