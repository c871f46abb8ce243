// The journal files of a directory, and how many of them this process may hold open at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace rdma_eventd_fleet {

// A journal file as the listing found it: its name, and which file that name was then (device
// and inode; 0 when it could not be looked at), so that a file renamed or replaced before it is
// read (journal-remote rotating it into an archive, a vacuum deleting it) is told apart.
struct ListedFile {
  std::string path;
  uint64_t device = 0;
  uint64_t inode = 0;
  bool operator<(const ListedFile& o) const { return path < o.path; }
};

// What a look at a directory tree found.
struct JournalFiles {
  std::vector<ListedFile> files;  // *.journal and *.journal~, in name order
  int error = 0;                  // errno when `dir` itself cannot be read
  // Directories below it that could not be read, with the errno: the files in them are
  // unknown, so they are named like files that cannot be read.
  std::vector<std::pair<std::string, int>> unreadable;
};
JournalFiles list_journal_files(const std::string& dir);

// The journal file in `dir` itself (not below it) that is the file (device, inode), if one is:
// where a listed file went when it was renamed.
std::optional<std::string> find_journal_file(const std::string& dir, uint64_t device,
                                             uint64_t inode);

// Raises the soft limit of open files (RLIMIT_NOFILE) to the hard one, as journalctl does: the
// soft limit is 1,024 on most systems, a receiver has a file per host. Returns the soft limit
// in force afterwards.
uint64_t raise_open_file_limit();

// How many more files this process may open now, `reserve` left free for everything else.
size_t open_files_left(size_t reserve);

}  // namespace rdma_eventd_fleet
