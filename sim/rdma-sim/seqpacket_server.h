// The connections of a kernel stand-in that programs reach over AF_UNIX SOCK_SEQPACKET where
// they would open a netlink socket (devlink_standin.h, rdma_netlink_standin.h): listening,
// accepting, the port id netlink would bind each socket to, and a queue per connection for the
// datagrams the socket does not take yet (no bound, no overrun, unlike a netlink socket's
// receive buffer). What the datagrams mean is the stand-in's business.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "event_loop.h"
#include "unique_fd.h"

namespace rdmasim {

class SeqpacketServer {
 public:
  // A connection as the stand-in sees it: the port id its replies carry.
  struct Peer {
    uint64_t id = 0;
    uint32_t port_id = 0;
  };
  // Each datagram a program sends, in order.
  using OnDatagram = std::function<void(const Peer&, std::span<const uint8_t>)>;

  // Listens on `path` (any user may connect, as any user may open a netlink socket); throws
  // std::exception with a message when it cannot.
  SeqpacketServer(EventLoop& loop, std::string path, OnDatagram on_datagram);
  ~SeqpacketServer();
  SeqpacketServer(const SeqpacketServer&) = delete;
  SeqpacketServer& operator=(const SeqpacketServer&) = delete;

  // Queues one datagram to one connection (gone already: dropped).
  void send(const Peer& to, std::vector<uint8_t> datagram);
  // Queues the same datagram to every open connection.
  void send_all(const std::vector<uint8_t>& datagram);
  // Ends every connection, as if the kernel side went away (its readers see the end of the
  // stream); new connections are still accepted. Returns how many there were.
  size_t close_all();
  // Forgets connections that went away (after a dispatch round).
  void reap();

  uint64_t accepted() const { return accepted_; }
  size_t open_connections() const { return connections_.size(); }

 private:
  struct Connection {
    UniqueFd fd;
    IoWatch watch;
    Peer peer;
    std::deque<std::vector<uint8_t>> out;  // datagrams not yet taken by the socket
    bool closed = false;
  };
  void accept_connections();
  void on_event(uint64_t id, uint32_t events);
  void flush(Connection& c);
  void close(Connection& c);
  uint32_t port_id_for(int fd);

  EventLoop& loop_;
  std::string path_;
  OnDatagram on_datagram_;
  UniqueFd listen_fd_;
  IoWatch listen_watch_;
  std::map<uint64_t, std::unique_ptr<Connection>> connections_;
  uint32_t next_port_id_ = 0xfffff000;
  uint64_t next_id_ = 1;
  uint64_t accepted_ = 0;
};

}  // namespace rdmasim
