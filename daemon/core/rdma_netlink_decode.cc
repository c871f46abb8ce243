#include "core/rdma_netlink_decode.h"

#include <linux/netlink.h>

#include "core/netlink_wire.h"
#include "rdma_eventd/internal/enum_names.h"

namespace rdma_eventd::daemon::rdma_netlink {
namespace {

using netlink_wire::Attr;
using netlink_wire::for_each_attr;

void decode_system(std::span<const uint8_t> attrs, Message& m) {
  const bool framed = for_each_attr(attrs, m.problem, [&](const Attr& a) {
    if (a.type != kAttrMonitorMode) return true;  // netns mode, copy on fork, ...
    uint8_t mode = 0;
    if (!netlink_wire::number_attr(a, mode, "monitor mode", m.problem)) return false;
    m.monitor_mode = mode != 0;
    return true;
  });
  m.kind = framed ? MessageKind::kSystem : MessageKind::kMalformed;
}

void decode_monitor(std::span<const uint8_t> attrs, Message& m) {
  Notice n;
  bool has_event = false;
  bool has_index = false;
  const bool framed = for_each_attr(attrs, m.problem, [&](const Attr& a) {
    switch (a.type) {
      case kAttrEventType:
        has_event = true;
        return netlink_wire::number_attr(a, n.event, "event type", m.problem);
      case kAttrDevIndex:
        has_index = true;
        return netlink_wire::number_attr(a, n.device_index, "device index", m.problem);
      case kAttrDevName:
        return netlink_wire::name_attr(a, n.device, "device name", kMaxDeviceName, m.problem);
      case kAttrPortIndex: {
        uint32_t port = 0;
        if (!netlink_wire::number_attr(a, port, "port index", m.problem)) return false;
        n.port = port;
        return true;
      }
      case kAttrNdevIndex: {
        uint32_t index = 0;
        if (!netlink_wire::number_attr(a, index, "netdev index", m.problem)) return false;
        n.netdev_index = index;
        return true;
      }
      case kAttrNdevName:
        return netlink_wire::name_attr(a, n.netdev, "netdev name", kMaxNetdevName, m.problem);
      default:
        return true;  // what newer kernels add
    }
  });
  if (!framed) {
    m.kind = MessageKind::kMalformed;
    return;
  }
  // A netdev rename names the netdev only; every other event names the device.
  const bool netdev_rename = n.event == static_cast<uint8_t>(EventType::kNetdevRename);
  const char* missing = !has_event                     ? "event type"
                        : !has_index && !netdev_rename ? "device index"
                                                       : nullptr;
  if (netlink_wire::malformed_if_missing(m, missing)) return;
  m.kind = MessageKind::kMonitor;
  m.notice = std::move(n);
}

void decode_one(std::span<const uint8_t> payload, Message& m) {
  switch (m.type) {
    case kSysGetType:
      decode_system(payload, m);
      return;
    case kMonitorType:
      decode_monitor(payload, m);
      return;
    default:
      return;  // other commands, other clients (the iwarp port mapper, ...)
  }
}

}  // namespace

std::string event_name(uint8_t type) {
  // In EventType's order.
  static constexpr std::string_view kNames[] = {"register",      "unregister", "netdev_attach",
                                                "netdev_detach", "rename",     "netdev_rename"};
  const std::string_view name = internal::enum_name(kNames, type, std::string_view());
  return name.empty() ? "event " + std::to_string(type) : std::string(name);
}

std::string describe(const Notice& n) {
  std::string out = event_name(n.event);
  if (!n.device.empty()) out += " " + n.device;
  if (n.port >= 0) out += " port " + std::to_string(n.port);
  if (!n.netdev.empty()) out += " " + n.netdev;
  if (n.netdev_index >= 0) out += " (ifindex " + std::to_string(n.netdev_index) + ")";
  if (!n.device.empty() && n.port < 0)
    out += " (index " + std::to_string(n.device_index) + ")";
  else if (n.device.empty() && n.netdev.empty() && n.netdev_index < 0)
    out += " (device index " + std::to_string(n.device_index) + ")";
  return out;
}

void decode(std::span<const uint8_t> datagram, std::vector<Message>& out) {
  netlink_wire::decode_messages(datagram, out, decode_one);
}

std::vector<uint8_t> system_request(uint32_t seq) {
  std::vector<uint8_t> out = netlink_wire::message_header(kSysGetType, NLM_F_REQUEST, seq);
  netlink_wire::finish(out);
  return out;
}

}  // namespace rdma_eventd::daemon::rdma_netlink
