// DIR/rdma-netlink.sock: a stand-in for the kernel's NETLINK_RDMA socket (docs/simulator.md,
// "RDMA netlink monitor"). A program connects (AF_UNIX, SOCK_SEQPACKET) where it would open a
// NETLINK_RDMA socket (rdma-eventd does so when RDMA_EVENTD_RDMA_NETLINK_SOCKET names this
// path) and exchanges exactly the kernel's bytes, one netlink recv per datagram. Joining
// RDMA_NL_GROUP_NOTIFY needs nothing: every notification goes to every connection.
//
// Answered: RDMA_NLDEV_CMD_SYS_GET. Requests the kernel has no handler for (an unknown client
// or command, MONITOR itself, SYS_GET as a dump, attributes strict parsing rejects): EINVAL, as
// rdma_nl_rcv_msg; commands the kernel has and the stand-in does not emulate: EOPNOTSUPP.
// Notifications follow the fabric's hot-plug (RDMA_REGISTER_EVENT and the NETDEV_ATTACH of
// every port with a netdev on a register, UNREGISTER once a removal completes, RENAME) unless
// the kernel it stands for has no monitor.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "event_loop.h"
#include "hotplug.h"
#include "netlink_standin.h"
#include "rdma_netlink_wire.h"

namespace rdmasim {

class RdmaNetlinkStandIn final : public NetlinkStandIn, public HotplugObserver {
 public:
  using Kernel = rdma_netlink_wire::Kernel;
  // Listens on `path`; throws std::exception with a message when it cannot.
  RdmaNetlinkStandIn(EventLoop& loop, std::string path, Kernel kernel);

  void ib_device_added(const DeviceModel& device, int32_t index) override;
  void ib_device_removed(const DeviceModel& device, int32_t index) override;
  void ib_device_renamed(const std::string& old_name, const DeviceModel& device,
                         int32_t index) override;

  // Besides the connections and requests (NetlinkStandIn).
  struct Stats {
    uint64_t errors = 0;         // requests answered with an error
    uint64_t notifications = 0;  // notifications made (each to every connection)
  };
  const Stats& stats() const { return stats_; }
  Kernel kernel() const { return kernel_; }

 private:
  void on_message(const Peer& c, std::span<const uint8_t> message) override;
  int answer(const Peer& c, std::span<const uint8_t> message);
  void notify(const std::vector<uint8_t>& message);

  Kernel kernel_;
  Stats stats_;
};

// "monitor", "rename-less", "none"; false for anything else.
bool parse_rdma_netlink_kernel(const std::string& text, rdma_netlink_wire::Kernel* kernel);
const char* rdma_netlink_kernel_name(rdma_netlink_wire::Kernel kernel);

}  // namespace rdmasim
