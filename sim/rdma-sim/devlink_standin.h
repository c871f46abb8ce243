// DIR/devlink.sock: a stand-in for the kernel's generic netlink, for the devlink family
// (docs/simulator.md, "devlink health") and the ethtool family's PHY statistics
// (ethtool_standin.h; "RoCE PHY statistics"). A program connects (AF_UNIX, SOCK_SEQPACKET) where it
// would open a NETLINK_GENERIC socket (rdma-eventd does so when RDMA_EVENTD_DEVLINK_SOCKET
// names this path) and exchanges exactly the kernel's bytes: each datagram it sends is what it
// would send to the kernel, each datagram it receives is what one recv on a netlink socket
// would return. Joining the "config" group needs nothing: every notification goes to every
// connection.
//
// Answered: CTRL_CMD_GETFAMILY (by name or id; any family but devlink and ethtool: ENOENT),
// DEVLINK_CMD_HEALTH_REPORTER_GET and DEVLINK_CMD_PORT_GET as dumps, ETHTOOL_MSG_FEC_GET and
// ETHTOOL_MSG_STATS_GET.
// Other devlink and ethtool commands: EOPNOTSUPP; other families: ENOENT. Notifications are queued
// per connection without bound (no overrun, unlike a netlink socket's receive buffer).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "devlink_health.h"
#include "ethtool_standin.h"
#include "event_loop.h"
#include "netlink_standin.h"

namespace rdmasim {

class DevlinkStandIn final : public NetlinkStandIn {
 public:
  // Listens on `path`; throws std::exception with a message when it cannot.
  DevlinkStandIn(EventLoop& loop, std::string path, const DevlinkHealth& health, bool pad_u64,
                 EthtoolFamily& ethtool);

  // A notification to the config group: to every connection.
  void notify(const DevlinkFill& f);
  void notify(const DevlinkObject& o);

  // Besides the connections and requests (NetlinkStandIn).
  struct Stats {
    uint64_t dumps = 0;          // reporter dumps answered
    uint64_t port_dumps = 0;     // port dumps answered
    uint64_t notifications = 0;  // notifications made (each to every connection)
  };
  const Stats& stats() const { return stats_; }

 private:
  void on_message(const Peer& c, std::span<const uint8_t> message) override;
  void dump(const Peer& c, uint32_t seq);
  void port_dump(const Peer& c, uint32_t seq);
  // netlink_dump: the messages in parts as full as they get, then NLMSG_DONE on its own.
  void send_dump(const Peer& c, uint32_t seq, const std::vector<std::vector<uint8_t>>& messages);

  const DevlinkHealth& health_;
  bool pad_u64_;
  EthtoolFamily& ethtool_;
  Stats stats_;
};

}  // namespace rdmasim
