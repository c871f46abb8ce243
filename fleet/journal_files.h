// The journal files of a directory, and how many of them this process may hold open at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace rdma_eventd_fleet {

// What a look at a directory tree found.
struct JournalFiles {
  std::vector<std::string> paths;  // *.journal and *.journal~, in name order
  int error = 0;                   // errno when `dir` itself cannot be read
  // Directories below it that could not be read, with the errno: the files in them are
  // unknown, so they are named like files that cannot be read.
  std::vector<std::pair<std::string, int>> unreadable;
};
JournalFiles list_journal_files(const std::string& dir);

// Raises the soft limit of open files (RLIMIT_NOFILE) to the hard one, as journalctl does: the
// soft limit is 1,024 on most systems, a receiver has a file per host. Returns the soft limit
// in force afterwards.
uint64_t raise_open_file_limit();

// How many more files this process may open now, `reserve` left free for everything else.
size_t open_files_left(size_t reserve);

}  // namespace rdma_eventd_fleet
