// The subscriber socket on disk: a listening Unix stream socket at a path.
//
// Opening it creates the directory when needed, refuses a path where a live daemon listens or
// that is not a socket, replaces a stale socket file, and applies the mode and group. Closing it
// removes the path, but only while the path is still this socket (a second daemon that took
// the path over keeps it).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace rdma_eventd::daemon {

class UnixListener {
 public:
  // Throws std::runtime_error with a message that names the path and what is wrong.
  UnixListener(const std::string& path, uint32_t mode, const std::string& group);
  ~UnixListener();
  UnixListener(const UnixListener&) = delete;
  UnixListener& operator=(const UnixListener&) = delete;

  int fd() const { return fd_; }
  const std::string& path() const { return path_; }

 private:
  int fd_ = -1;
  std::string path_;
  dev_t dev_ = 0;
  ino_t ino_ = 0;
};

// Raises RLIMIT_NOFILE's soft limit towards `wanted` (never past the hard limit) and returns
// the soft limit in force afterwards.
uint64_t raise_fd_limit(uint64_t wanted);

}  // namespace rdma_eventd::daemon
