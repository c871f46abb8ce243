// Reading a small file whole: a sysfs or /proc attribute, the configuration file.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <string>

#include "rdma_eventd/internal/unique_fd.h"

namespace rdma_eventd::internal {

// What read_small_file found: the whole content, or why there is none.
struct SmallFile {
  std::string text;        // empty unless ok()
  int error = 0;           // the errno of the open or read that failed (EISDIR: a directory)
  bool too_large = false;  // more than the limit
  bool ok() const { return error == 0 && !too_large; }
};

// Reads all of `path` if it holds at most `max_bytes`. A larger file is refused rather than cut
// short: a truncated file would be read as something it is not.
inline SmallFile read_small_file(const std::string& path, size_t max_bytes) {
  SmallFile f;
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) {
    f.error = errno;
    return f;
  }
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      f.error = errno;
      f.text.clear();
      return f;
    }
    if (n == 0) return f;
    if (f.text.size() + static_cast<size_t>(n) > max_bytes) {
      f.too_large = true;
      f.text.clear();
      return f;
    }
    f.text.append(buf, static_cast<size_t>(n));
  }
}

}  // namespace rdma_eventd::internal
