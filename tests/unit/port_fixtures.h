// Ports as the unit tests' fake devices show them.
#pragma once

#include <cstdint>

#include "rdma_eventd/record.h"

namespace rdma_eventd::daemon {

// An active 4x HDR InfiniBand port with this LID, the SM at LID 1.
inline PortInfo active_ib(uint32_t port, uint32_t lid) {
  PortInfo p;
  p.port = port;
  p.link_layer = LinkLayer::kInfiniband;
  p.state = PortState::kActive;
  p.phys_state = PhysState::kLinkUp;
  p.lid = lid;
  p.sm_lid = 1;
  p.active_mtu = 4096;
  p.lanes = 4;
  p.speed = LinkSpeed::kHdr;
  return p;
}

}  // namespace rdma_eventd::daemon
