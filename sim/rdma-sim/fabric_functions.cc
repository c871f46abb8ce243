// The children of a simulated device's PCI function besides the RDMA device: its netdevs and,
// for mlx5, its auxiliary devices (docs/simulator.md, "mlx5's sysfs and devlink layout").
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "fabric.h"

namespace rdmasim {
namespace {

bool is_ethernet_function(const DeviceModel& d) {
  return std::any_of(d.ports.begin(), d.ports.end(), [](const Port& p) { return p.is_ethernet(); });
}

// mlx5_adev_devices[]: "eth" for an Ethernet function (is_eth_supported), "rdma" for any
// (is_ib_supported), in the order mlx5_register_device adds them (remove: the reverse). Of a
// function reloaded by its driver, only those that mlx5_detach_device deletes: rdma (mlx5_ib
// has no suspend), and before 72ed5d5624af (6.4) not eth (mlx5e_suspend).
std::vector<std::string> aux_suffixes(const DeviceModel& d, bool reloaded, bool eth_reloads) {
  if (!d.devx.is_mlx5() || d.adev_index < 0 || d.pci_function.empty()) return {};
  if (is_ethernet_function(d) && (!reloaded || eth_reloads)) return {"eth", "rdma"};
  return {"rdma"};
}

bool uses_adev_index(const DeviceModel& m, int n) {
  return m.adev_index == n || std::any_of(m.lag.begin(), m.lag.end(),
                                          [n](const LagMember& l) { return l.adev_index == n; });
}

}  // namespace

int Fabric::free_adev_index(const DeviceModel* also) const {
  for (int n = 0;; ++n)
    if ((!also || !uses_adev_index(*also, n)) &&
        std::none_of(devices_.begin(), devices_.end(),
                     [n](const DeviceEntry& e) { return uses_adev_index(e.model, n); }))
      return n;
}

void Fabric::assign_functions(DeviceModel& m) {
  if (!m.devx.is_mlx5()) return;
  if (m.adev_index < 0) m.adev_index = free_adev_index(&m);
  // Each PF is probed (PF0 first) before the LAG forms: each has its own function and index.
  for (size_t i = 0; i < m.lag.size(); ++i) {
    LagMember& pf = m.lag[i];
    if (pf.pci_function.empty())
      pf.pci_function =
          i == 0 ? m.pci_function : pci_function_of(m.node_guid ^ (uint64_t{i} << 60));
    if (pf.adev_index < 0) pf.adev_index = i == 0 ? m.adev_index : free_adev_index(&m);
  }
}

std::string Fabric::sf_function(const std::string& parent) {
  if (const DeviceEntry* e = find(parent)) return e->model.pci_function;
  if (auto it = unplugged_.find(parent); it != unplugged_.end()) return it->second.pci_function;
  throw CommandError("no PF " + parent + " for the scalable function");
}

void Fabric::add_function_children(const DeviceModel& d) {
  if (d.pci_function.empty()) return;
  if (d.sf_id >= 0) {
    // mlx5_sf_dev_add: the SF's auxiliary device, a child of its PF's function, is the RDMA
    // device's parent (its own mlx5_core auxiliary devices below it are not modelled).
    if (!function_stays_) sysfs_.add_aux_device(d.pci_function, d.parent_subdir(), "mlx5_core.sf");
    return;
  }
  const bool eth_reloads = kernel_.at_least(6, 4);
  const bool netdevs = !function_stays_ || eth_reloads;
  if (!d.lag.empty()) {
    // Each PF keeps its netdev and mlx5_core.eth.<N>; only PF0 has mlx5_core.rdma.<N>, which
    // registers the bond device (mlx5_lag_add_devices: the IB auxiliary device of PF0 only).
    std::vector<std::pair<std::string, std::string>> lowers;
    for (const LagMember& pf : d.lag) {
      sysfs_.add_pci_function(pf.pci_function, "mlx5_core");
      if (netdevs) sysfs_.add_netdev(pf.pci_function, pf.netdev, pf.ifindex);
      if (!function_stays_ || eth_reloads)
        sysfs_.add_aux_device(pf.pci_function, "mlx5_core.eth." + std::to_string(pf.adev_index),
                              "mlx5_core.eth");
      lowers.emplace_back(pf.pci_function, pf.netdev);
    }
    sysfs_.add_aux_device(d.pci_function, "mlx5_core.rdma." + std::to_string(d.adev_index),
                          "mlx5_core.rdma");
    if (!function_stays_) sysfs_.add_bond(d.ports[0].netdev, d.ports[0].netdev_ifindex, lowers);
    return;
  }
  if (netdevs)
    for (const Port& p : d.ports)
      if (p.is_ethernet() && !p.netdev.empty())
        sysfs_.add_netdev(d.pci_function, p.netdev, p.netdev_ifindex);
  for (const std::string& suffix : aux_suffixes(d, function_stays_, eth_reloads))
    sysfs_.add_aux_device(d.pci_function,
                          "mlx5_core." + suffix + "." + std::to_string(d.adev_index),
                          "mlx5_core." + suffix);
}

void Fabric::remove_function_children(const DeviceModel& d) {
  if (d.pci_function.empty()) return;
  if (d.sf_id >= 0) {
    if (!function_stays_)
      sysfs_.remove_aux_device(d.pci_function, d.parent_subdir(), "mlx5_core.sf");
    return;
  }
  const bool eth_reloads = kernel_.at_least(6, 4);
  const bool netdevs = !function_stays_ || eth_reloads;
  if (!d.lag.empty()) {
    sysfs_.remove_aux_device(d.pci_function, "mlx5_core.rdma." + std::to_string(d.adev_index),
                             "mlx5_core.rdma");
    if (!function_stays_) sysfs_.remove_bond(d.ports[0].netdev);
    for (const LagMember& pf : d.lag) {
      if (!function_stays_ || eth_reloads)
        sysfs_.remove_aux_device(pf.pci_function, "mlx5_core.eth." + std::to_string(pf.adev_index),
                                 "mlx5_core.eth");
      if (netdevs) sysfs_.remove_netdev(pf.pci_function, pf.netdev);
    }
    return;
  }
  const std::vector<std::string> suffixes = aux_suffixes(d, function_stays_, eth_reloads);
  for (auto s = suffixes.rbegin(); s != suffixes.rend(); ++s)
    sysfs_.remove_aux_device(d.pci_function, "mlx5_core." + *s + "." + std::to_string(d.adev_index),
                             "mlx5_core." + *s);
  if (netdevs)
    for (const Port& p : d.ports)
      if (p.is_ethernet() && !p.netdev.empty()) sysfs_.remove_netdev(d.pci_function, p.netdev);
}

}  // namespace rdmasim
