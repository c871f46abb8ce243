#include "history_incidents.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "escape.h"
#include "rdma_eventd/internal/atomic_file.h"

namespace rdma_eventctl {
namespace {

namespace fleet = rdma_eventd_fleet;
namespace internal = rdma_eventd::internal;

// The page's file, written whole at the end or not at all (a run that fails leaves the page
// before it): to a temporary file beside it, renamed over it. Tried at the start, so that a
// path that cannot be written is said before the journal is read. A path that is not a regular
// file (/dev/stdout, a FIFO) cannot be replaced, and is written as it is.
class PageFile {
 public:
  explicit PageFile(std::string path) : path_(std::move(path)) {}

  // 0, or the errno that says why the page could not be written there.
  int check() {
    struct stat st {};
    if (::stat(path_.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
      in_place_ = true;
      const int fd = ::open(path_.c_str(), O_WRONLY | O_CLOEXEC | O_NONBLOCK);
      if (fd < 0) return errno;
      ::close(fd);
      return 0;
    }
    // A symbolic link stays one: its file is replaced.
    if (char* real = ::realpath(path_.c_str(), nullptr)) {
      target_ = real;
      std::free(real);
    } else {
      target_ = path_;
    }
    std::string probe = internal::atomic_temp_template(target_);
    const int fd = ::mkostemp(probe.data(), O_CLOEXEC);
    if (fd < 0) return errno;
    ::close(fd);
    ::unlink(probe.c_str());
    return 0;
  }

  int write(std::string_view page) const {
    if (!in_place_) return internal::write_file_atomically(target_, page, {.mode = 0644});
    std::FILE* f = std::fopen(path_.c_str(), "w");
    if (!f) return errno;
    int err = std::fwrite(page.data(), 1, page.size(), f) == page.size() ? 0 : errno;
    if (std::fclose(f) != 0 && err == 0) err = errno;
    return err;
  }

 private:
  std::string path_;
  std::string target_;
  bool in_place_ = false;
};

// What of a read was not whole ("2 of 5000 journal files left out, 1 damaged, 1 directory not
// read"), for stderr and the page; empty when nothing.
std::string not_read(const fleet::JournalReader::Report& report) {
  const std::string of = " of " + std::to_string(report.files) + " journal files ";
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
  return what;
}

// The page's notice of an incomplete read (exit 74 or 75); empty when it was whole.
std::string incomplete_notice(const fleet::JournalReader::Report& report) {
  const std::string what = not_read(report);
  return what.empty()
             ? what
             : "Incomplete: " + what + " (rdma-eventctl named them on its standard error).";
}

}  // namespace

void report_unreadable(const Global& g, const fleet::FileProblem& p) {
  std::fprintf(stderr, "%s: %s: %s\n", g.program.c_str(), fleet::printable(p.path).c_str(),
               p.message.c_str());
}

int incomplete(const Global& g, const fleet::JournalReader::Report& report) {
  const std::string of = " of " + std::to_string(report.files) + " journal files ";
  if (report.unreadable_files || report.damaged_files || report.unreadable_dirs) {
    std::fprintf(stderr, "%s: incomplete: %s (named above)\n", g.program.c_str(),
                 not_read(report).c_str());
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
  PageFile page(request.html);
  if (options.page) {
    if (const int err = page.check()) {
      std::fprintf(stderr, "%s: --html: cannot write %s: %s\n", g.program.c_str(),
                   request.html.c_str(), std::strerror(err));
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
  if (options.page) {
    if (!report.page_problem().empty()) {
      std::fprintf(stderr, "%s: --html: some marks are not drawn: %s\n", g.program.c_str(),
                   report.page_problem().c_str());
    }
    if (const int err = page.write(report.page(incomplete_notice(reader->report())))) {
      std::fprintf(stderr, "%s: --html: cannot write %s: %s\n", g.program.c_str(),
                   request.html.c_str(), std::strerror(err));
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
