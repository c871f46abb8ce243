#include "history_incidents.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <vector>

#include "incidents_html.h"
#include "incidents_output.h"

namespace rdma_eventctl {
namespace {

// Opens the page's file before the journal is read, so that a path that cannot be written is
// said at once; the page is written at the end.
struct PageFile {
  std::FILE* file = nullptr;
  ~PageFile() {
    if (file) std::fclose(file);
  }
};

// One sd-journal per file, merged by time (journal_reader.h): over a receiver's 1,000 files and
// 1,000,000 records, one sd-journal for all took 56 s, one per file 6 s (bench/incidents.sh,
// docs/benchmarks.md).
constexpr size_t kFilesPerReader = 1;

}  // namespace

int run_history_incidents(const Global& g, JournalQuery query, const IncidentsRequest& request) {
  // Only the RDMA_* fields of the faults (and the ups, for the page): the records' JSON is not
  // needed to group them, and sd-journal skips the other entries by its index of RDMA_EVENT.
  query.whole_records = false;
  query.files_per_reader = kFilesPerReader;
  for (const auto event : fault_events())
    query.events.emplace_back(event);
  if (!request.html.empty()) query.events.emplace_back("port_active");

  JournalError error;
  auto reader = JournalReader::open(query, &error);
  if (!reader) {
    std::fprintf(stderr, "%s: %s\n", g.program.c_str(), error.message.c_str());
    return error.exit_code;
  }
  PageFile page;
  if (!request.html.empty()) {
    page.file = std::fopen(request.html.c_str(), "w");
    if (!page.file) {
      std::fprintf(stderr, "%s: --html: cannot write %s: %s\n", g.program.c_str(),
                   request.html.c_str(), std::strerror(errno));
      return kExitCantCreate;
    }
  }

  // --json: each incident as it closes, oldest first, nothing kept. Text, newest first: each
  // incident's lines are kept (a dozen at most), not the incident: a day of a busy fleet has
  // hundreds of incidents of hundreds of hosts each.
  std::vector<std::string> closed;
  Timeline timeline;
  const bool drawing = page.file != nullptr;
  IncidentGrouper grouper(request.grouping, [&](Incident&& incident) {
    if (drawing) timeline.add(incident);
    if (!request.print) return;
    if (request.json) {
      std::puts(incident_json(incident).dump().c_str());
    } else {
      closed.push_back(format_incident(incident));
    }
  });
  const bool ok = reader->for_each(
      [&](const JournalEntry& e) {
        FaultInput in{.time_us = e.realtime_us,
                      .host = e.hostname,
                      .event = e.event,
                      .device = e.device,
                      .port = static_cast<uint32_t>(std::strtoul(e.port.c_str(), nullptr, 10)),
                      .health = e.health,
                      .stream = e.stream,
                      .seq = e.seq};
        const bool fault = is_fault(in.event, in.health);
        const bool counted = grouper.add(in);
        if (drawing && (counted || !fault)) timeline.add(in);
      },
      &error);
  grouper.finish();
  if (!ok) {
    std::fprintf(stderr, "%s: %s\n", g.program.c_str(), error.message.c_str());
    return error.exit_code;
  }
  if (drawing) {
    const std::string html = timeline.html();
    const bool written = std::fwrite(html.data(), 1, html.size(), page.file) == html.size();
    const bool closed_ok = std::fclose(page.file) == 0;
    page.file = nullptr;
    if (!written || !closed_ok) {
      std::fprintf(stderr, "%s: --html: cannot write %s: %s\n", g.program.c_str(),
                   request.html.c_str(), std::strerror(errno));
      return kExitCantCreate;
    }
  }
  if (closed.empty() && request.print && !request.json) {
    std::printf("No incidents: no fault records in %s.\n",
                query.directory.empty() ? "the local journal"
                                        : ("the journal in " + query.directory).c_str());
  }
  for (auto it = closed.rbegin(); it != closed.rend(); ++it)
    std::fputs(it->c_str(), stdout);
  return kExitOk;
}

}  // namespace rdma_eventctl
