#include "systemd/journal_socket.h"

#include <sys/socket.h>
#include <sys/un.h>

#include <cerrno>
#include <cstring>

namespace rdma_eventd::daemon {

int JournalSocket::connect() {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path_.size() >= sizeof addr.sun_path) return -ENAMETOOLONG;
  std::memcpy(addr.sun_path, path_.data(), path_.size());
  internal::UniqueFd fd(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!fd) return -errno;
  const int sndbuf = kSendBuffer;
  (void)::setsockopt(fd.get(), SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) < 0) return -errno;
  fd_ = std::move(fd);
  return 0;
}

int JournalSocket::send(std::string_view datagram) {
  // Twice at most: a connection to a journald that has since restarted fails once
  // (ECONNREFUSED, then ENOTCONN) and is made again.
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (!fd_) {
      if (const int r = connect(); r < 0) return r;
    }
    ssize_t n;
    do {
      n = ::send(fd_.get(), datagram.data(), datagram.size(), MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR);
    if (n >= 0) return 0;
    const int err = errno;
    if (err != ECONNREFUSED && err != ENOTCONN && err != ECONNRESET) return -err;
    fd_.reset();
  }
  return -ECONNREFUSED;
}

}  // namespace rdma_eventd::daemon
