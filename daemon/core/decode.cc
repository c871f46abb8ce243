#include "core/decode.h"

#include <utility>

namespace rdma_eventd::daemon {
namespace {

// The port events, whose element is the port number, and the kind each is.
constexpr std::pair<uint32_t, EventKind> kPortEvents[] = {
    {event_type::kPortActive, EventKind::kPortActive},
    {event_type::kPortErr, EventKind::kPortErr},
    {event_type::kLidChange, EventKind::kLidChange},
    {event_type::kPkeyChange, EventKind::kPkeyChange},
    {event_type::kSmChange, EventKind::kSmChange},
    {event_type::kClientReregister, EventKind::kClientReregister},
    {event_type::kGidChange, EventKind::kGidChange},
};

}  // namespace

bool is_affiliated(uint32_t type) {
  return type <= 7 || (type >= 14 && type <= 16) || type == 19;
}

DecodedEvent decode_event(const RawEvent& raw, uint32_t num_ports) {
  DecodedEvent ev;
  ev.type = static_cast<int>(raw.type);
  if (is_affiliated(raw.type)) {
    ev.kind = EventKind::kUnknown;  // never ours: we create no QP/CQ/SRQ/WQ
    return ev;
  }
  ev.element = static_cast<uint32_t>(raw.element);
  const bool valid_port = ev.element >= 1 && ev.element <= num_ports;
  switch (raw.type) {
    case event_type::kDeviceFatal:
      ev.kind = EventKind::kDeviceFatal;
      return ev;  // a device event: element is a driver-chosen value, 0 on unplug
    case event_type::kDeviceSpeedChange:
      ev.kind = EventKind::kDeviceSpeedChange;
      return ev;  // a device event: the kernel sends it with element 0, whatever its ports
    default:
      break;
  }
  ev.kind = EventKind::kUnknown;
  for (const auto& [type, kind] : kPortEvents)
    if (type == raw.type) ev.kind = kind;
  if (valid_port) ev.port = ev.element;
  return ev;
}

PortInfo decode_port(uint32_t port, const RawPortAttr& raw) {
  PortInfo p;
  p.port = port;
  p.link_layer = link_layer_from_raw(raw.link_layer);
  p.state = port_state_from_raw(raw.state);
  p.phys_state = phys_state_from_raw(raw.phys_state);
  p.lid = raw.lid;
  p.sm_lid = raw.sm_lid;
  p.sm_sl = raw.sm_sl;
  p.lmc = raw.lmc;
  p.active_mtu = mtu_bytes_from_raw(raw.active_mtu);
  p.lanes = lanes_from_raw_width(raw.active_width);
  p.speed = link_speed_from_raw(raw.active_speed);
  return p;
}

}  // namespace rdma_eventd::daemon
