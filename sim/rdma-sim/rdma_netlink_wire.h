// The NETLINK_RDMA bytes of the RDMA netlink stand-in (docs/simulator.md, "RDMA netlink
// monitor"), as drivers/infiniband/core/nldev.c builds them: the RDMA_NLDEV_CMD_SYS_GET answer
// (nldev_sys_get_doit) and the monitor's notifications (rdma_nl_notify_event). NETLINK_RDMA has
// no generic-netlink header: the attributes follow the netlink header. Pure.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "rdma_eventd/internal/rdma_netlink_uapi.h"

namespace rdmasim::rdma_netlink_wire {

// Which kernel the stand-in answers as.
enum class Kernel {
  kMonitor,     // 6.13 and later: the monitor, with RENAME
  kRenameLess,  // 6.12: the monitor, no RENAME
  kNone,        // 6.1 (Debian 12): no monitor
};

// The kernel's numbers, shared with the daemon's decoder.
using namespace rdma_eventd::internal::rdma_netlink_uapi;
using Event = EventType;

// RDMA_NLDEV_NUM_OPS and RDMA_NLDEV_ATTR_MAX - 1 of the kernel: beyond them a request is EINVAL.
uint16_t nldev_ops(Kernel k);
uint16_t max_attr(Kernel k);

// nlmsg_parse with NL_VALIDATE_STRICT, as far as the stand-in checks it: the attributes after
// the header fit exactly, none of type 0 or beyond max_attr. False: EINVAL.
bool attributes_valid(std::span<const uint8_t> message, Kernel k);

// Appends one message to `out`.
// nldev_sys_get_doit: NETNS_MODE (shared: 1), PRIVILEGED_QKEY_MODE (0; 6.7 on), MONITOR_MODE (1;
// 6.12 on), COPY_ON_FORK (1).
void put_sys(std::vector<uint8_t>& out, Kernel k, uint32_t pid, uint32_t seq);
// REGISTER, UNREGISTER, RENAME: fill_nldev_handle, then the event type.
void put_device_event(std::vector<uint8_t>& out, Event e, uint32_t index, const std::string& name);
// NETDEV_ATTACH, NETDEV_DETACH: fill_mon_netdev_association (the netdev's attributes when it
// has one: ndev_name not empty), then the event type.
void put_netdev_event(std::vector<uint8_t>& out, Event e, uint32_t index, const std::string& name,
                      uint32_t port, uint32_t ndev_index, const std::string& ndev_name);

}  // namespace rdmasim::rdma_netlink_wire
