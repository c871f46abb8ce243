// A client of one of the simulator's kernel stand-ins (DIR/devlink.sock, DIR/rdma-netlink.sock),
// as a program that speaks netlink to the kernel: one seqpacket datagram per send and receive.
#pragma once

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "rdma_eventd/internal/unique_fd.h"

namespace simtest {

class NetlinkClient {
 public:
  explicit NetlinkClient(const std::string& path) {
    fd_.reset(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
    if (!fd_ || ::connect(fd_.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
      throw std::runtime_error("cannot connect to " + path + ": " + std::strerror(errno));
  }
  void send(std::span<const uint8_t> bytes) {
    if (::send(fd_.get(), bytes.data(), bytes.size(), MSG_NOSIGNAL) !=
        static_cast<ssize_t>(bytes.size()))
      throw std::runtime_error(std::string("send: ") + std::strerror(errno));
  }
  // The next datagram, or nothing within `timeout_ms`.
  std::optional<std::vector<uint8_t>> receive(int timeout_ms = 10000) {
    pollfd p{fd_.get(), POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) != 1) return std::nullopt;
    std::vector<uint8_t> buf(64 * 1024);
    const ssize_t n = ::recv(fd_.get(), buf.data(), buf.size(), 0);
    if (n < 0) throw std::runtime_error(std::string("recv: ") + std::strerror(errno));
    buf.resize(static_cast<size_t>(n));
    return buf;
  }
  std::vector<uint8_t> require(int timeout_ms = 10000) {
    auto d = receive(timeout_ms);
    if (!d) throw std::runtime_error("no datagram from the stand-in");
    return *d;
  }
  int fd() const { return fd_.get(); }

 private:
  rdma_eventd::internal::UniqueFd fd_;
};

}  // namespace simtest
