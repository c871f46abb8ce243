// The RDMA netlink monitor's messages (NETLINK_RDMA, docs/architecture.md, "Device set and
// hot-plug"): pure, unit-tested and fuzzed without a socket. From Linux 6.12 the kernel tells
// the members of its notify group when an RDMA device registers or unregisters and when a
// port's netdev attaches or detaches; from 6.13 also renames (rdma_nl_notify_event() in
// drivers/infiniband/core/nldev.c). Whether a kernel has the monitor shows in its answer to
// the system query: the monitor-mode attribute is there from 6.12 on.
//
// The kernel's numbers are in rdma_eventd/internal/rdma_netlink_uapi.h, shared with rdma-sim's
// stand-in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "rdma_eventd/internal/rdma_netlink_uapi.h"

namespace rdma_eventd::daemon::rdma_netlink {

using namespace internal::rdma_netlink_uapi;

inline constexpr uint16_t kClientNldev = kNldevClient;  // RDMA_NL_NLDEV
inline constexpr uint16_t kSysGetType = nldev_type(kCmdSysGet);
inline constexpr uint16_t kMonitorType = nldev_type(kCmdMonitor);

// "register", "unregister", "netdev_attach", "netdev_detach", "rename", "netdev_rename", or
// "event N".
std::string event_name(uint8_t type);

// Longest device name taken (IB_DEVICE_NAME_MAX is 64 with its NUL) and netdev name (IFNAMSIZ).
inline constexpr size_t kMaxDeviceName = 63;
inline constexpr size_t kMaxNetdevName = 15;

// One monitor message.
struct Notice {
  uint8_t event = 0;
  uint32_t device_index = 0;
  std::string device;         // absent in 6.12's netdev messages before they named it: ""
  int64_t port = -1;          // netdev messages
  int64_t netdev_index = -1;  // netdev messages while the port has one
  std::string netdev;
  friend bool operator==(const Notice&, const Notice&) = default;
};
// "register mlx5_0 (index 3)", "netdev_attach rxe0 port 1 eth0 (ifindex 4)": for the log.
std::string describe(const Notice& n);

enum class MessageKind : uint8_t {
  kSystem,     // the answer to the system query: monitor_mode says whether there is a monitor
  kMonitor,    // a monitor message: notice
  kDone,       // NLMSG_DONE
  kError,      // NLMSG_ERROR: error is the errno (positive), 0 for an acknowledgement
  kOverrun,    // NLMSG_OVERRUN
  kIgnored,    // another type
  kMalformed,  // bytes that are not what their type says: `problem` tells what
};

struct Message {
  MessageKind kind = MessageKind::kIgnored;
  uint16_t type = 0;
  uint16_t flags = 0;
  uint32_t seq = 0;
  uint32_t pid = 0;  // 0 for the kernel's notifications
  bool monitor_mode = false;
  Notice notice;
  int error = 0;
  std::string problem;
};

// Decodes every message of `datagram`, appending to `out`.
void decode(std::span<const uint8_t> datagram, std::vector<Message>& out);

// The system query (RDMA_NLDEV_CMD_SYS_GET).
std::vector<uint8_t> system_request(uint32_t seq);

}  // namespace rdma_eventd::daemon::rdma_netlink
