// Reading rdma-eventd's entries back from a journal: this host's, or every journal file of a
// directory such as a systemd-journal-remote receiver's, however many there are.
//
// A directory's files are read each by an sd-journal of its own and merged by time (one
// sd-journal over a thousand files compares them all at every step). As many as may be open
// at once are (the soft limit of open files, which rdma-eventctl raises to the hard one first,
// less a reserve, and at most files_at_once); beyond that, each group of files that fits is
// merged into a run of a temporary file (entry_runs.h) and the runs are merged in the end, so
// no file is ever left out for want of descriptors. A file that cannot be read (not a journal
// file, not this user's to read) is named through the problem callback and left out; the
// others are read. A file damaged after its header is read as far as it can be (journal_file.h)
// and named. The directory is listed once, and each file opened when its group's turn comes:
// a file renamed meanwhile (journal-remote rotating it into an archive) is read under its new
// name, and a new file under the listed name is read too; one deleted meanwhile is named as
// such (open_listed.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "journal_files.h"
#include "journal_query.h"

namespace rdma_eventd_fleet {

class JournalFile;

class JournalReader {
 public:
  // Opens the local journal, or lists the directory's journal files; null and *error when there
  // is nothing this user may read: no journal files at all, or none this user may open.
  static std::unique_ptr<JournalReader> open(const JournalQuery& query, JournalError* error);
  ~JournalReader();
  JournalReader(const JournalReader&) = delete;
  JournalReader& operator=(const JournalReader&) = delete;

  using Each = std::function<void(const JournalEntry&)>;
  using Problem = std::function<void(const FileProblem&)>;

  // Calls `each` for every matching entry in time order, oldest first (equal times in the
  // files' name order). Each file that cannot be read, or not to its end, is given to `problem`
  // as soon as that is known. Returns false, with *error, when reading cannot go on at all (the
  // temporary file cannot be written): what was given to `each` so far is all there is.
  bool for_each(const Each& each, const Problem& problem, JournalError* error);

  // At most this many files open at once (fewer when the limit of open files leaves fewer).
  // Beyond it, groups and runs. The default depends on what is read (journal_reader.cc).
  void set_files_at_once(size_t n) { files_at_once_ = n; }

  // How the last for_each went.
  struct Report {
    size_t files = 0;             // journal files in the directory (and made under a listed
                                  // name during the run)
    size_t unreadable_files = 0;  // given to `problem`: not read
    size_t damaged_files = 0;     // given to `problem`: damaged, read as far as they could be
    size_t deleted_files = 0;     // given to `problem`: deleted after the listing
    size_t outside_window = 0;    // not read: no entry within --since/--until (the header)
    size_t outside_by_name = 0;   // of those, archives known from their names: not even opened
    size_t unreadable_dirs = 0;   // directories below it given to `problem`
    size_t groups = 0;            // groups of files read one after the other: 1 when all at once
    uint64_t run_bytes = 0;       // written to the temporary file
  };
  const Report& report() const { return report_; }

 private:
  explicit JournalReader(JournalQuery query);
  bool read_directory(const Each& each, const Problem& problem, JournalError* error);

  JournalQuery query_;
  std::unique_ptr<JournalFile> local_;                        // the local journal
  std::vector<ListedFile> files_;                             // a directory's
  std::vector<std::pair<std::string, int>> dirs_unreadable_;  // directories below it
  size_t files_at_once_;
  Report report_;
};

}  // namespace rdma_eventd_fleet
