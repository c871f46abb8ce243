// Replacing a small file whole: the daemon's port health state, rdma-eventctl's metrics textfile.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <string>
#include <string_view>

#include "rdma_eventd/internal/unique_fd.h"

namespace rdma_eventd::internal {

struct AtomicWrite {
  // The temporary file: in the same directory as the file, so that rename() replaces it in one
  // step. Whatever is there is overwritten.
  std::string temp_path;
  mode_t mode = 0644;  // set with fchmod, whatever the umask
  // fsync the temporary file before the rename, so that after a crash of the host the file is
  // the old one or the new one whole, never an empty or partial new one. Not needed for readers
  // on the same boot: the rename alone makes them see the old file or the new one.
  bool sync = false;
};

// Writes `text` to `path` whole or not at all: to how.temp_path, then renamed over `path`.
// Returns 0, or the errno of the step that failed; then `path` is as it was and the temporary
// file is gone.
inline int write_file_atomically(const std::string& path, std::string_view text,
                                 const AtomicWrite& how) {
  UniqueFd fd(::open(how.temp_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, how.mode));
  if (!fd) return errno;
  int err = 0;
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd.get(), text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      err = errno;
      break;
    }
    done += static_cast<size_t>(n);
  }
  if (err == 0 && ::fchmod(fd.get(), how.mode) != 0) err = errno;
  if (err == 0 && how.sync && ::fsync(fd.get()) != 0) err = errno;
  // close() reports what a file system could not write back (NFS): checked, not left to ~UniqueFd.
  if (::close(fd.release()) != 0 && err == 0) err = errno;
  if (err == 0 && ::rename(how.temp_path.c_str(), path.c_str()) != 0) err = errno;
  if (err != 0) ::unlink(how.temp_path.c_str());
  return err;
}

}  // namespace rdma_eventd::internal
