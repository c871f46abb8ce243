// What the kernel stand-ins that a program reaches where it would open a netlink socket share
// (devlink_standin.h, rdma_netlink_standin.h): their connections (seqpacket_server.h), and each
// datagram a program sends taken apart into its messages as netlink_rcv_skb (and
// rdma_nl_rcv_skb) does, each counted and handed to the stand-in in turn.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>

#include "event_loop.h"
#include "netlink_wire.h"
#include "seqpacket_server.h"

namespace rdmasim {

class NetlinkStandIn {
 public:
  virtual ~NetlinkStandIn() = default;
  NetlinkStandIn(const NetlinkStandIn&) = delete;
  NetlinkStandIn& operator=(const NetlinkStandIn&) = delete;

  // Ends every connection, as if the kernel side went away (its readers see the end of the
  // stream); new connections are still accepted. Returns how many there were.
  size_t close_all() { return server_.close_all(); }
  // Closes connections that went away (after a dispatch round).
  void reap() { server_.reap(); }
  size_t open_connections() const { return server_.open_connections(); }
  uint64_t connections() const { return server_.accepted(); }  // accepted, ever
  uint64_t requests() const { return requests_; }              // messages received

 protected:
  using Peer = SeqpacketServer::Peer;
  // Listens on `path`; throws std::exception with a message when it cannot.
  NetlinkStandIn(EventLoop& loop, std::string path)
      : server_(loop, std::move(path), [this](const Peer& c, std::span<const uint8_t> datagram) {
          netlink_wire::for_each_message(datagram, [&](std::span<const uint8_t> message) {
            ++requests_;
            on_message(c, message);
          });
        }) {}

  // One message of a datagram from connection `c`.
  virtual void on_message(const Peer& c, std::span<const uint8_t> message) = 0;

  SeqpacketServer server_;

 private:
  uint64_t requests_ = 0;
};

}  // namespace rdmasim
