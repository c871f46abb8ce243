#include "journal_reader.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "archive_names.h"
#include "entry_runs.h"
#include "journal_file.h"
#include "journal_files.h"
#include "open_listed.h"

namespace rdma_eventd_fleet {
namespace {

// Where the local journal lives: persistent, then volatile.
const char* const kLocalDirectories[] = {"/var/log/journal", "/run/log/journal"};

// Descriptors left free while files are open: standard streams, the temporary file, what
// libsystemd and the program around the reader may open meanwhile.
constexpr size_t kReservedDescriptors = 16;

// Entries read ahead in all (entry_stream.h): the RDMA_* fields alone are small; whole records
// are a kilobyte or two each.
constexpr size_t kAheadFields = 65536;
constexpr size_t kAheadRecords = 8192;

// Files open at once. Each open file's pages that sd-journal maps count in the resident size:
// over 10,000 hosts' files, --incidents with 1,024 open had 1 GiB resident, with 64 open 75 MiB,
// in the same time (the runs of the RDMA_* fields are about 20 bytes an entry). Whole records
// make runs as large as the records: those keep more files open, so that a directory of up
// to 1,024 files is read without a temporary file at all.
constexpr size_t kFilesAtOnceFields = 64;
constexpr size_t kFilesAtOnceRecords = 1024;

// Memory for reading the runs back: this much in all, split between them.
constexpr size_t kRunBuffersInAll = 4 << 20;
// The runs are read from those buffers: little to gain from entries read ahead as well.
constexpr size_t kAheadRuns = 4096;

std::string where(const JournalQuery& q) {
  return q.directory.empty() ? "the local journal" : "the journal in " + q.directory;
}

JournalError no_access(const JournalQuery& q) {
  return {"cannot read " + where(q) +
              ": permission denied; root and the members of the groups 'systemd-journal' and "
              "'adm' may read it",
          kExitNoPerm};
}

// Why the local journal has no file this user may read: none there, or none readable.
JournalError explain_local(const JournalQuery& q) {
  bool files = false;
  for (const char* dir : kLocalDirectories) {
    const JournalFiles found = list_journal_files(dir);
    if (!found.files.empty() || found.error == EACCES || !found.unreadable.empty()) files = true;
  }
  if (files) return no_access(q);
  return {"no journal files in /var/log/journal or /run/log/journal", kExitNoInput};
}

FileProblem problem_of(const std::string& path, std::string what, int error) {
  std::string message = std::move(what) + ": " + std::strerror(error);
  // What sd-journal says of a file it cannot make sense of.
  if (error == EBADMSG || error == ENODATA || error == EPROTONOSUPPORT || error == EUCLEAN) {
    message += " (not a journal file, or a damaged one)";
  }
  return {path, message + "; left out", error};
}

// What a damaged file gave: through sd-journal's index, then entry by entry.
FileProblem damaged(const std::string& path, const FileDamage& d) {
  std::string m = "damaged: the journal's index of the entries asked for ended after " +
                  std::to_string(d.through_index) +
                  " of them; read entry by entry, as journalctl does, ";
  if (d.in_header) {
    m += std::to_string(d.readable) + " of the " + std::to_string(d.in_header) +
         " entries its header counts could be read";
  } else {
    m += std::to_string(d.readable) + " entries could be read (its header cannot be)";
  }
  if (d.place_lost) {
    m += ", but not the entry where the index ended: nothing after it read";
  } else if (d.in_header && d.readable >= d.in_header) {
    m += ": none left out";
  } else {
    m += ": the others left out";
  }
  return {path, std::move(m), EBADMSG, FileProblem::Kind::kDamaged};
}

}  // namespace

JournalReader::JournalReader(JournalQuery query)
    : query_(std::move(query)),
      files_at_once_(query_.whole_records ? kFilesAtOnceRecords : kFilesAtOnceFields) {}

JournalReader::~JournalReader() = default;

std::unique_ptr<JournalReader> JournalReader::open(const JournalQuery& query, JournalError* error) {
  std::unique_ptr<JournalReader> reader(new JournalReader(query));
  if (query.directory.empty()) {
    int e = 0;
    reader->local_ = JournalFile::open_local(query, &e);
    if (!reader->local_) {
      *error = e == EACCES || e == EPERM
                   ? no_access(query)
                   : JournalError{"cannot open the local journal: " + std::string(std::strerror(e)),
                                  kExitNoInput};
      return nullptr;
    }
    if (reader->local_->usage() == 0) {
      *error = explain_local(query);
      return nullptr;
    }
    return reader;
  }
  JournalFiles found = list_journal_files(query.directory);
  if (found.error) {
    *error = found.error == EACCES
                 ? no_access(query)
                 : JournalError{"cannot open " + where(query) + ": " + std::strerror(found.error),
                                kExitNoInput};
    return nullptr;
  }
  // None this user may read at all: one message for the directory, not one per file.
  const bool any_readable = std::any_of(found.files.begin(), found.files.end(), [](auto& f) {
    return ::faccessat(AT_FDCWD, f.path.c_str(), R_OK, AT_EACCESS) == 0;
  });
  if (found.files.empty() || !any_readable) {
    const bool denied = !found.files.empty() || !found.unreadable.empty();
    *error = denied ? no_access(query)
                    : JournalError{"no journal files in " + query.directory, kExitNoInput};
    return nullptr;
  }
  reader->files_ = std::move(found.files);
  reader->dirs_unreadable_ = std::move(found.unreadable);
  return reader;
}

bool JournalReader::for_each(const Each& each, const Problem& problem, JournalError* error) {
  report_ = {};
  if (local_) {
    JournalEntry e;
    int r;
    while ((r = local_->next(e)) > 0)
      each(e);
    if (r < 0) {
      *error = {"reading " + where(query_) + ": " + std::strerror(-r), kExitIncomplete};
      return false;
    }
    return true;
  }
  return read_directory(each, problem, error);
}

bool JournalReader::read_directory(const Each& each, const Problem& problem, JournalError* error) {
  report_.files = files_.size();
  const auto tell = [&](FileProblem p) {
    switch (p.kind) {
      case FileProblem::Kind::kLeftOut:
        ++report_.unreadable_files;
        break;
      case FileProblem::Kind::kDamaged:
        ++report_.damaged_files;
        break;
      case FileProblem::Kind::kDeleted:
        ++report_.deleted_files;
        break;
    }
    problem(p);
  };
  for (const auto& [dir, e] : dirs_unreadable_) {
    ++report_.unreadable_dirs;
    problem(problem_of(dir, "cannot read the directory", e));
  }

  // Archives whose names put them outside --since/--until: not opened at all.
  const std::vector<bool> by_name = outside_by_name(files_, query_.since_us, query_.until_us);
  const size_t ahead = query_.whole_records ? kAheadRecords : kAheadFields;
  std::unique_ptr<RunFile> runs;
  size_t next_file = 0;
  while (next_file < files_.size()) {
    // A group: as many files as may be open now (two descriptors each, journal_file.h), up to
    // files_at_once_.
    const size_t room =
        std::max<size_t>(1, std::min(files_at_once_, open_files_left(kReservedDescriptors) / 2));
    std::vector<std::unique_ptr<JournalFile>> group;
    std::vector<std::string> paths;
    while (next_file < files_.size() && group.size() < room) {
      if (next_file < by_name.size() && by_name[next_file]) {
        ++next_file;
        ++report_.outside_window;
        ++report_.outside_by_name;
        continue;
      }
      OpenedFile opened = open_listed(files_[next_file], query_);
      const int e = opened.error;
      if (!opened.file && (e == EMFILE || e == ENFILE) && !group.empty())
        break;  // the next group's
      ++next_file;
      // The new file of a rotation: read after the others (files_ may move: `opened` holds
      // its own copies).
      if (opened.replacement) files_.push_back(*opened.replacement);
      if (opened.outside_window) {
        ++report_.outside_window;
      } else if (opened.deleted) {
        tell({opened.path,
              "deleted after the directory was listed (a vacuum, or a rotation"
              " that removed it); not read",
              ENOENT, FileProblem::Kind::kDeleted});
      } else if (opened.not_regular) {
        tell({opened.path, "cannot open: not a regular file; left out", EINVAL});
      } else if (!opened.file) {
        tell(problem_of(opened.path, "cannot open", e));
      } else {
        group.push_back(std::move(opened.file));
        paths.push_back(std::move(opened.path));
      }
    }
    ++report_.groups;
    std::vector<EntryStream*> streams;
    for (auto& file : group)
      streams.push_back(file.get());
    const auto failed = [&](size_t i, int e) {
      tell(problem_of(
          paths[i], "reading failed after " + std::to_string(group[i]->entries_read()) + " entries",
          e));
    };
    // Once the group is read: the files that turned out damaged.
    const auto tell_damaged = [&] {
      for (size_t i = 0; i < group.size(); ++i) {
        if (group[i]->damage()) tell(damaged(paths[i], *group[i]->damage()));
      }
    };
    if (!runs && next_file == files_.size()) {
      merge_by_time(streams, ahead, each, failed);  // every file at once: no run needed
      tell_damaged();
      report_.files = files_.size();
      return true;
    }
    if (!runs) {
      std::string why;
      runs = RunFile::create(&why);
      if (!runs) {
        *error = {why, kExitIncomplete};
        return false;
      }
    }
    runs->begin_run();
    bool written = true;
    merge_by_time(
        streams, ahead, [&](const JournalEntry& e) { written = written && runs->add(e); }, failed);
    tell_damaged();
    if (!written || !runs->end_run()) {
      *error = {runs->error(), kExitIncomplete};
      return false;
    }
  }
  report_.files = files_.size();
  if (!runs) return true;  // no file could be opened
  report_.run_bytes = runs->bytes();
  const size_t buffer = std::clamp<size_t>(kRunBuffersInAll / runs->runs(), 16 << 10, 1 << 20);
  std::vector<std::unique_ptr<EntryStream>> readers;
  std::vector<EntryStream*> streams;
  for (size_t i = 0; i < runs->runs(); ++i) {
    readers.push_back(runs->read_run(i, buffer));
    streams.push_back(readers.back().get());
  }
  bool ok = true;
  int failure = 0;
  merge_by_time(streams, kAheadRuns, each, [&](size_t, int e) {
    ok = false;
    failure = e;
  });
  if (!ok) {
    *error = {"reading back a temporary file: " + std::string(std::strerror(failure)),
              kExitIncomplete};
  }
  return ok;
}

}  // namespace rdma_eventd_fleet
