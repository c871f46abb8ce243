// Ports as the unit tests' fake devices show them.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

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

// What a speed change record says of each of `ports` ports where libibverbs has no
// ibv_query_port_speed (rdma-core 44).
inline std::vector<EffectiveSpeed> speeds_unknown(uint32_t ports) {
  std::vector<EffectiveSpeed> out;
  for (uint32_t p = 1; p <= ports; ++p)
    out.push_back({p, std::nullopt, "not_in_libibverbs"});
  return out;
}

}  // namespace rdma_eventd::daemon
