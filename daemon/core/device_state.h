// The state of one device's ports that a state document keeps (core/state_document): port health
// (core/port_health_types) and link quality (core/link_quality_state) alike.
#pragma once

#include <string>
#include <vector>

namespace rdma_eventd::daemon {

// `Port` has its `port` number.
template <typename Port>
struct DeviceState {
  std::string device;
  std::string node_guid;
  std::vector<Port> ports;  // by port number
  friend bool operator==(const DeviceState&, const DeviceState&) = default;
};

}  // namespace rdma_eventd::daemon
