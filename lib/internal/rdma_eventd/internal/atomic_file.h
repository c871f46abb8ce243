// Replacing a small file whole: the daemon's port health state, rdma-eventctl's metrics textfile.
#pragma once

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <string>
#include <string_view>

#include "rdma_eventd/internal/unique_fd.h"

namespace rdma_eventd::internal {

struct AtomicWrite {
  mode_t mode = 0644;  // set with fchmod, whatever the umask
  // fsync the temporary file before the rename, so that after a crash of the host the file is
  // the old one or the new one whole, never an empty or partial new one. Not needed for readers
  // on the same boot: the rename alone makes them see the old file or the new one.
  bool sync = false;
};

// The temporary file's name for `path`: ".NAME.XXXXXX" in the same directory (so that rename()
// replaces the file in one step), the Xs made random by mkostemp. A leading dot and no ".prom"
// at the end: node_exporter's textfile collector never reads it.
inline std::string atomic_temp_template(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  return dir + "." + name + ".XXXXXX";
}

// Writes `text` to `path` whole or not at all: to a new temporary file beside it, then renamed
// over `path`. Returns 0, or the errno of the step that failed; then `path` is as it was and the
// temporary file is gone.
//
// The temporary file is created with mkostemp (O_CREAT|O_EXCL, mode 0600, a name nobody can
// guess): in a directory that another user can write (a textfile directory), whatever they
// planted there (a symlink to a file of ours, a file of theirs) is never opened, followed or
// truncated; at worst a name is taken and mkostemp tries another. O_TMPFILE with linkat() would
// need a name as well to replace an existing file (linkat does not replace), and not every file
// system has O_TMPFILE.
inline int write_file_atomically(const std::string& path, std::string_view text,
                                 const AtomicWrite& how) {
  std::string temp = atomic_temp_template(path);
  UniqueFd fd(::mkostemp(temp.data(), O_CLOEXEC));
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
  if (err == 0 && ::rename(temp.c_str(), path.c_str()) != 0) err = errno;
  if (err != 0) ::unlink(temp.c_str());
  return err;
}

}  // namespace rdma_eventd::internal
