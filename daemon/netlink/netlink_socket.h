// A netlink socket (NETLINK_GENERIC for devlink, NETLINK_RDMA for the RDMA monitor): the only
// code that knows netlink sockets. Non-blocking; every call returns 0 or a positive errno, so
// the caller decides what a failure means (docs/health.md, "devlink health"; docs/architecture
// .md, "hot-plug": a kernel without the family, a container without access: one log line, and
// the daemon goes on).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "rdma_eventd/internal/unique_fd.h"

namespace rdma_eventd::daemon::netlink {

class NetlinkSocket {
 public:
  // Receive buffer asked for: room for a burst of notifications while the loop is busy
  // elsewhere (each is about 200 bytes; an overrun is seen, as ENOBUFS, and recovered from).
  static constexpr int kReceiveBuffer = 1 << 20;

  NetlinkSocket() = default;
  // socket(AF_NETLINK, `protocol`), bind (the kernel picks the port id). With `stand_in`, a
  // seqpacket socket at that path instead, which answers and notifies with the kernel's
  // messages (rdma-sim): joining a group is then nothing (it sends its notifications to every
  // connection), and what it sends is taken as the kernel's.
  int open(int protocol, const std::string& stand_in = {});
  int fd() const { return fd_.get(); }
  uint32_t port_id() const { return port_id_; }
  int join(uint32_t group);  // NETLINK_ADD_MEMBERSHIP
  int send(std::span<const uint8_t> message);
  // One datagram into `buf`; *size its length (0 and EAGAIN when none waits). *from_kernel is
  // whether the kernel sent it (sender port id 0): anything else is not the kernel's word.
  // A datagram longer than `buf` is MSG_TRUNC: EMSGSIZE, and the datagram is gone.
  int receive(std::span<uint8_t> buf, size_t* size, bool* from_kernel);
  // Whether a datagram (or an error) waits to be read now.
  bool readable() const;
  void close() { fd_.reset(); }

 private:
  internal::UniqueFd fd_;
  uint32_t port_id_ = 0;
  bool stand_in_ = false;
};

}  // namespace rdma_eventd::daemon::netlink
