#include "open_listed.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>

namespace rdma_eventd_fleet {
namespace {

using rdma_eventd::internal::UniqueFd;

// A file renamed again while it was being looked for: given up after this many names.
constexpr int kNamesTried = 4;

// Whether the header of the file open as `fd` says that none of its entries is in the window.
bool outside(int fd, const JournalQuery& q) {
  if (!q.since_us && !q.until_us) return false;
  const std::optional<JournalHeader> h = read_journal_header(fd);
  if (!h) return false;  // sd-journal says what is wrong with it
  if (h->entries == 0) return true;
  return (q.since_us && static_cast<int64_t>(h->tail_realtime_us) < *q.since_us) ||
         (q.until_us && static_cast<int64_t>(h->head_realtime_us) > *q.until_us);
}

std::string directory_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

OpenedFile open_listed(const ListedFile& listed, const JournalQuery& query) {
  OpenedFile opened;
  ListedFile wanted = listed;
  for (int tried = 0; tried < kNamesTried; ++tried) {
    opened.path = wanted.path;
    // Non-blocking: a FIFO named like a journal file must not stop the reader.
    UniqueFd fd(::open(wanted.path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
    struct stat st {};
    if (!fd && errno != ENOENT) {
      opened.error = errno;
      return opened;
    }
    if (fd && ::fstat(fd.get(), &st) != 0) {
      opened.error = errno;
      return opened;
    }
    const bool same =
        fd && (wanted.inode == 0 || (static_cast<uint64_t>(st.st_dev) == wanted.device &&
                                     static_cast<uint64_t>(st.st_ino) == wanted.inode));
    if (same) {
      if (!S_ISREG(st.st_mode)) {
        opened.not_regular = true;
        return opened;
      }
      if (outside(fd.get(), query)) {
        opened.outside_window = true;
        return opened;
      }
      int e = 0;
      opened.file = JournalFile::open_fd(std::move(fd), query, &e);
      opened.error = opened.file ? 0 : e;
      return opened;
    }
    // Another file under the listed name: made after the listing, read as well.
    if (fd && tried == 0 && S_ISREG(st.st_mode)) {
      opened.replacement = ListedFile{wanted.path, static_cast<uint64_t>(st.st_dev),
                                      static_cast<uint64_t>(st.st_ino)};
    }
    const std::optional<std::string> moved =
        find_journal_file(directory_of(wanted.path), wanted.device, wanted.inode);
    if (!moved) {
      opened.deleted = true;
      return opened;
    }
    wanted.path = *moved;
  }
  opened.deleted = true;  // renamed faster than it could be followed
  return opened;
}

}  // namespace rdma_eventd_fleet
