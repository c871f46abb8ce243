#include "temp_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace rdma_eventd_fleet {

int make_temporary_file(std::string* dir, std::string* error) {
  const char* tmpdir = std::getenv("TMPDIR");
  *dir = tmpdir && *tmpdir ? tmpdir : "/var/tmp";
  int fd = ::open(dir->c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR)) {
    // A file system without O_TMPFILE: a named file, unlinked at once.
    std::string name = *dir + "/rdma-eventctl-XXXXXX";
    fd = ::mkostemp(name.data(), O_CLOEXEC);
    if (fd >= 0) ::unlink(name.c_str());
  }
  if (fd < 0) *error = "cannot make a temporary file in " + *dir + ": " + std::strerror(errno);
  return fd;
}

}  // namespace rdma_eventd_fleet
