// Fabric: port state, LID/SM, P_Key and GID changes, and the speed change of a device's ports.
// Each publishes the new state before it queues the event(s) it causes, like the kernel's cache
// update before dispatch. On mlx5 the firmware reports the port changes as PORT_CHANGE EQEs,
// which DEVX channels subscribed to 0x09 get too (docs/simulator.md, "DEVX"): state down/up on
// every port; LID, P_Key, GUID and client reregistration on InfiniBand ports (a RoCE port's
// GIDs follow its netdev, not the firmware). A port that goes down also counts the lost link in
// its link_downed counters (counter_commands.cc), published with the rest before the PORT_ERR.
#include <algorithm>

#include "fabric.h"

namespace rdmasim {
namespace {

std::string port_name(const DeviceEntry& e, int port) {
  return e.model.name + "/" + std::to_string(port);
}

void require_ib(const DeviceEntry& e, int port, const char* what) {
  if (e.model.ports[port - 1].is_ethernet())
    throw CommandError(port_name(e, port) + " is an Ethernet (RoCE) port: it has no " + what);
}

// PORT_CHANGE subtypes (device.h MLX5_PORT_CHANGE_SUBTYPE_*).
constexpr uint8_t kPortChangeDown = 1;
constexpr uint8_t kPortChangeActive = 4;
constexpr uint8_t kPortChangeLid = 6;
constexpr uint8_t kPortChangePkey = 7;
constexpr uint8_t kPortChangeGuid = 8;
constexpr uint8_t kPortChangeClientRereg = 9;

void require_lid(uint16_t lid, const char* field) {
  if (lid == 0 || lid > 0xbfff)
    throw CommandError(std::string(field) + " " + std::to_string(lid) +
                       " is not a unicast LID (1..49151)");
}

}  // namespace

Fabric::PortRef Fabric::modifiable_port(const std::string& target) {
  auto [found, p] = port(target);
  return {modifiable(found->model.name), p};
}

void Fabric::publish_port(const DeviceEntry& e, int port) {
  publish(e);
  sysfs_.write_port(e.model, port);
}

Delivery Fabric::deliver_port(const DeviceEntry& e, int port, uint32_t type, uint8_t subtype) {
  std::optional<DevxDelivery> eqe;
  if (e.model.devx.has_devx()) {
    const devx::Eqe change = devx::port_change_eqe(static_cast<uint8_t>(port), subtype);
    eqe = DevxDelivery{e.model.name, change.type(), subtype, channels_.deliver(e.index, change)};
  }
  Delivery d = deliver(e, type, static_cast<uint64_t>(port));
  d.devx = eqe;
  return d;
}

// A GID entry changed: the SM's GUID change on InfiniBand, the netdev's addresses on RoCE.
Delivery Fabric::gid_changed(const DeviceEntry& e, int port) {
  if (e.model.ports[port - 1].is_ethernet())
    return deliver(e, IBV_EVENT_GID_CHANGE, static_cast<uint64_t>(port));
  return deliver_port(e, port, IBV_EVENT_GID_CHANGE, kPortChangeGuid);
}

std::vector<Delivery> Fabric::port_down(const std::string& target, std::optional<uint8_t> phys) {
  auto [e, p] = modifiable_port(target);
  Port& port = e.model.ports[p - 1];
  ibv_port_attr& a = port.attr;
  // Link lost: the port is DOWN. An IB port polls for a peer and loses its SM-assigned LID and
  // SM LID; an Ethernet port's link is reported Disabled.
  a.state = IBV_PORT_DOWN;
  a.phys_state = phys.value_or(port.is_ethernet() ? 3 : 2);
  if (!port.is_ethernet()) {
    if (a.lid) port.saved_lid = a.lid;
    if (a.sm_lid) port.saved_sm_lid = a.sm_lid;
    a.lid = 0;
    a.sm_lid = 0;
  }
  publish_port(e, p);
  count_link_down(e, p);
  return {deliver_port(e, p, IBV_EVENT_PORT_ERR, kPortChangeDown)};
}

std::vector<Delivery> Fabric::port_up(const std::string& target, std::optional<uint16_t> lid,
                                      std::optional<uint16_t> sm_lid, Retrain retrain) {
  auto [e, p] = modifiable_port(target);
  Port& port = e.model.ports[p - 1];
  if (port.is_ethernet() && (lid || sm_lid))
    throw CommandError(port_name(e, p) + " is an Ethernet (RoCE) port: it has no LID or SM LID");
  if (lid) require_lid(*lid, "LID");
  if (sm_lid) require_lid(*sm_lid, "SM LID");
  ibv_port_attr& a = port.attr;
  a.state = IBV_PORT_ACTIVE;
  a.phys_state = 5;  // LinkUp
  // Link training settles width and speed before the port goes ACTIVE, so the event that
  // announces it already sees them.
  if (retrain.width) a.active_width = *retrain.width;
  if (retrain.speed) port.set_speed(*retrain.speed);
  if (!port.is_ethernet()) {
    // The SM configures the port (LID, SM LID) before it moves it to ACTIVE.
    if (lid) port.saved_lid = *lid;
    if (sm_lid) port.saved_sm_lid = *sm_lid;
    a.lid = port.saved_lid;
    a.sm_lid = port.saved_sm_lid;
  }
  publish_port(e, p);
  return {deliver_port(e, p, IBV_EVENT_PORT_ACTIVE, kPortChangeActive)};
}

std::vector<Delivery> Fabric::set_lid(const std::string& target, uint16_t lid) {
  auto [e, p] = modifiable_port(target);
  require_ib(e, p, "LID");
  require_lid(lid, "LID");
  Port& port = e.model.ports[p - 1];
  port.attr.lid = lid;
  port.saved_lid = lid;
  publish_port(e, p);
  return {deliver_port(e, p, IBV_EVENT_LID_CHANGE, kPortChangeLid)};
}

std::vector<Delivery> Fabric::set_active_mtu(const std::string& target, uint32_t mtu_bytes) {
  auto [e, p] = modifiable_port(target);
  Port& port = e.model.ports[p - 1];
  if (!port.is_ethernet())
    throw CommandError(port_name(e, p) + " is an InfiniBand port: its MTU is the SM's to set");
  static constexpr std::pair<uint32_t, ibv_mtu> kMtus[] = {{256, IBV_MTU_256},
                                                           {512, IBV_MTU_512},
                                                           {1024, IBV_MTU_1024},
                                                           {2048, IBV_MTU_2048},
                                                           {4096, IBV_MTU_4096}};
  const auto* m = std::find_if(std::begin(kMtus), std::end(kMtus),
                               [mtu_bytes](const auto& kv) { return kv.first == mtu_bytes; });
  if (m == std::end(kMtus))
    throw CommandError(std::to_string(mtu_bytes) + " is not an MTU (256, 512, 1024, 2048 or 4096)");
  const ibv_mtu mtu = m->second;
  if (mtu > port.attr.max_mtu)
    throw CommandError("MTU " + std::to_string(mtu_bytes) + " is above the max_mtu of " +
                       port_name(e, p));
  // A netdev's MTU change reaches the RDMA port's active MTU with no event (rxe_set_mtu; mlx5
  // likewise): the next query shows it.
  port.attr.active_mtu = mtu;
  publish_port(e, p);
  return {};
}

std::vector<Delivery> Fabric::set_sm(const std::string& target, uint16_t sm_lid,
                                     std::optional<uint8_t> sl) {
  auto [e, p] = modifiable_port(target);
  require_ib(e, p, "subnet manager");
  require_lid(sm_lid, "SM LID");
  if (sl && *sl > 15)
    throw CommandError("SM SL " + std::to_string(*sl) + " is out of range (0..15)");
  Port& port = e.model.ports[p - 1];
  port.attr.sm_lid = sm_lid;
  port.saved_sm_lid = sm_lid;
  if (sl) port.attr.sm_sl = *sl;
  publish_port(e, p);
  return {deliver(e, IBV_EVENT_SM_CHANGE, static_cast<uint64_t>(p))};
}

std::vector<Delivery> Fabric::reregister(const std::string& target) {
  auto [e, p] = modifiable_port(target);
  require_ib(e, p, "subnet manager to ask for a client reregistration");
  return {deliver_port(e, p, IBV_EVENT_CLIENT_REREGISTER, kPortChangeClientRereg)};
}

std::vector<Delivery> Fabric::set_pkey(const std::string& target, int index, uint16_t value) {
  auto [e, p] = modifiable_port(target);
  require_ib(e, p, "configurable P_Key table");
  Port& port = e.model.ports[p - 1];
  if (index < 0 || index >= static_cast<int>(port.pkeys.size()))
    throw CommandError("P_Key index " + std::to_string(index) + " is outside the table of " +
                       port_name(e, p) + " (pkey_tbl_len " + std::to_string(port.pkeys.size()) +
                       ")");
  port.pkeys[index] = value;
  publish(e);
  sysfs_.write_pkey(e.model, p, index);
  return {deliver_port(e, p, IBV_EVENT_PKEY_CHANGE, kPortChangePkey)};
}

std::vector<Delivery> Fabric::gid_add(const std::string& target, const std::string& gid_text,
                                      std::optional<int> index,
                                      std::optional<std::string> type_name,
                                      std::optional<std::string> netdev) {
  auto [e, p] = modifiable_port(target);
  Port& port = e.model.ports[p - 1];
  Gid gid;
  gid.valid = true;
  if (!parse_gid(gid_text, &gid.raw))
    throw CommandError("\"" + gid_text + "\" is not a GID (IPv6 notation)");
  if (gid.raw == std::array<uint8_t, 16>{}) throw CommandError("the zero GID marks an empty slot");
  gid.type = port.is_ethernet() ? IBV_GID_TYPE_ROCE_V2 : IBV_GID_TYPE_IB;
  if (type_name && !parse_gid_type(*type_name, &gid.type))
    throw CommandError("GID type \"" + *type_name + "\" is not one of: ib, roce-v1, roce-v2");
  if (port.is_ethernet() == (gid.type == IBV_GID_TYPE_IB))
    throw CommandError(std::string("a ") + gid_type_name(gid.type) + " GID does not fit " +
                       (port.is_ethernet() ? "Ethernet" : "InfiniBand") + " port " +
                       port_name(e, p));
  if (!port.is_ethernet() && netdev) throw CommandError("an InfiniBand GID has no netdev");
  gid.netdev = netdev.value_or(port.is_ethernet() ? port.netdev : "");
  if (gid.netdev.size() >= 16) throw CommandError("netdev name \"" + gid.netdev + "\" is too long");
  if (!gid.netdev.empty()) gid.ifindex = netdevs_.ifindex(gid.netdev);
  for (size_t i = 0; i < port.gids.size(); ++i)
    if (port.gids[i].valid && port.gids[i].raw == gid.raw && port.gids[i].type == gid.type)
      throw CommandError("GID " + gid_to_text(gid.raw) + " (" + gid_type_name(gid.type) +
                         ") is already at index " + std::to_string(i) + " of " + port_name(e, p));
  int slot = -1;
  if (index) {
    if (*index < 0 || *index >= static_cast<int>(port.gids.size()))
      throw CommandError("GID index " + std::to_string(*index) + " is outside the table of " +
                         port_name(e, p) + " (gid_tbl_len " + std::to_string(port.gids.size()) +
                         ")");
    if (port.gids[*index].valid)
      throw CommandError("GID index " + std::to_string(*index) + " of " + port_name(e, p) +
                         " is in use");
    slot = *index;
  } else {
    auto it =
        std::find_if(port.gids.begin(), port.gids.end(), [](const Gid& g) { return !g.valid; });
    if (it == port.gids.end())
      throw CommandError("the GID table of " + port_name(e, p) + " is full");
    slot = static_cast<int>(it - port.gids.begin());
  }
  port.gids[slot] = gid;
  publish(e);
  sysfs_.write_gid(e.model, p, slot);
  return {gid_changed(e, p)};
}

std::vector<Delivery> Fabric::gid_del(const std::string& target, int index) {
  auto [e, p] = modifiable_port(target);
  Port& port = e.model.ports[p - 1];
  if (index < 0 || index >= static_cast<int>(port.gids.size()))
    throw CommandError("GID index " + std::to_string(index) + " is outside the table of " +
                       port_name(e, p) + " (gid_tbl_len " + std::to_string(port.gids.size()) + ")");
  if (!port.gids[index].valid)
    throw CommandError("GID index " + std::to_string(index) + " of " + port_name(e, p) +
                       " is empty");
  port.gids[index] = Gid{};
  publish(e);
  sysfs_.write_gid(e.model, p, index);
  return {gid_changed(e, p)};
}

Fabric::IpGid Fabric::ip_gid(const std::string& target, const std::string& ip) {
  auto [e, p] = modifiable_port(target);
  if (!e.model.ports[p - 1].is_ethernet())
    throw CommandError(port_name(e, p) + " is an InfiniBand port: IP-based GIDs are RoCE only");
  std::array<uint8_t, 16> raw{};
  if (!ip_to_gid(ip, &raw)) throw CommandError("\"" + ip + "\" is not an IPv4 or IPv6 address");
  return {e, p, raw};
}

std::vector<Delivery> Fabric::gid_add_ip(const std::string& target, const std::string& ip,
                                         const std::string& netdev) {
  auto [e, p, raw] = ip_gid(target, ip);
  Port& port = e.model.ports[p - 1];
  if (netdev.empty() || netdev.size() >= 16)
    throw CommandError("netdev name \"" + netdev + "\" is not valid");
  // The kernel adds one entry per GID type the port supports (RoCE v1 then v2; v2 only on rxe),
  // each its own GID_CHANGE. Check that they all fit before adding any.
  const std::vector<uint32_t> types = roce_gid_types(e.model.devx.provider);
  std::vector<size_t> free;
  for (size_t i = 0; i < port.gids.size() && free.size() < types.size(); ++i)
    if (!port.gids[i].valid) free.push_back(i);
  for (const Gid& g : port.gids)
    if (g.valid && g.raw == raw)
      throw CommandError("IP " + ip + " already has GIDs on " + port_name(e, p));
  if (free.size() < types.size())
    throw CommandError("the GID table of " + port_name(e, p) + " has no room for " +
                       std::to_string(types.size()) + " GIDs");
  const uint32_t ifindex = netdevs_.ifindex(netdev);
  std::vector<Delivery> out;
  for (size_t k = 0; k < types.size(); ++k) {
    port.gids[free[k]] = Gid{raw, types[k], netdev, ifindex, true};
    publish(e);
    sysfs_.write_gid(e.model, p, static_cast<int>(free[k]));
    out.push_back(deliver(e, IBV_EVENT_GID_CHANGE, static_cast<uint64_t>(p)));
  }
  return out;
}

std::vector<Delivery> Fabric::gid_del_ip(const std::string& target, const std::string& ip) {
  auto [e, p, raw] = ip_gid(target, ip);
  Port& port = e.model.ports[p - 1];
  std::vector<Delivery> out;
  for (size_t i = 0; i < port.gids.size(); ++i) {
    if (!port.gids[i].valid || port.gids[i].raw != raw) continue;
    port.gids[i] = Gid{};
    publish(e);
    sysfs_.write_gid(e.model, p, static_cast<int>(i));
    out.push_back(deliver(e, IBV_EVENT_GID_CHANGE, static_cast<uint64_t>(p)));
  }
  if (out.empty()) throw CommandError("no GID for IP " + ip + " on " + port_name(e, p));
  return out;
}

std::vector<Delivery> Fabric::speed_change(const std::string& name) {
  DeviceEntry& e = modifiable(name);
  // A verbs event of the whole device: mlx5's handle_port_change (drivers/infiniband/hw/mlx5/
  // main.c) dispatches it with no port, and what changed is the ports' effective speed, which
  // ibv_query_port and sysfs `rate` do not show: nothing here changes them. Modelled with no
  // DEVX EQE (the member link's own port change is a command of its own). rdma-core 44 has no
  // name for the number and passes it through.
  return {deliver(e, kDeviceSpeedChange, 0)};
}

}  // namespace rdmasim
