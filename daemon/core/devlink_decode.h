// The devlink generic-netlink messages the daemon reads and sends (docs/health.md, "devlink
// health"): pure, so every byte the kernel (or anything else) hands over is checked here and
// unit-tested and fuzzed without a socket. Layouts and numbers are the kernel's uapi
// (<linux/netlink.h>, <linux/genetlink.h>, <linux/devlink.h>); what the attributes mean is in
// Linux's net/devlink (health.c: devlink_nl_health_reporter_fill).
//
// A datagram holds one or more netlink messages. A message whose length does not fit ends the
// datagram (the rest cannot be framed) and is reported as malformed; an attribute whose length
// does not fit ends its message, as malformed. Unknown message types, commands and attributes
// are skipped: newer kernels add them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace rdma_eventd::daemon::devlink {

inline constexpr std::string_view kFamilyName = "devlink";
inline constexpr std::string_view kConfigGroupName = "config";

// A reporter's state as the kernel numbers it: 0 healthy, 1 error (DEVLINK_HEALTH_REPORTER_
// STATE_*; in include/net/devlink.h, not in the uapi header). Other numbers are kept as they are.
inline constexpr int kStateHealthy = 0;
inline constexpr int kStateError = 1;

// Longest name or handle part taken; longer ones make the message malformed (the kernel's are
// at most a few dozen bytes: a bus name, a device name, a reporter name). Names with a '/',
// whitespace or a control character are malformed too: the kernel's never have one.
inline constexpr size_t kMaxNameLength = 128;

struct Family {
  uint16_t id = 0;
  uint32_t config_group = 0;  // 0: the family has no "config" group
};

// One health reporter, as a dump reply (DEVLINK_CMD_HEALTH_REPORTER_GET) or a notification
// (DEVLINK_CMD_HEALTH_REPORTER_RECOVER, sent on every report and every recovery) carries it.
struct Reporter {
  std::string bus;          // DEVLINK_ATTR_BUS_NAME: "pci", "auxiliary", "netdevsim"
  std::string device;       // DEVLINK_ATTR_DEV_NAME: "0000:08:00.0"
  int64_t port_index = -1;  // DEVLINK_ATTR_PORT_INDEX: a port reporter's port; -1 none
  std::string name;         // the reporter: "fw", "fw_fatal", "tx", "rx", "dummy"
  int state = -1;           // kStateHealthy, kStateError, another number; -1 absent
  uint64_t error_count = 0;
  uint64_t recover_count = 0;
  uint64_t grace_period_ms = 0;
  bool auto_recover = false;
  std::string handle() const { return bus + "/" + device; }  // as devlink(8) prints it
  friend bool operator==(const Reporter&, const Reporter&) = default;
};

// A devlink instance registered or unregistered (DEVLINK_CMD_NEW / DEVLINK_CMD_DEL on the config
// group: devlink_notify() in net/devlink), which is how an instance's reporters are known to be
// gone: a reporter destroyed with its instance sends no message of its own.
struct Instance {
  std::string bus;
  std::string device;
  bool added = true;  // false: DEVLINK_CMD_DEL
  std::string handle() const { return bus + "/" + device; }
  friend bool operator==(const Instance&, const Instance&) = default;
};

// A devlink port and the netdev it carries (devlink_nl_port_fill: DEVLINK_CMD_PORT_NEW and
// PORT_DEL notifications, and the PORT_GET dump's replies, which kernels before 6.9 send with
// the command DEVLINK_CMD_NEW). A port reporter (mlx5e's tx and rx) is about its port's netdev.
struct Port {
  std::string bus;
  std::string device;
  int64_t index = -1;
  uint32_t netdev_ifindex = 0;  // 0: none (an InfiniBand port, a port not yet typed)
  std::string netdev;           // DEVLINK_ATTR_PORT_NETDEV_NAME; "" none
  bool added = true;            // false: DEVLINK_CMD_PORT_DEL
  std::string handle() const { return bus + "/" + device; }
  friend bool operator==(const Port&, const Port&) = default;
};

enum class MessageKind : uint8_t {
  kFamily,     // the controller's answer about a family (CTRL_CMD_NEWFAMILY)
  kReporter,   // a health reporter's state (dump reply or notification)
  kInstance,   // an instance registered or unregistered
  kPort,       // a devlink port: new (or dumped) or deleted
  kDone,       // NLMSG_DONE: the end of a dump
  kError,      // NLMSG_ERROR: error is the errno (positive), 0 for an acknowledgement
  kOverrun,    // NLMSG_OVERRUN
  kIgnored,    // a message of another type or command
  kMalformed,  // bytes that are not what their type says: `problem` tells what
};

struct Message {
  MessageKind kind = MessageKind::kIgnored;
  uint16_t type = 0;  // nlmsg_type
  uint16_t flags = 0;
  uint32_t seq = 0;
  uint32_t pid = 0;  // nlmsg_pid: 0 for the kernel's notifications
  uint8_t command = 0;
  Family family;
  Reporter reporter;
  Instance instance;
  Port port;
  int error = 0;
  std::string problem;
};

// Decodes every message of `datagram`, appending to `out`. `devlink_family` is the family id
// the controller gave (0 before it is known: then only controller and control messages decode).
void decode(std::span<const uint8_t> datagram, uint16_t devlink_family, std::vector<Message>& out);

// The requests: CTRL_CMD_GETFAMILY for "devlink", and dumps of every health reporter and of
// every devlink port.
std::vector<uint8_t> family_request(uint32_t seq);
std::vector<uint8_t> reporter_dump_request(uint16_t devlink_family, uint32_t seq);
std::vector<uint8_t> port_dump_request(uint16_t devlink_family, uint32_t seq);

}  // namespace rdma_eventd::daemon::devlink
