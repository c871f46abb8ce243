// rdma-core's raw numbers (ibv_port_attr, ibv_gid_entry) as the schema's enumerations: what the
// daemon's decoding needs, and no client does. Values the schema does not know read as unknown.
#pragma once

#include <cstdint>

#include "rdma_eventd/types.h"

namespace rdma_eventd {

PortState port_state_from_raw(uint32_t raw);  // ibv_port_state: 0 NOP .. 5 ACTIVE_DEFER
PhysState phys_state_from_raw(uint32_t raw);  // 1 Sleep .. 7 PhyTest
LinkLayer link_layer_from_raw(uint32_t raw);  // IBV_LINK_LAYER_*
LinkSpeed link_speed_from_raw(uint32_t raw);  // ibv_port_attr.active_speed bits
GidType gid_type_from_raw(uint32_t raw);      // ibv_gid_type
// Lane count from ibv_port_attr.active_width (1→1, 2→4, 4→8, 8→12, 16→2); 0 when unknown.
uint32_t lanes_from_raw_width(uint32_t raw);
// ibv_mtu 1..5 → 256..4096 bytes; 0 when unknown.
uint32_t mtu_bytes_from_raw(uint32_t raw);

}  // namespace rdma_eventd
