// Fuzzes the fleet analysis (fleet/): what `rdma-eventctl history --incidents` and `--html` do
// with a central journal's entries, every field of which any uploading host chose. The input is
// a first byte that picks the options, then entries in the journal export format that
// systemd-journal-remote takes (`NAME=value` lines, or `NAME`, a 64-bit little-endian length
// and the bytes, for a value with any bytes; an empty line ends an entry): __REALTIME_TIMESTAMP,
// _HOSTNAME, RDMA_EVENT, RDMA_DEVICE, RDMA_PORT, RDMA_HEALTH, RDMA_LINK_CHANGE, RDMA_STREAM,
// RDMA_SEQ. They go
// through the grouping (IncidentGrouper) and every output: the text, the JSON, the page, and the
// report the command line runs (IncidentReport). Beyond "no crash, no leak, no undefined
// behaviour, no exception", it checks:
//  - every fault that counted is in exactly one incident; the incidents are given out in the
//    order they end (but for one holding a record more than reorder_us late); each has a host,
//    and its start is not after its end;
//  - the class means what it says: fabric exactly when enough hosts lost links, or saw SM
//    notices, within the fabric window (and their spread is within it); application only when
//    every record is an app_report; sm only when no port lost its link or got a verdict;
//  - the text and the JSON lines are printable ASCII (fleet/escape.h); every JSON line parses
//    (strict UTF-8) and says what the incident holds; the page is UTF-8 with no control
//    character but the newline and no script but its own;
//  - IncidentReport prints exactly the JSON lines the grouping's incidents give.
// The same input also feeds the two parsers of what a receiver's directory holds: the host
// names, as file names, go through the archive names' reading (fleet/archive_names.h) with a
// window from the first entries' times (an archive is decided outside only when its name is
// one, and never the newest of its name for --since alone), and the bytes after the first
// through the journal header's (a header is read only from 208 bytes or more, and says a time
// for its first entry exactly when it counts one).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "archive_names.h"
#include "escape.h"
#include "fuzz_check.h"
#include "incident_grouper.h"
#include "incident_report.h"
#include "incidents_html.h"
#include "incidents_output.h"
#include "journal_header.h"

namespace {

using namespace rdma_eventd_fleet;

// The options, from the input's first byte: gaps and windows from a millisecond to an hour,
// thresholds from 2 to 5 hosts, reordering on or off, a few or many seq runs kept.
IncidentOptions options_from(uint8_t b) {
  static constexpr int64_t kSpans[] = {1'000, 500'000, 2'000'000, 5'000'000, 3'600'000'000};
  IncidentOptions o;
  o.gap_us = kSpans[b % 5];
  o.fabric_window_us = kSpans[(b / 5) % 5];
  o.fabric_hosts = 2 + (b / 25) % 4;
  o.reorder_us = (b & 0x80) ? 0 : 1'000'000;
  o.runs_per_stream = (b & 0x40) ? 2 : 64;
  return o;
}

// The fields read as they are, and the member of the entry each goes to.
const std::pair<std::string_view, std::string JournalEntry::*> kTextFields[] = {
    {"_HOSTNAME", &JournalEntry::hostname}, {"RDMA_EVENT", &JournalEntry::event},
    {"RDMA_DEVICE", &JournalEntry::device}, {"RDMA_PORT", &JournalEntry::port},
    {"RDMA_HEALTH", &JournalEntry::health}, {"RDMA_LINK_CHANGE", &JournalEntry::link_change},
    {"RDMA_STREAM", &JournalEntry::stream},
};

// Reads journal export format into entries; stops at the first malformed field.
std::vector<JournalEntry> parse_export(std::string_view in) {
  std::vector<JournalEntry> entries;
  JournalEntry e;
  bool any = false;
  while (!in.empty()) {
    const size_t eol = in.find('\n');
    const std::string_view line = in.substr(0, eol);
    in.remove_prefix(eol == std::string_view::npos ? in.size() : eol + 1);
    if (line.empty()) {
      if (any) entries.push_back(e);
      e = {};
      any = false;
      continue;
    }
    std::string_view name, value;
    if (const size_t eq = line.find('='); eq != std::string_view::npos) {
      name = line.substr(0, eq);
      value = line.substr(eq + 1);
    } else {  // binary: NAME\n, le64 length, bytes, \n
      uint64_t length = 0;
      if (in.size() < 8) break;
      std::memcpy(&length, in.data(), 8);
      in.remove_prefix(8);
      if (length > in.size()) break;
      name = line;
      value = in.substr(0, length);
      in.remove_prefix(length);
      if (!in.empty() && in.front() == '\n') in.remove_prefix(1);
    }
    any = true;
    const std::string text(value);
    if (name == "__REALTIME_TIMESTAMP") {
      e.realtime_us = static_cast<int64_t>(std::strtoull(text.c_str(), nullptr, 10));
    } else if (name == "RDMA_SEQ") {
      e.seq = std::strtoull(text.c_str(), nullptr, 10);
    } else {
      for (const auto& [field, member] : kTextFields) {
        if (name == field) e.*member = text;
      }
    }
  }
  if (any) entries.push_back(e);
  return entries;
}

bool printable_text(std::string_view text) {
  for (const char c : text) {
    const auto b = static_cast<unsigned char>(c);
    if (c != '\n' && (b < 0x20 || b == 0x7f)) return false;
  }
  return valid_utf8(text);
}

// The text and JSON outputs: printable ASCII and newlines only (fleet/escape.h: nothing beyond
// ASCII is shown as it is, so nothing can reorder, hide or imitate a name).
bool ascii_text(std::string_view text) {
  for (const char c : text) {
    if (c != '\n' && (c < 0x20 || c >= 0x7f)) return false;
  }
  return true;
}

size_t occurrences(std::string_view text, std::string_view what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string_view::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

void check_incident(const Incident& i, const IncidentOptions& o, const std::string& input) {
  FUZZ_CHECK(!i.hosts.empty() && i.records > 0, input);
  FUZZ_CHECK(i.start_us <= i.end_us, input);
  uint64_t counted = 0;
  for (const auto& [name, n] : i.events)
    counted += n;
  FUZZ_CHECK(counted == i.records, input);
  const bool together =
      i.link_losses.hosts >= o.fabric_hosts || i.sm_notices.hosts >= o.fabric_hosts;
  FUZZ_CHECK((i.cls == IncidentClass::kFabric) == together, i.evidence);
  FUZZ_CHECK(i.link_losses.spread_us <= o.fabric_window_us, input);
  FUZZ_CHECK(i.sm_notices.spread_us <= o.fabric_window_us, input);
  FUZZ_CHECK(i.link_losses.hosts <= i.link_losses.hosts_in_all, input);
  if (i.cls == IncidentClass::kApplication) {
    FUZZ_CHECK(i.events.size() == 1 && i.events.begin()->first == "app_report", i.evidence);
  }
  if (i.cls == IncidentClass::kSm) {
    for (const auto& [name, h] : i.hosts)
      FUZZ_CHECK(h.ports.empty(), i.evidence);
  }

  const std::string text = format_incident(i);
  FUZZ_CHECK(ascii_text(text), text);
  FUZZ_CHECK(ascii_text(dump_ascii(incident_json(i))), text);
  const std::string line = incident_json(i).dump();
  const auto back = nlohmann::json::parse(line, nullptr, false);
  FUZZ_CHECK(!back.is_discarded() && line.find('\n') == std::string::npos, line);
  FUZZ_CHECK(back["records"] == i.records && back["hosts"].size() == i.hosts.size(), line);
  FUZZ_CHECK(back["class"] == class_name(i.cls), line);
}

// The report the command line runs, its JSON lines captured.
std::string report_json(const IncidentOptions& o, const std::vector<JournalEntry>& entries) {
  char* buffer = nullptr;
  size_t size = 0;
  std::FILE* out = open_memstream(&buffer, &size);
  if (!out) std::abort();
  IncidentReport report({.grouping = o, .print = true, .json = true, .page = true}, out);
  for (const auto& e : entries)
    report.add(e);
  report.finish();
  (void)report.page();
  std::fclose(out);
  std::string text(buffer, size);
  std::free(buffer);
  return text;
}

void check_directory_parsers(const std::vector<JournalEntry>& entries, std::string_view bytes,
                             const std::string& input) {
  // A directory lists each name once.
  std::set<std::string> names;
  for (const auto& e : entries)
    names.insert("/r/" + e.hostname);
  std::vector<ListedFile> files;
  for (const auto& n : names)
    files.push_back({n});
  std::optional<int64_t> since, until;
  if (!entries.empty()) since = entries[0].realtime_us;
  if (entries.size() > 1) until = entries[1].realtime_us;
  const std::vector<bool> outside = outside_by_name(files, since, std::nullopt);
  const std::vector<bool> both = outside_by_name(files, since, until);
  FUZZ_CHECK(outside.size() == files.size() && both.size() == files.size(), input);
  for (size_t i = 0; i < files.size(); ++i) {
    const std::optional<int64_t> head = archive_head_realtime(files[i].path);
    FUZZ_CHECK(!both[i] || head, input);
    FUZZ_CHECK(!outside[i] || both[i], input);
    if (outside[i]) {
      // --since alone: a later archive of the same name begins before it.
      bool later = false;
      const std::string stem = files[i].path.substr(0, files[i].path.rfind('@'));
      for (const auto& f : files) {
        const auto h = archive_head_realtime(f.path);
        later |= h && f.path.substr(0, f.path.rfind('@')) == stem && *h >= *head && *h < *since &&
                 f.path != files[i].path;
      }
      FUZZ_CHECK(later, input);
    }
  }
  const auto header =
      parse_journal_header(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
  FUZZ_CHECK(!header || bytes.size() >= kJournalHeaderBytes, input);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string input(reinterpret_cast<const char*>(data), size);
  const IncidentOptions o = options_from(data[0]);
  const std::vector<JournalEntry> entries = parse_export(std::string_view(input).substr(1));

  std::vector<Incident> incidents;
  IncidentGrouper grouper(o, [&](Incident&& i) { incidents.push_back(std::move(i)); });
  Timeline timeline(/*max_rows=*/4, /*table_rows=*/8);
  uint64_t faults = 0;
  for (const auto& e : entries) {
    const FaultInput in = fault_input(e);
    faults += grouper.add(in);
    timeline.add(in);
  }
  grouper.finish();
  FUZZ_CHECK(grouper.open_incidents() == 0 && grouper.open_episodes() == 0, input);

  uint64_t records = 0;
  std::string lines;
  for (size_t k = 0; k < incidents.size(); ++k) {
    const Incident& i = incidents[k];
    check_incident(i, o, input);
    // In the order they end, but for an incident with a record taken late (at the time it was
    // read, while its own time is earlier).
    if (k > 0 && i.late_records == 0) FUZZ_CHECK(incidents[k - 1].end_us <= i.end_us, input);
    records += i.records;
    lines += dump_ascii(incident_json(i)) + "\n";
    timeline.add(i);
  }
  FUZZ_CHECK(records == faults, input);

  const std::string page = timeline.html();
  FUZZ_CHECK(printable_text(page), input);
  FUZZ_CHECK(occurrences(page, "<script") == 1 && occurrences(page, "</script") == 1, input);

  FUZZ_CHECK(report_json(o, entries) == lines, input);
  check_directory_parsers(entries, std::string_view(input).substr(1), input);
  return 0;
}
