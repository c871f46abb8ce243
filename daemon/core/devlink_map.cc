#include "core/devlink_map.h"

#include <algorithm>

namespace rdma_eventd::daemon {
namespace {

template <typename T>
bool contains(const std::vector<std::string>& names, const T& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// The device for several ports, the port for one.
void add(std::vector<DevlinkTarget>& out, const DevlinkHandles& d,
         const std::vector<uint32_t>& ports) {
  if (ports.size() == 1) out.push_back({d.device, d.node_guid, ports.front()});
  if (ports.size() > 1) out.push_back({d.device, d.node_guid, 0});
}

}  // namespace

std::vector<DevlinkTarget> devlink_targets(const std::vector<DevlinkHandles>& devices,
                                           std::string_view handle, int64_t port_index,
                                           std::string_view port_netdev) {
  std::vector<DevlinkTarget> out;
  // An RDMA device's own parent is that device's alone (an SF's instance is not its PF's).
  const bool someones_own = std::any_of(devices.begin(), devices.end(),
                                        [&](const DevlinkHandles& d) { return d.own == handle; });
  for (const DevlinkHandles& d : devices) {
    if (port_index >= 0 && !port_netdev.empty()) {
      std::vector<uint32_t> ports;
      for (const auto& [port, links] : d.port_links)
        if (contains(links.netdevs, port_netdev)) ports.push_back(port);
      add(out, d, ports);
      continue;
    }
    std::vector<uint32_t> ports;
    for (const auto& [port, links] : d.port_links)
      if (contains(links.handles, handle)) ports.push_back(port);
    const bool own =
        !handle.empty() && (d.own == handle || (!someones_own && contains(d.own_children, handle)));
    if (own) {
      uint32_t port = 0;
      if (port_index >= 0) port = ports.size() == 1 ? ports.front() : d.ports == 1 ? 1 : 0;
      out.push_back({d.device, d.node_guid, port});
      continue;
    }
    add(out, d, ports);
  }
  std::sort(out.begin(), out.end(), [](const DevlinkTarget& a, const DevlinkTarget& b) {
    return a.device != b.device ? a.device < b.device : a.port < b.port;
  });
  return out;
}

DevlinkHandles handles_or_before(DevlinkHandles fresh, const DevlinkHandles* before) {
  const auto nothing = [](const DevlinkHandles& h) {
    return h.own.empty() && h.own_children.empty() && h.port_links.empty();
  };
  if (before && nothing(fresh) && !nothing(*before) && before->device == fresh.device &&
      before->node_guid == fresh.node_guid)
    return *before;
  return fresh;
}

}  // namespace rdma_eventd::daemon
