#include "core/devlink_map.h"

#include <algorithm>

namespace rdma_eventd::daemon {
namespace {

bool contains(const std::vector<std::string>& handles, std::string_view handle) {
  return std::find(handles.begin(), handles.end(), handle) != handles.end();
}

}  // namespace

std::vector<DevlinkTarget> devlink_targets(const std::vector<DevlinkHandles>& devices,
                                           std::string_view handle, int64_t port_index) {
  std::vector<DevlinkTarget> out;
  for (const DevlinkHandles& d : devices) {
    std::vector<uint32_t> ports;
    for (const auto& [port, handles] : d.port_handles) {
      if (contains(handles, handle)) ports.push_back(port);
    }
    if (contains(d.device_handles, handle)) {
      // A port reporter of the device's own instance: the port whose netdev is under that
      // instance alone (mlx5 multi-port RoCE: each port's netdev on its own PCI function, the
      // first function also the device's parent); one port: that one; else the device.
      uint32_t port = 0;
      if (port_index >= 0) port = ports.size() == 1 ? ports.front() : d.ports == 1 ? 1 : 0;
      out.push_back({d.device, d.node_guid, port});
      continue;
    }
    // Reached through one port's netdev: that port; through several (one parent under every
    // port's netdev), the device.
    if (ports.size() == 1) out.push_back({d.device, d.node_guid, ports.front()});
    if (ports.size() > 1) out.push_back({d.device, d.node_guid, 0});
  }
  std::sort(out.begin(), out.end(), [](const DevlinkTarget& a, const DevlinkTarget& b) {
    return a.device != b.device ? a.device < b.device : a.port < b.port;
  });
  return out;
}

}  // namespace rdma_eventd::daemon
