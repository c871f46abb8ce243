#include "core/removal_notice.h"

#include <array>

namespace rdma_eventd::daemon {

bool removal_announced(std::string_view parent_driver) {
  // mlx5_core's PCI driver, and its auxiliary drivers' names as sysfs gives them
  // ("mlx5_core.sf" for a sub-function).
  static constexpr std::array<std::string_view, 2> kDrivers = {"mlx5_core", "mlx4_core"};
  for (const std::string_view d : kDrivers) {
    if (parent_driver == d) return true;
    if (parent_driver.size() > d.size() + 1 && parent_driver.starts_with(d) &&
        parent_driver[d.size()] == '.')
      return true;
  }
  return false;
}

bool kernel_announces_renames(std::string_view release) {
  // "MAJOR.MINOR", then anything.
  auto number = [&release](int* out) {
    size_t n = 0;
    int v = 0;
    while (n < release.size() && n < 6 && release[n] >= '0' && release[n] <= '9')
      v = v * 10 + (release[n++] - '0');
    if (n == 0) return false;
    release.remove_prefix(n);
    *out = v;
    return true;
  };
  int major = 0;
  int minor = 0;
  if (!number(&major) || release.empty() || release.front() != '.') return false;
  release.remove_prefix(1);
  if (!number(&minor)) return false;
  return major > 6 || (major == 6 && minor >= 13);
}

std::string unannounced_because(std::string_view parent_driver) {
  if (parent_driver.empty()) return "it has no parent device: a software device such as rxe or siw";
  return "its parent's driver, " + std::string(parent_driver) +
         ", is not known to disassociate its users";
}

}  // namespace rdma_eventd::daemon
