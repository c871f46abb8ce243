#include "netlink/netlink_socket.h"

#include <linux/netlink.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cerrno>
#include <cstring>

namespace rdma_eventd::daemon::netlink {

int NetlinkSocket::open(int protocol, const std::string& stand_in) {
  stand_in_ = !stand_in.empty();
  if (stand_in_) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (stand_in.size() >= sizeof addr.sun_path) return ENAMETOOLONG;
    stand_in.copy(addr.sun_path, stand_in.size());
    const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return errno;
    fd_.reset(fd);
    // A local connect either completes or fails at once (EAGAIN: its backlog is full).
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      const int err = errno;
      fd_.reset();
      return err;
    }
    return 0;
  }
  const int fd = ::socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, protocol);
  if (fd < 0) return errno;
  fd_.reset(fd);
  // Best effort: the default (about 200 KiB) holds a thousand notifications already.
  const int size = kReceiveBuffer;
  (void)::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
  // Only the kernel's errors matter; extended acks would only make the answers longer.
  sockaddr_nl addr{};
  addr.nl_family = AF_NETLINK;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    const int err = errno;
    fd_.reset();
    return err;
  }
  socklen_t len = sizeof addr;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    const int err = errno;
    fd_.reset();
    return err;
  }
  port_id_ = addr.nl_pid;
  return 0;
}

int NetlinkSocket::join(uint32_t group) {
  if (stand_in_) return 0;
  if (::setsockopt(fd_.get(), SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &group, sizeof group) != 0)
    return errno;
  return 0;
}

int NetlinkSocket::send(std::span<const uint8_t> message) {
  if (stand_in_) {
    const ssize_t n = ::send(fd_.get(), message.data(), message.size(), MSG_NOSIGNAL);
    if (n < 0) return errno;
    return static_cast<size_t>(n) == message.size() ? 0 : EMSGSIZE;
  }
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  const ssize_t n = ::sendto(fd_.get(), message.data(), message.size(), 0,
                             reinterpret_cast<sockaddr*>(&kernel), sizeof kernel);
  if (n < 0) return errno;
  return static_cast<size_t>(n) == message.size() ? 0 : EMSGSIZE;
}

bool NetlinkSocket::readable() const {
  pollfd p{fd_.get(), POLLIN, 0};
  return ::poll(&p, 1, 0) == 1;
}

int NetlinkSocket::receive(std::span<uint8_t> buf, size_t* size, bool* from_kernel) {
  *size = 0;
  *from_kernel = false;
  // Room for any family's address: a Unix socket's (a stand-in's) is longer than netlink's, and
  // the kernel says its whole length even when it copied less.
  sockaddr_storage from{};
  iovec iov{buf.data(), buf.size()};
  msghdr msg{};
  msg.msg_name = stand_in_ ? nullptr : &from;
  msg.msg_namelen = stand_in_ ? 0 : sizeof from;
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  const ssize_t n = ::recvmsg(fd_.get(), &msg, MSG_DONTWAIT);
  if (n < 0) return errno;
  if (msg.msg_flags & MSG_TRUNC) return EMSGSIZE;
  if (n == 0 && stand_in_) return ECONNRESET;  // the stand-in went away
  *size = static_cast<size_t>(n);
  sockaddr_nl sender{};
  std::memcpy(&sender, &from, sizeof sender);
  *from_kernel = stand_in_ || sender.nl_pid == 0;
  return 0;
}

}  // namespace rdma_eventd::daemon::netlink
