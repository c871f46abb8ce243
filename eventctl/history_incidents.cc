#include "history_incidents.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "escape.h"

namespace rdma_eventctl {
namespace {

namespace fleet = rdma_eventd_fleet;

// Opens the page's file before the journal is read, so that a path that cannot be written is
// said at once; the page is written at the end.
struct PageFile {
  std::FILE* file = nullptr;
  ~PageFile() {
    if (file) std::fclose(file);
  }
};

}  // namespace

void report_unreadable(const Global& g, const fleet::FileProblem& p) {
  std::fprintf(stderr, "%s: %s: %s\n", g.program.c_str(), fleet::printable(p.path).c_str(),
               p.message.c_str());
}

int incomplete(const Global& g, const fleet::JournalReader::Report& report) {
  const std::string of = " of " + std::to_string(report.files) + " journal files ";
  if (report.unreadable_files || report.damaged_files || report.unreadable_dirs) {
    std::string what;
    const auto add = [&](size_t n, const std::string& text) {
      if (n == 0) return;
      what += (what.empty() ? "" : ", ") + std::to_string(n) + (what.empty() ? of : " ") + text;
    };
    add(report.unreadable_files, "left out");
    add(report.damaged_files, "damaged");
    add(report.deleted_files, "deleted during the run");
    if (report.unreadable_dirs) {
      what += (what.empty() ? "" : ", ") + std::to_string(report.unreadable_dirs) +
              (report.unreadable_dirs == 1 ? " directory" : " directories") + " not read";
    }
    std::fprintf(stderr, "%s: incomplete: %s (named above)\n", g.program.c_str(), what.c_str());
    return fleet::kExitIncomplete;
  }
  if (report.deleted_files) {
    std::fprintf(stderr, "%s: changed: %zu%sdeleted after the directory was listed (named above)\n",
                 g.program.c_str(), report.deleted_files, of.c_str());
    return fleet::kExitChanged;
  }
  return kExitOk;
}

int run_history_incidents(const Global& g, fleet::JournalQuery query,
                          const IncidentsRequest& request) {
  const fleet::IncidentReportOptions options{.grouping = request.grouping,
                                             .print = request.print,
                                             .json = request.json,
                                             .page = !request.html.empty()};
  // Only the RDMA_* fields of the faults (and the ups, for the page): the records' JSON is not
  // needed to group them, and sd-journal skips the other entries by its index of RDMA_EVENT.
  query.whole_records = false;
  query.events = fleet::IncidentReport::events(options);

  fleet::JournalError error;
  auto reader = fleet::JournalReader::open(query, &error);
  if (!reader) {
    std::fprintf(stderr, "%s: %s\n", g.program.c_str(), error.message.c_str());
    return error.exit_code;
  }
  PageFile page;
  if (options.page) {
    page.file = std::fopen(request.html.c_str(), "w");
    if (!page.file) {
      std::fprintf(stderr, "%s: --html: cannot write %s: %s\n", g.program.c_str(),
                   request.html.c_str(), std::strerror(errno));
      return kExitCantCreate;
    }
  }

  fleet::IncidentReport report(options, stdout);
  const bool ok =
      reader->for_each([&](const fleet::JournalEntry& e) { report.add(e); },
                       [&](const fleet::FileProblem& p) { report_unreadable(g, p); }, &error);
  const size_t incidents = report.finish();
  if (!ok) {
    std::fprintf(stderr, "%s: %s\n", g.program.c_str(), error.message.c_str());
    return error.exit_code;
  }
  if (page.file) {
    const std::string html = report.page();
    const bool written = std::fwrite(html.data(), 1, html.size(), page.file) == html.size();
    const bool closed_ok = std::fclose(page.file) == 0;
    page.file = nullptr;
    if (!written || !closed_ok) {
      std::fprintf(stderr, "%s: --html: cannot write %s: %s\n", g.program.c_str(),
                   request.html.c_str(), std::strerror(errno));
      return kExitCantCreate;
    }
  }
  if (incidents == 0 && request.print && !request.json) {
    std::printf("No incidents: no fault records in %s.\n",
                query.directory.empty() ? "the local journal"
                                        : ("the journal in " + query.directory).c_str());
  }
  return incomplete(g, reader->report());
}

}  // namespace rdma_eventctl
