#include "journal_files.h"

#include <dirent.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <string_view>

namespace rdma_eventd_fleet {

namespace {

bool is_journal_file(std::string_view name) {
  return name.ends_with(".journal") || name.ends_with(".journal~");
}

ListedFile listed(const std::string& path) {
  ListedFile f{path};
  struct stat st {};
  if (stat(path.c_str(), &st) == 0) {
    f.device = st.st_dev;
    f.inode = st.st_ino;
  }
  return f;
}

// Adds the journal files under `dir` (a readable directory, open as `d`), depth first.
void walk(const std::string& dir, DIR* d, JournalFiles& found) {
  std::vector<std::string> below;
  while (const dirent* e = readdir(d)) {
    const std::string_view name(e->d_name);
    if (name == "." || name == "..") continue;
    const std::string path = dir + "/" + std::string(name);
    bool directory = e->d_type == DT_DIR;
    if (e->d_type == DT_UNKNOWN) {
      struct stat st {};
      directory = lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
    }
    if (directory) {
      below.push_back(path);
    } else if (is_journal_file(name)) {
      found.files.push_back(listed(path));
    }
  }
  for (const auto& sub : below) {
    DIR* s = opendir(sub.c_str());
    if (!s) {
      found.unreadable.emplace_back(sub, errno);
      continue;
    }
    walk(sub, s, found);
    closedir(s);
  }
}

}  // namespace

JournalFiles list_journal_files(const std::string& dir) {
  JournalFiles found;
  DIR* d = opendir(dir.c_str());
  if (!d) {
    found.error = errno;
    return found;
  }
  walk(dir.ends_with('/') && dir.size() > 1 ? dir.substr(0, dir.size() - 1) : dir, d, found);
  closedir(d);
  std::sort(found.files.begin(), found.files.end());
  return found;
}

std::optional<std::string> find_journal_file(const std::string& dir, uint64_t device,
                                             uint64_t inode) {
  DIR* d = opendir(dir.c_str());
  if (!d) return std::nullopt;
  std::optional<std::string> found;
  while (const dirent* e = readdir(d)) {
    if (!is_journal_file(e->d_name)) continue;
    struct stat st {};
    if (fstatat(dirfd(d), e->d_name, &st, 0) == 0 && st.st_dev == device && st.st_ino == inode) {
      found = dir + "/" + e->d_name;
      break;
    }
  }
  closedir(d);
  return found;
}

uint64_t raise_open_file_limit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 0;
  if (limit.rlim_cur < limit.rlim_max) {
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) limit = raised;
  }
  return limit.rlim_cur;
}

size_t open_files_left(size_t reserve) {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 1;
  // The descriptors open now (stdin, stdout, stderr, a page being written...), counted in
  // /proc/self/fd (the directory's own descriptor, open while counting, included: one more of
  // the reserve).
  size_t open = 0;
  if (DIR* d = opendir("/proc/self/fd")) {
    while (const dirent* e = readdir(d))
      open += e->d_name[0] != '.';
    closedir(d);
  } else {
    open = 3;
  }
  const uint64_t cap = limit.rlim_cur == RLIM_INFINITY ? UINT32_MAX : limit.rlim_cur;
  return cap > open + reserve ? static_cast<size_t>(cap - open - reserve) : 0;
}

}  // namespace rdma_eventd_fleet
