// A device's "lag" (docs/simulator.md, "RoCE LAG"): the member PFs' netdevs of a RoCE LAG
// device such as mlx5_bond_0, whose one port's netdev is the bond; and its "sf", a scalable
// function of an mlx5 PF ("Scalable functions").
#include "topology_lag.h"

#include <net/if.h>

namespace rdmasim {

std::vector<LagMember> parse_lag(JsonFields& device, NetdevTable& netdevs) {
  std::vector<LagMember> out;
  const nlohmann::json* v = device.get("lag");
  if (!v) return out;
  // mlx5's RoCE LAG bonds the two PFs of one adapter (mlx5_lag_dev: MLX5_MAX_PORTS 2 in 6.1).
  if (!v->is_array() || v->size() != 2)
    device.fail("lag",
                "expected the two PFs' netdevs, PF0 first ([{\"netdev\": \"ens1f0np0\"}, "
                "{\"netdev\": \"ens1f1np1\"}]), got " +
                    v->dump());
  for (size_t i = 0; i < v->size(); ++i) {
    JsonFields m((*v)[i], device.path("lag") + "[" + std::to_string(i) + "]", device.file());
    LagMember member;
    member.netdev = m.str("netdev", "", IF_NAMESIZE - 1);
    if (member.netdev.empty()) m.fail("netdev", "missing: the PF's netdev, a lower of the bond");
    for (const LagMember& other : out)
      if (other.netdev == member.netdev) m.fail("netdev", "\"" + member.netdev + "\" is PF0's");
    if (m.get("netdev_ifindex")) {
      member.ifindex = static_cast<uint32_t>(m.num("netdev_ifindex", 0, 1, 0x7fffffff));
      if (const std::string* taken = netdevs.name_of(member.ifindex);
          taken && *taken != member.netdev)
        m.fail("netdev_ifindex", std::to_string(member.ifindex) + " is the ifindex of " + *taken);
      netdevs.set(member.netdev, member.ifindex);
    } else {
      member.ifindex = netdevs.ifindex(member.netdev);
    }
    m.check_unknown();
    out.push_back(member);
  }
  return out;
}

void check_lag(JsonFields& device, const DeviceModel& d) {
  if (d.lag.empty()) return;
  if (!d.devx.is_mlx5()) device.fail("lag", "only mlx5 devices bond their PFs (mlx5_bond_N)");
  if (d.ports.size() != 1 || !d.ports[0].is_ethernet() || d.ports[0].netdev.empty())
    device.fail("lag", "a RoCE LAG device has one Ethernet port whose \"netdev\" is the bond");
  for (const LagMember& m : d.lag)
    if (m.netdev == d.ports[0].netdev)
      device.fail("lag", "\"" + m.netdev + "\" is the bond's netdev, not a PF's");
}

void parse_sf(JsonFields& device, DeviceModel* d) {
  const nlohmann::json* v = device.get("sf");
  if (!v) return;
  JsonFields o(*v, device.path("sf"), device.file());
  d->sf_parent = o.str("parent", "", 63);
  if (d->sf_parent.empty()) o.fail("parent", "missing: the mlx5 device whose PF the SF is of");
  d->sf_id = static_cast<int>(o.num("id", 0, 0, 65535));
  o.check_unknown();
}

void check_sf(JsonFields& device, const DeviceModel& d, const std::vector<DeviceModel>& before) {
  if (d.sf_parent.empty()) return;
  if (!d.devx.is_mlx5()) device.fail("sf", "only mlx5 devices are scalable functions here");
  for (const DeviceModel& p : before) {
    if (p.name != d.sf_parent) continue;
    if (!p.devx.is_mlx5() || !p.sf_parent.empty())
      device.fail("sf", "\"" + d.sf_parent + "\" is no mlx5 PF");
    for (const DeviceModel& other : before)
      if (other.sf_parent == d.sf_parent && other.sf_id == d.sf_id)
        device.fail("sf", "mlx5_core.sf." + std::to_string(d.sf_id) + " is " + other.name + "'s");
    return;
  }
  device.fail("sf", "\"" + d.sf_parent + "\" is no device listed before this one");
}

}  // namespace rdmasim
