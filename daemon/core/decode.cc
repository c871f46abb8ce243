#include "core/decode.h"

namespace rdma_eventd::daemon {

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
    case event_type::kPortActive:
      ev.kind = EventKind::kPortActive;
      break;
    case event_type::kPortErr:
      ev.kind = EventKind::kPortErr;
      break;
    case event_type::kLidChange:
      ev.kind = EventKind::kLidChange;
      break;
    case event_type::kPkeyChange:
      ev.kind = EventKind::kPkeyChange;
      break;
    case event_type::kSmChange:
      ev.kind = EventKind::kSmChange;
      break;
    case event_type::kClientReregister:
      ev.kind = EventKind::kClientReregister;
      break;
    case event_type::kGidChange:
      ev.kind = EventKind::kGidChange;
      break;
    default:
      ev.kind = EventKind::kUnknown;
      break;
  }
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
