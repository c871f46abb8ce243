// The subscriber socket on disk: a listening Unix stream socket at a path.
//
// Opening it creates the directory when needed and checks that no other user could swap
// anything on the way to it (socket_path.h); refuses a symbolic link, a path where a live
// daemon listens, that is not a socket or that is another user's; replaces a stale socket
// file; and creates the socket with its mode and group without touching the path again by
// name. Closing it
// removes the path, but only while the path is still this socket (a second daemon that took
// the path over keeps it). Under socket activation the service manager opens it instead and
// the listener adopts it.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "rdma_eventd/internal/unique_fd.h"

namespace rdma_eventd::daemon {

class UnixListener {
 public:
  // Throws std::runtime_error with a message that names the path and what is wrong.
  UnixListener(const std::string& path, uint32_t mode, const std::string& group);
  // Socket activation: adopts a listening Unix stream socket passed by the service manager,
  // made non-blocking and close-on-exec. Its path, mode and group are the service manager's
  // (the .socket unit's): the path is never removed here. Throws std::runtime_error when the
  // descriptor is not such a socket.
  explicit UnixListener(internal::UniqueFd passed);
  ~UnixListener();
  UnixListener(const UnixListener&) = delete;
  UnixListener& operator=(const UnixListener&) = delete;

  int fd() const { return fd_.get(); }
  const std::string& path() const { return path_; }
  bool passed() const { return passed_; }  // adopted from the service manager

 private:
  internal::UniqueFd fd_;
  std::string path_;
  dev_t dev_ = 0;
  ino_t ino_ = 0;
  bool passed_ = false;  // adopted from the service manager: close it, leave the path alone
};

// Raises RLIMIT_NOFILE's soft limit towards `wanted` (never past the hard limit) and returns
// the soft limit in force afterwards.
uint64_t raise_fd_limit(uint64_t wanted);

}  // namespace rdma_eventd::daemon
