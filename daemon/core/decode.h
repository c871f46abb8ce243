// Decoding: raw verbs values → the schema's types. Pure functions, no libibverbs.
//
// The verbs layer copies what libibverbs returns into the plain structs below and nothing
// more; every interpretation of those numbers happens here, where it is unit-tested.
#pragma once

#include <cstdint>

#include "rdma_eventd/record.h"
#include "schema/raw_values.h"  // rdma-core's numbers as the schema's enumerations

namespace rdma_eventd::daemon {

// One async event as ibv_get_async_event returned it. For unaffiliated events `element` is
// element.port_num; for affiliated ones (QP/CQ/SRQ/WQ) it is the object pointer's value, which
// this daemon never dereferences: it owns no such objects.
struct RawEvent {
  uint32_t type = 0;
  uint64_t element = 0;
};

// ibv_port_attr fields the daemon uses, copied verbatim.
struct RawPortAttr {
  uint32_t state = 0;
  uint32_t phys_state = 0;
  uint32_t link_layer = 0;
  uint32_t active_mtu = 0;
  uint32_t active_width = 0;
  uint32_t active_speed = 0;
  uint32_t lid = 0;
  uint32_t sm_lid = 0;
  uint32_t sm_sl = 0;
  uint32_t lmc = 0;
  uint32_t gid_tbl_len = 0;
  uint32_t pkey_tbl_len = 0;
};

// The ibv_event_type numbers (the kernel's ib_event_type) this daemon names.
namespace event_type {
inline constexpr uint32_t kDeviceFatal = 8;
inline constexpr uint32_t kPortActive = 9;
inline constexpr uint32_t kPortErr = 10;
inline constexpr uint32_t kLidChange = 11;
inline constexpr uint32_t kPkeyChange = 12;
inline constexpr uint32_t kSmChange = 13;
inline constexpr uint32_t kClientReregister = 17;
inline constexpr uint32_t kGidChange = 18;
// IBV_EVENT_DEVICE_SPEED_CHANGE: the kernel's IB_EVENT_DEVICE_SPEED_CHANGE (Linux 7.0, mlx5 in
// link aggregation), named in verbs.h from rdma-core 62. Older libibverbs (Debian 12 has
// rdma-core 44) pass the kernel's number through unchanged, so the daemon knows it by number:
// it needs no newer header to receive it.
inline constexpr uint32_t kDeviceSpeedChange = 20;
}  // namespace event_type

// True for the types whose element is a QP/CQ/SRQ/WQ pointer rather than a port number
// (0–7, 14–16, 19), as in libibverbs' ibv_get_async_event.
bool is_affiliated(uint32_t type);

struct DecodedEvent {
  EventKind kind = EventKind::kUnknown;
  int type = -1;
  // The port the event concerns, or 0 when it concerns the whole device (device_fatal,
  // device_speed_change) or no valid port of this device (an affiliated event, or an unknown
  // type with a bad element).
  uint32_t port = 0;
  // The raw element for port and device events (element.port_num), 0 for affiliated ones.
  uint32_t element = 0;
};

// num_ports bounds which port numbers are taken as valid.
DecodedEvent decode_event(const RawEvent& raw, uint32_t num_ports);

PortInfo decode_port(uint32_t port, const RawPortAttr& raw);

}  // namespace rdma_eventd::daemon
