// rdma-eventctl history: the daemon's records read back from a journal (this host's, or a
// directory such as a central systemd-journal-remote receiver's), with the monitor's filters
// and formats, or as a summary per host and port.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "commands.h"
#include "escape.h"
#include "format.h"
#include "history_incidents.h"
#include "history_time.h"
#include "journal_files.h"
#include "journal_reader.h"
#include "seen_records.h"
#include "summary.h"

namespace rdma_eventctl {

using namespace rdma_eventd;
namespace fleet = rdma_eventd_fleet;

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
      --json               the records as the daemon wrote them (NDJSON; a record with
                           characters beyond ASCII written again with \uXXXX escapes)
      --summary            per host and port: the count of each event and the last health
                           verdict in the window (with --json: one JSON object per line)
      --incidents          fault records of every host grouped into incidents by time, each
                           with its class (fabric, host, port, sm, application) and the
                           evidence, newest first (with --json: one JSON object per line, each
                           as soon as it is closed)
      --incident-gap DUR   a port's (device's...) faults each within DUR of the one before are
                           one episode; episodes that begin within DUR of each other are one
                           incident (default 5s; 1ms to 1h)
      --fabric-hosts N     hosts losing links, or seeing SM/LID notices, within the fabric
                           window of each other that make a fabric incident (default 3; 2 to
                           100000)
      --fabric-window DUR  how close in time those must be (default 2s; 1ms to 1h)
      --html FILE          write a page with the timeline of hosts and incidents to FILE
      --identifier NAME    the daemon's SYSLOG_IDENTIFIER (default: rdma-eventd)
      --color WHEN         auto (default), always or never
  -h, --help               this text

TIME, as journalctl takes it (local time): "2026-11-24", "2026-11-24 18:30[:15]", "today",
"yesterday", "now", "@SECONDS", or relative: "-1h", "-30min", "-1h30min", "2d ago".

--incidents and --html take --directory, --since, --until and --host, not the record filters.

With -D, every journal file in DIR is read, however many there are; a file that cannot be
read (not a journal file, not this user's) is named on stderr and left out, and the exit
status says so (74). A file damaged after its header is read entry by entry past the damage,
as journalctl does, and named with what could be read (74). A file renamed after the listing
(journal-remote rotating it) is read under its new name, and a new file under the old name
too; one deleted after the listing (a vacuum) is named (75).

Exit status: 0 done (also when nothing matched), 64 bad command line, 66 no journal files
there, 73 the --html file cannot be written, 74 incomplete: journal files named on stderr
could not be read, or only in part (the output has everything else), 75 journal files named
on stderr were deleted after the directory was listed (run again), 77 this user may not read
the journal (root and the groups systemd-journal and adm may).
)";

namespace {

struct HistoryOptions {
  fleet::JournalQuery query{.identifier = "rdma-eventd"};
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

// A duration from 1 ms to 1 h, in microseconds.
OptionSpec span_option(const char* name, int64_t& into_us) {
  return {name, 0, true, [name, &into_us](const char* v) {
            const auto span = parse_duration(v);
            if (!span || *span < std::chrono::milliseconds(1) || *span > std::chrono::hours(1)) {
              throw UsageError{std::string("--") + name + ": '" + v +
                               "' is not a duration from 1ms to 1h"};
            }
            into_us = std::chrono::duration_cast<std::chrono::microseconds>(*span).count();
          }};
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
  options.push_back(span_option("incident-gap", o.incidents.grouping.gap_us));
  options.push_back(span_option("fabric-window", o.incidents.grouping.fabric_window_us));
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

// One entry as a line: the record as monitor shows it, after the host. A record this client
// cannot read is shown by the journal's MESSAGE. Every string in it may come from another host:
// a line that holds anything printable() would change is shown escaped, and without colour, so
// that nothing in it acts on the terminal.
std::string readable(const fleet::JournalEntry& e, const std::optional<Record>& record,
                     bool color) {
  const std::string host = e.hostname.empty() ? "-" : fleet::printable(e.hostname);
  if (!record) {
    return host + "  " + format_rfc3339_us(e.realtime_us) + " " + fleet::printable(e.event) + ": " +
           fleet::printable(e.message);
  }
  const std::string plain = format_record(*record, false);
  const std::string shown = fleet::printable(plain);
  if (color && shown == plain) return host + "  " + format_record(*record, true);
  return host + "  " + shown;
}

// --json's line for an entry's RDMA_RECORD, none when it is not one line of JSON (a record that
// parsed is JSON; a newer daemon's that did not is checked). As the daemon wrote it when it is
// ASCII (every record of ours); otherwise the same JSON value written again with every
// character beyond ASCII as \uXXXX, so that a right-to-left override in a name another host
// sent cannot reorder the terminal's line.
std::optional<std::string> json_line(const std::string& text, bool parsed) {
  if (text.find_first_of("\n\r") != std::string::npos) return std::nullopt;
  const bool ascii = std::all_of(text.begin(), text.end(),
                                 [](char c) { return static_cast<unsigned char>(c) < 0x80; });
  if (ascii) {
    if (parsed || nlohmann::json::accept(text)) return text;
    return std::nullopt;
  }
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) return std::nullopt;
  return fleet::dump_ascii(j);
}

// Entries --json leaves out because their RDMA_RECORD is not one line of JSON: named on stderr
// (the first few), counted.
class NotJson {
 public:
  void add(const Global& g, const fleet::JournalEntry& e) {
    if (count_++ < kNamed) {
      std::fprintf(stderr,
                   "%s: %s: the record of stream %s seq %llu is not one line of JSON; "
                   "left out\n",
                   g.program.c_str(), fleet::printable(e.hostname).c_str(),
                   fleet::printable(e.stream).c_str(), static_cast<unsigned long long>(e.seq));
    }
  }
  // 0 when none, else kExitIncomplete after a line with the count.
  int exit_code(const Global& g) const {
    if (count_ == 0) return kExitOk;
    std::fprintf(stderr, "%s: incomplete: %llu records that are not one line of JSON left out\n",
                 g.program.c_str(), static_cast<unsigned long long>(count_));
    return fleet::kExitIncomplete;
  }

 private:
  static constexpr uint64_t kNamed = 10;
  uint64_t count_ = 0;
};

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
  // A receiver has a journal file per host, more than the usual soft limit of 1,024 open files.
  fleet::raise_open_file_limit();
  if (o.incidents.print || !o.incidents.html.empty()) {
    if (o.summary) throw UsageError{"--summary and --incidents/--html: one at a time"};
    if (!o.filter.matches_everything()) {
      throw UsageError{"--incidents and --html take no -e/-d/-p/-s: incidents are of every fault"};
    }
    o.incidents.json = o.json;
    return run_history_incidents(global, o.query, o.incidents);
  }

  fleet::JournalError error;
  auto reader = fleet::JournalReader::open(o.query, &error);
  if (!reader) {
    std::fprintf(stderr, "%s: %s\n", global.program.c_str(), error.message.c_str());
    return error.exit_code;
  }
  const bool color = !o.json && !o.summary && use_color(o.color_when, STDOUT_FILENO);
  fleet::Summary summary;
  fleet::SeenRecords seen;
  NotJson not_json;
  const bool ok = reader->for_each(
      [&](const fleet::JournalEntry& e) {
        if (e.record.empty()) return;  // not a record: a journal budget summary, say
        if (seen.seen_before(e.stream, e.seq)) return;
        std::string parse_error;
        const std::optional<Record> record = record_from_json(e.record, &parse_error);
        if (!passes(o.filter, record)) return;
        if (o.summary) {
          summary.add(e);
        } else if (!o.json) {
          std::puts(readable(e, record, color).c_str());
        } else if (const auto line = json_line(e.record, record.has_value())) {
          std::puts(line->c_str());
        } else {
          not_json.add(global, e);
        }
      },
      [&](const fleet::FileProblem& p) { report_unreadable(global, p); }, &error);
  if (o.summary) summary.print(stdout, o.json);
  if (!ok) {
    std::fprintf(stderr, "%s: %s\n", global.program.c_str(), error.message.c_str());
    return error.exit_code;
  }
  const int files = incomplete(global, reader->report());
  const int records = not_json.exit_code(global);
  // Incomplete before changed: 74 says more than 75.
  if (files == fleet::kExitIncomplete || records == fleet::kExitIncomplete) {
    return fleet::kExitIncomplete;
  }
  return files;
}

}  // namespace rdma_eventctl
