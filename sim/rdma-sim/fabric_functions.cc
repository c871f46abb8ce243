// The children of a simulated device's PCI function besides the RDMA device: its netdevs and,
// for mlx5, its auxiliary devices (docs/simulator.md, "mlx5's sysfs and devlink layout").
#include <algorithm>

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

}  // namespace

int Fabric::free_adev_index() const {
  for (int n = 0;; ++n)
    if (std::none_of(devices_.begin(), devices_.end(),
                     [n](const DeviceEntry& e) { return e.model.adev_index == n; }))
      return n;
}

void Fabric::add_function_children(const DeviceModel& d) {
  if (d.pci_function.empty()) return;
  const bool eth_reloads = kernel_.at_least(6, 4);
  if (!function_stays_ || eth_reloads)
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
  const bool eth_reloads = kernel_.at_least(6, 4);
  const std::vector<std::string> suffixes = aux_suffixes(d, function_stays_, eth_reloads);
  for (auto s = suffixes.rbegin(); s != suffixes.rend(); ++s)
    sysfs_.remove_aux_device(d.pci_function, "mlx5_core." + *s + "." + std::to_string(d.adev_index),
                             "mlx5_core." + *s);
  if (!function_stays_ || eth_reloads)
    for (const Port& p : d.ports)
      if (p.is_ethernet() && !p.netdev.empty()) sysfs_.remove_netdev(d.pci_function, p.netdev);
}

}  // namespace rdmasim
