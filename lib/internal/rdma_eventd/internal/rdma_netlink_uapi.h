// The numbers of the RDMA netlink monitor (NETLINK_RDMA): the kernel's uapi,
// include/uapi/rdma/rdma_netlink.h of Linux 6.13 (the installed headers may be older: Debian 12's
// predates the monitor). What the daemon's decoder (daemon/core/rdma_netlink_decode.h) reads and
// rdma-sim's stand-in (sim/rdma-sim/rdma_netlink_wire.h) writes.
//
// NETLINK_RDMA messages carry their attributes right after the netlink header (no generic
// netlink header); the type is RDMA_NL_GET_TYPE(client, operation).
#pragma once

#include <cstdint>

namespace rdma_eventd::internal::rdma_netlink_uapi {

inline constexpr int kProtocol = 20;         // NETLINK_RDMA
inline constexpr uint32_t kNotifyGroup = 4;  // RDMA_NL_GROUP_NOTIFY
inline constexpr uint16_t kNldevClient = 5;  // RDMA_NL_NLDEV
inline constexpr uint16_t kNumClients = 6;   // RDMA_NL_NUM_CLIENTS
inline constexpr uint16_t kCmdSysGet = 6;    // RDMA_NLDEV_CMD_SYS_GET
inline constexpr uint16_t kCmdMonitor = 28;  // RDMA_NLDEV_CMD_MONITOR

constexpr uint16_t nldev_type(uint16_t op) {
  return static_cast<uint16_t>((kNldevClient << 10) + op);  // RDMA_NL_GET_TYPE
}

// enum rdma_nldev_attr
inline constexpr uint16_t kAttrDevIndex = 1;         // u32
inline constexpr uint16_t kAttrDevName = 2;          // string
inline constexpr uint16_t kAttrPortIndex = 3;        // u32
inline constexpr uint16_t kAttrNdevIndex = 50;       // u32
inline constexpr uint16_t kAttrNdevName = 51;        // string
inline constexpr uint16_t kAttrNetnsMode = 66;       // u8, RDMA_NLDEV_SYS_ATTR_NETNS_MODE
inline constexpr uint16_t kAttrCopyOnFork = 93;      // u8, RDMA_NLDEV_SYS_ATTR_COPY_ON_FORK
inline constexpr uint16_t kAttrPrivilegedQkey = 96;  // u8, ..._PRIVILEGED_QKEY_MODE (6.7)
inline constexpr uint16_t kAttrEventType = 102;      // u8, RDMA_NLDEV_ATTR_EVENT_TYPE
inline constexpr uint16_t kAttrMonitorMode = 103;    // u8, in the system query's answer (6.12)

// enum rdma_nl_notify_event_type; numbers a newer kernel adds are kept as they come.
enum class EventType : uint8_t {
  kRegister = 0,
  kUnregister = 1,
  kNetdevAttach = 2,
  kNetdevDetach = 3,
  kRename = 4,        // Linux 6.13
  kNetdevRename = 5,  // Linux 6.14
};

}  // namespace rdma_eventd::internal::rdma_netlink_uapi
