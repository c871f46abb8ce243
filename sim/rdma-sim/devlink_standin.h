// DIR/devlink.sock: a stand-in for the kernel's generic netlink, for the devlink family only
// (docs/simulator.md, "devlink health"). A program connects (AF_UNIX, SOCK_SEQPACKET) where it
// would open a NETLINK_GENERIC socket (rdma-eventd does so when RDMA_EVENTD_DEVLINK_SOCKET
// names this path) and exchanges exactly the kernel's bytes: each datagram it sends is what it
// would send to the kernel, each datagram it receives is what one recv on a netlink socket
// would return. Joining the "config" group needs nothing: every notification goes to every
// connection.
//
// Answered: CTRL_CMD_GETFAMILY (by name or id; any family but devlink: ENOENT), and
// DEVLINK_CMD_HEALTH_REPORTER_GET as a dump. Other devlink commands: EOPNOTSUPP; other
// families: ENOENT. Notifications are queued per connection without bound (no overrun, unlike
// a netlink socket's receive buffer).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "devlink_health.h"
#include "event_loop.h"
#include "unique_fd.h"

namespace rdmasim {

class DevlinkStandIn {
 public:
  // Listens on `path`; throws std::exception with a message when it cannot.
  DevlinkStandIn(EventLoop& loop, std::string path, const DevlinkHealth& health, bool pad_u64);
  ~DevlinkStandIn();
  DevlinkStandIn(const DevlinkStandIn&) = delete;
  DevlinkStandIn& operator=(const DevlinkStandIn&) = delete;

  // A notification to the config group: to every connection.
  void notify(const DevlinkFill& f);
  // Ends every connection, as if the kernel side went away (its readers see the end of the
  // stream); new connections are still accepted. Returns how many there were.
  size_t close_all();
  // Closes connections that went away (after a dispatch round).
  void reap();

  struct Stats {
    uint64_t connections = 0;    // accepted, ever
    uint64_t requests = 0;       // messages received
    uint64_t dumps = 0;          // reporter dumps answered
    uint64_t notifications = 0;  // notifications made (each to every connection)
  };
  const Stats& stats() const { return stats_; }
  size_t open_connections() const { return connections_.size(); }

 private:
  struct Connection {
    UniqueFd fd;
    IoWatch watch;
    uint32_t port_id = 0;
    std::deque<std::vector<uint8_t>> out;  // datagrams not yet taken by the socket
    bool closed = false;
  };
  void accept_connections();
  void on_event(uint64_t id, uint32_t events);
  void on_datagram(Connection& c, std::span<const uint8_t> datagram);
  void on_message(Connection& c, std::span<const uint8_t> message);
  void dump(Connection& c, uint32_t seq);
  void queue(Connection& c, std::vector<uint8_t> datagram);
  void flush(Connection& c);
  uint32_t port_id_for(int fd);

  EventLoop& loop_;
  std::string path_;
  const DevlinkHealth& health_;
  bool pad_u64_;
  UniqueFd listen_fd_;
  IoWatch listen_watch_;
  std::map<uint64_t, std::unique_ptr<Connection>> connections_;
  std::vector<uint32_t> used_port_ids() const;
  uint32_t next_port_id_ = 0xfffff000;
  uint64_t next_id_ = 1;
  Stats stats_;
};

}  // namespace rdmasim
