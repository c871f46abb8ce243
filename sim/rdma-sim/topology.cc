// Parsing and validating topology files. Every field is checked; unknown fields are errors (a
// typo must not silently become a default).
#include "topology.h"

#include <net/if.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "common/shm_layout.h"
#include "device_attr.h"
#include "json_fields.h"
#include "topology_counters.h"
#include "topology_devlink.h"
#include "topology_devx.h"
#include "topology_lag.h"

namespace rdmasim {
namespace {

using nlohmann::json;

std::string show(const json& v) {
  return v.dump();
}

const std::map<std::string, uint32_t> kLinkLayers = {{"infiniband", IBV_LINK_LAYER_INFINIBAND},
                                                     {"ethernet", IBV_LINK_LAYER_ETHERNET}};
const std::map<std::string, uint32_t> kNodeTypes = {{"ca", IBV_NODE_CA},
                                                    {"switch", IBV_NODE_SWITCH},
                                                    {"router", IBV_NODE_ROUTER},
                                                    {"rnic", IBV_NODE_RNIC},
                                                    {"usnic", IBV_NODE_USNIC},
                                                    {"usnic_udp", IBV_NODE_USNIC_UDP},
                                                    {"unspecified", IBV_NODE_UNSPECIFIED}};
const std::map<std::string, uint32_t> kMtus = {{"256", IBV_MTU_256},
                                               {"512", IBV_MTU_512},
                                               {"1024", IBV_MTU_1024},
                                               {"2048", IBV_MTU_2048},
                                               {"4096", IBV_MTU_4096}};

uint32_t mtu(JsonFields& o, const std::string& key, uint32_t def) {
  const json* v = o.get(key);
  if (!v) return def;
  const std::string s = v->is_number_unsigned() ? std::to_string(v->get<uint64_t>())
                        : v->is_string()        ? v->get<std::string>()
                                                : "";
  auto it = kMtus.find(s);
  if (it == kMtus.end()) o.fail(key, show(*v) + " is not an MTU (256, 512, 1024, 2048 or 4096)");
  return it->second;
}

struct PortContext {
  const std::string& device;
  uint64_t node_guid;
  int port_num;
  uint32_t default_link_layer;
  const DevxModel& devx;
  CounterSets counters;
};

// The link-local GID a RoCE port derives from its MAC (modified EUI-64).
bool mac_to_gid(const std::string& mac, std::array<uint8_t, 16>* raw) {
  unsigned m[6];
  char tail;
  if (std::sscanf(mac.c_str(), "%2x:%2x:%2x:%2x:%2x:%2x%c", &m[0], &m[1], &m[2], &m[3], &m[4],
                  &m[5], &tail) != 6)
    return false;
  raw->fill(0);
  (*raw)[0] = 0xfe;
  (*raw)[1] = 0x80;
  (*raw)[8] = static_cast<uint8_t>(m[0] ^ 0x02);
  (*raw)[9] = static_cast<uint8_t>(m[1]);
  (*raw)[10] = static_cast<uint8_t>(m[2]);
  (*raw)[11] = 0xff;
  (*raw)[12] = 0xfe;
  (*raw)[13] = static_cast<uint8_t>(m[3]);
  (*raw)[14] = static_cast<uint8_t>(m[4]);
  (*raw)[15] = static_cast<uint8_t>(m[5]);
  return true;
}

void put_gid(JsonFields& o, const std::string& key, Port& port, int index, const Gid& gid) {
  if (index < 0 || index >= static_cast<int>(port.gids.size()))
    o.fail(key, "GID index " + std::to_string(index) + " is outside the table (gid_tbl_len " +
                    std::to_string(port.gids.size()) + ")");
  if (port.gids[index].valid)
    o.fail(key, "GID index " + std::to_string(index) + " is already used");
  for (const Gid& g : port.gids)
    if (g.valid && g.raw == gid.raw && g.type == gid.type)
      o.fail(key,
             "GID " + gid_to_text(gid.raw) + " (" + gid_type_name(gid.type) + ") appears twice");
  port.gids[index] = gid;
}

int first_free_gid(const Port& port) {
  for (size_t i = 0; i < port.gids.size(); ++i)
    if (!port.gids[i].valid) return static_cast<int>(i);
  return -1;
}

// *auto_lid: the file leaves this IB port's LID to the SM (assigned by parse_topology).
Port parse_port(JsonFields& o, const PortContext& pc, NetdevTable& netdevs, bool* auto_lid) {
  Port p;
  ibv_port_attr& a = p.attr;
  a.link_layer = static_cast<uint8_t>(o.choice("link_layer", pc.default_link_layer, kLinkLayers));
  const bool eth = a.link_layer == IBV_LINK_LAYER_ETHERNET;
  a.state = static_cast<ibv_port_state>(o.choice("state", IBV_PORT_ACTIVE, port_state_codes()));
  const bool up = a.state == IBV_PORT_ACTIVE || a.state == IBV_PORT_ACTIVE_DEFER;
  const uint32_t default_phys = up || a.state == IBV_PORT_ARMED || a.state == IBV_PORT_INIT ? 5
                                : eth                                                       ? 3
                                                                                            : 2;
  a.phys_state = static_cast<uint8_t>(o.choice("phys_state", default_phys, phys_state_codes()));
  a.max_mtu = static_cast<ibv_mtu>(mtu(o, "max_mtu", IBV_MTU_4096));
  a.active_mtu = static_cast<ibv_mtu>(mtu(o, "active_mtu", eth ? IBV_MTU_1024 : IBV_MTU_4096));
  a.active_width = static_cast<uint8_t>(o.choice("width", 2, width_codes()));
  p.set_speed(o.choice("speed", eth ? 32 : 64, speed_codes()));
  a.gid_tbl_len = static_cast<int>(o.num("gid_tbl_len", eth ? 256 : 8, 1, kMaxGids));
  a.pkey_tbl_len = static_cast<uint16_t>(o.num("pkey_tbl_len", eth ? 1 : 128, 1, kMaxPkeys));
  a.port_cap_flags =
      static_cast<uint32_t>(o.num("port_cap_flags", eth ? 0x04010000 : 0xa259e848, 0, 0xffffffffu));
  a.port_cap_flags2 = static_cast<uint16_t>(o.num("port_cap_flags2", eth ? 0 : 0x0032, 0, 0xffff));
  a.max_msg_sz = static_cast<uint32_t>(o.num("max_msg_sz", 0x40000000, 0, 0xffffffffu));
  a.bad_pkey_cntr = static_cast<uint32_t>(o.num("bad_pkey_cntr", 0, 0, 0xffffffffu));
  a.qkey_viol_cntr = static_cast<uint32_t>(o.num("qkey_viol_cntr", 0, 0, 0xffffffffu));
  a.subnet_timeout = static_cast<uint8_t>(o.num("subnet_timeout", eth ? 0 : 18, 0, 31));
  a.init_type_reply = static_cast<uint8_t>(o.num("init_type_reply", 0, 0, 0xff));
  a.max_vl_num = static_cast<uint8_t>(o.num("max_vl_num", eth ? 0 : 3, 0, 15));
  a.flags = static_cast<uint8_t>(o.num("flags", 0, 0, 0xff));
  p.module = parse_port_module(o, pc.devx, pc.port_num);

  // Addressing. RoCE has no LIDs and no SM; an IB port's LID is the SM's business, so a LID the
  // file leaves out is assigned like an SM would (unique, from 1), and a port that is down has
  // none until it comes up.
  const uint64_t lid = o.num("lid", 0, 0, 0xffff);
  const uint64_t sm_lid = o.num("sm_lid", eth ? 0 : 1, 0, 0xffff);
  a.sm_sl = static_cast<uint8_t>(o.num("sm_sl", 0, 0, 15));
  a.lmc = static_cast<uint8_t>(o.num("lmc", 0, 0, 7));
  if (eth) {
    for (const char* key : {"lid", "sm_lid", "sm_sl", "lmc"})
      if (o.get(key) && o.num(key, 0, 0, 0xffff) != 0)
        o.fail(key, "must be 0 on an Ethernet (RoCE) port, got " +
                        std::to_string(o.num(key, 0, 0, 0xffff)));
  } else {
    if (lid > 0xbfff) o.fail("lid", std::to_string(lid) + " is not a unicast LID (1..49151)");
    p.saved_lid = static_cast<uint16_t>(lid);
    p.saved_sm_lid = static_cast<uint16_t>(sm_lid);
    *auto_lid = !o.get("lid");
    a.lid = up ? static_cast<uint16_t>(lid) : 0;
    a.sm_lid = up ? static_cast<uint16_t>(sm_lid) : 0;
  }

  p.netdev = o.str("netdev", "", IF_NAMESIZE - 1);
  if (const json* v = o.get("netdev_ifindex")) {
    if (p.netdev.empty()) o.fail("netdev_ifindex", "given without a netdev");
    p.netdev_ifindex = static_cast<uint32_t>(o.num("netdev_ifindex", 0, 1, 0x7fffffff));
    if (netdevs.known(p.netdev) && netdevs.ifindex(p.netdev) != p.netdev_ifindex)
      o.fail("netdev_ifindex",
             show(*v) + " contradicts the ifindex given to " + p.netdev + " elsewhere");
    // As on a host, an ifindex names one netdev.
    if (const std::string* other = netdevs.name_of(p.netdev_ifindex); other && *other != p.netdev)
      o.fail("netdev_ifindex", show(*v) + " is already the ifindex of " + *other);
    netdevs.set(p.netdev, p.netdev_ifindex);
  } else if (!p.netdev.empty()) {
    p.netdev_ifindex = netdevs.ifindex(p.netdev);
  }

  // P_Key table: values by index; the rest of the table is empty (0).
  p.pkeys.assign(a.pkey_tbl_len, 0);
  if (const json* v = o.get("pkeys")) {
    if (!v->is_array()) o.fail("pkeys", "expected an array of P_Keys, got " + show(*v));
    if (v->size() > a.pkey_tbl_len)
      o.fail("pkeys", std::to_string(v->size()) + " P_Keys do not fit in pkey_tbl_len " +
                          std::to_string(a.pkey_tbl_len));
    for (size_t i = 0; i < v->size(); ++i)
      p.pkeys[i] = static_cast<uint16_t>(
          number_at((*v)[i], o.path("pkeys") + "[" + std::to_string(i) + "]", o.file(), 0, 0xffff));
  } else {
    p.pkeys[0] = 0xffff;  // the default partition
  }

  // GID table.
  p.gids.assign(static_cast<size_t>(a.gid_tbl_len), Gid{});
  const json* gids = o.get("gids");
  const json* mac = o.get("mac");
  const json* ips = o.get("ips");
  if (!eth && (mac || ips))
    o.fail(mac ? "mac" : "ips", "only an Ethernet (RoCE) port has a MAC and IP GIDs");
  if (mac) {
    std::array<uint8_t, 16> raw{};
    if (!mac->is_string() || !mac_to_gid(mac->get<std::string>(), &raw))
      o.fail("mac", show(*mac) + " is not a MAC address (xx:xx:xx:xx:xx:xx)");
    // The default GIDs: the link-local address in each GID type the port takes (v1 and v2; v2
    // only on rxe), as the kernel adds them.
    for (uint32_t type : roce_gid_types(pc.devx.provider))
      put_gid(o, "mac", p, first_free_gid(p), Gid{raw, type, p.netdev, p.netdev_ifindex, true});
  }
  if (gids) {
    if (!gids->is_array()) o.fail("gids", "expected an array, got " + show(*gids));
    for (size_t i = 0; i < gids->size(); ++i) {
      JsonFields g((*gids)[i], o.path("gids") + "[" + std::to_string(i) + "]", o.file());
      Gid gid;
      gid.valid = true;
      const std::string text = g.str("gid", "", 64);
      if (text.empty()) g.fail("gid", "missing");
      if (!parse_gid(text, &gid.raw))
        g.fail("gid", "\"" + text + "\" is not a GID (IPv6 notation)");
      if (gid.raw == std::array<uint8_t, 16>{}) g.fail("gid", "the zero GID marks an empty slot");
      const std::string type = g.str("type", eth ? "roce-v2" : "ib", 16);
      if (!parse_gid_type(type, &gid.type))
        g.fail("type", "\"" + type + "\" is not one of: ib, roce-v1, roce-v2");
      if (eth == (gid.type == IBV_GID_TYPE_IB))
        g.fail("type",
               "\"" + type + "\" GID on " + (eth ? "an Ethernet" : "an InfiniBand") + " port");
      gid.netdev = g.str("netdev", eth ? p.netdev : "", IF_NAMESIZE - 1);
      if (!eth && !gid.netdev.empty()) g.fail("netdev", "an InfiniBand GID has no netdev");
      if (!gid.netdev.empty()) gid.ifindex = netdevs.ifindex(gid.netdev);
      const int index = static_cast<int>(
          g.num("index", static_cast<uint64_t>(std::max(first_free_gid(p), 0)), 0, kMaxGids - 1));
      g.check_unknown();
      put_gid(g, "index", p, index, gid);
    }
  } else if (!eth) {
    // The port GID: subnet prefix fe80:: and the port GUID (node GUID + port - 1).
    Gid gid;
    gid.valid = true;
    gid.raw[0] = 0xfe;
    gid.raw[1] = 0x80;
    const uint64_t port_guid = pc.node_guid + static_cast<uint64_t>(pc.port_num - 1);
    for (int i = 0; i < 8; ++i)
      gid.raw[8 + i] = static_cast<uint8_t>(port_guid >> (56 - 8 * i));
    p.gids[0] = gid;
  }
  if (ips) {
    if (!ips->is_array()) o.fail("ips", "expected an array of IP addresses, got " + show(*ips));
    if (p.netdev.empty()) o.fail("ips", "IP GIDs need the port's netdev");
    for (size_t i = 0; i < ips->size(); ++i) {
      const std::string where = "ips[" + std::to_string(i) + "]";
      std::array<uint8_t, 16> raw{};
      if (!(*ips)[i].is_string() || !ip_to_gid((*ips)[i].get<std::string>(), &raw))
        o.fail(where, show((*ips)[i]) + " is not an IP address");
      for (uint32_t type : roce_gid_types(pc.devx.provider)) {
        const int index = first_free_gid(p);
        put_gid(o, where, p, index, Gid{raw, type, p.netdev, p.netdev_ifindex, true});
      }
    }
  }
  p.counters = parse_port_counters(o, pc.counters, pc.device + "/" + std::to_string(pc.port_num));
  p.phy = parse_port_phy(o, eth, pc.devx.provider);
  o.check_unknown();
  return p;
}

// auto_lids gets, for each IB port in file order, whether its LID is left to the SM.
DeviceModel parse_device(JsonFields& o, size_t position, NetdevTable& netdevs,
                         std::vector<bool>* auto_lids) {
  DeviceModel d;
  d.name = o.str("name", "", kNameMax - 1);
  if (d.name.empty()) o.fail("name", "missing");
  for (char c : d.name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.')
      o.fail("name", "\"" + d.name + "\" may only contain letters, digits, '_', '-' and '.'");
  const std::string guid = o.str("node_guid", "", 32);
  if (guid.empty()) {
    d.node_guid = 0x0c42a10300000000ULL + 0x100ULL * position;  // Mellanox OUI, distinct per device
  } else if (!parse_guid(guid, &d.node_guid)) {
    o.fail("node_guid", "\"" + guid + "\" is not a GUID (xxxx:xxxx:xxxx:xxxx or 0x...)");
  }
  const std::string sys_guid = o.str("sys_image_guid", "", 32);
  d.sys_image_guid = d.node_guid;
  if (!sys_guid.empty() && !parse_guid(sys_guid, &d.sys_image_guid))
    o.fail("sys_image_guid", "\"" + sys_guid + "\" is not a GUID (xxxx:xxxx:xxxx:xxxx or 0x...)");
  d.node_type = static_cast<ibv_node_type>(o.choice("node_type", IBV_NODE_CA, kNodeTypes));
  const uint32_t link_layer = o.choice("link_layer", IBV_LINK_LAYER_INFINIBAND, kLinkLayers);
  d.fw_ver = o.str("fw_ver", "20.31.1014", 63);
  d.board_id = o.str("board_id", "MT_0000000222", 63);
  d.hca_type = o.str("hca_type", "MT4123", 63);
  d.node_desc = o.str("node_desc", "rdma-sim " + d.name, 63);
  d.num_comp_vectors = static_cast<uint32_t>(o.num("num_comp_vectors", 8, 1, 1024));
  d.devx = parse_devx(o);
  d.counters = parse_counter_sets(o, d.devx.provider);
  d.devlink_reporters = parse_devlink_reporters(o);
  d.lag = parse_lag(o, netdevs);
  parse_sf(o, &d);
  d.attr = default_device_attr();
  d.attr.orig_attr.vendor_id =
      static_cast<uint32_t>(o.num("vendor_id", d.attr.orig_attr.vendor_id, 0, 0xffffffffu));
  d.attr.orig_attr.vendor_part_id = static_cast<uint32_t>(
      o.num("vendor_part_id", d.attr.orig_attr.vendor_part_id, 0, 0xffffffffu));
  d.attr.orig_attr.hw_ver =
      static_cast<uint32_t>(o.num("hw_ver", d.attr.orig_attr.hw_ver, 0, 0xffffffffu));
  if (const json* v = o.get("device_attr")) {
    JsonFields attr(*v, o.path("device_attr"), o.file());
    parse_device_attr(attr, &d.attr);
  }
  const json* ports = o.get("ports");
  if (!ports || !ports->is_array() || ports->empty() || ports->size() > kMaxPorts)
    o.fail("ports", "expected an array of 1 to " + std::to_string(kMaxPorts) + " ports" +
                        (ports ? ", got " + show(*ports) : ""));
  o.check_unknown();
  d.ports.reserve(ports->size());
  for (size_t i = 0; i < ports->size(); ++i) {
    JsonFields port((*ports)[i], o.path("ports") + "[" + std::to_string(i) + "]", o.file());
    bool auto_lid = false;
    d.ports.push_back(parse_port(
        port,
        PortContext{d.name, d.node_guid, static_cast<int>(i + 1), link_layer, d.devx, d.counters},
        netdevs, &auto_lid));
    if (!d.ports.back().is_ethernet()) auto_lids->push_back(auto_lid);
  }
  check_lag(o, d);
  d.finalize();
  return d;
}

}  // namespace

Topology parse_topology(const std::string& text, const std::string& file_name) {
  json root;
  // A topology nests 6 levels deep (devices[].ports[].gids[]); error messages show the offending
  // value, and writing one nested thousands of levels deep would overflow the stack.
  constexpr int kMaxDepth = 32;
  auto not_too_deep = [&](int depth, json::parse_event_t, json&) {
    if (depth > kMaxDepth)
      throw TopologyError(file_name + ": nested deeper than " + std::to_string(kMaxDepth) +
                          " levels");
    return true;
  };
  try {
    root = json::parse(text, not_too_deep, true, /*ignore_comments=*/true);
  } catch (const json::exception& e) {  // also out_of_range: a number too large for a double
    throw TopologyError(file_name + ": invalid JSON: " + e.what());
  }
  JsonFields top(root, "", file_name);
  const json* devices = top.get("devices");
  if (!devices || !devices->is_array() || devices->size() > kMaxDevices)
    top.fail("devices", "expected an array of at most " + std::to_string(kMaxDevices) + " devices");
  Topology t;
  parse_devlink_topology(top, &t);
  top.check_unknown();

  NetdevTable& netdevs = t.netdevs;
  std::vector<bool> auto_lids;  // IB ports in file order: LID left to the SM
  for (size_t i = 0; i < devices->size(); ++i) {
    JsonFields dev((*devices)[i], "devices[" + std::to_string(i) + "]", file_name);
    t.devices.push_back(parse_device(dev, i, netdevs, &auto_lids));
    check_sf(dev, t.devices.back(), {t.devices.begin(), t.devices.end() - 1});
    for (size_t j = 0; j < i; ++j)
      if (t.devices[j].name == t.devices[i].name)
        dev.fail("name", "\"" + t.devices[i].name + "\" is already the name of devices[" +
                             std::to_string(j) + "]");
  }
  // Assign the LIDs the file left to the SM: unique, from 1, skipping those given.
  std::set<uint16_t> used;
  size_t k = 0;
  for (DeviceModel& d : t.devices)
    for (Port& p : d.ports)
      if (!p.is_ethernet() && !auto_lids[k++]) used.insert(p.saved_lid);
  uint16_t next = 1;
  k = 0;
  for (DeviceModel& d : t.devices)
    for (Port& p : d.ports) {
      if (p.is_ethernet() || !auto_lids[k++]) continue;
      while (used.count(next))
        ++next;
      p.saved_lid = next;
      used.insert(next);
      if (p.attr.state == IBV_PORT_ACTIVE || p.attr.state == IBV_PORT_ACTIVE_DEFER)
        p.attr.lid = next;
    }
  return t;
}

namespace {

std::optional<uint32_t> code_of(const std::map<std::string, uint32_t>& names,
                                const std::string& name) {
  auto it = names.find(name);
  if (it == names.end()) return std::nullopt;
  return it->second;
}

// In the order of their codes' meaning (narrow to wide, slow to fast), as people list them.
std::string names_by_code(const std::map<std::string, uint32_t>& names, bool by_lanes) {
  std::vector<std::pair<uint32_t, std::string>> sorted;
  for (const auto& [name, code] : names)
    sorted.emplace_back(by_lanes ? static_cast<uint32_t>(std::stoul(name)) : code, name);
  std::sort(sorted.begin(), sorted.end());
  std::string out;
  for (const auto& [order, name] : sorted)
    out += (out.empty() ? "" : ", ") + name;
  return out;
}

}  // namespace

std::optional<uint8_t> width_code(const std::string& name) {
  const std::optional<uint32_t> code = code_of(width_codes(), name);
  if (!code) return std::nullopt;
  return static_cast<uint8_t>(*code);
}
std::optional<uint32_t> speed_code(const std::string& name) {
  return code_of(speed_codes(), name);
}
std::string width_names() {
  return names_by_code(width_codes(), true);
}
std::string speed_names() {
  return names_by_code(speed_codes(), false);
}

Topology load_topology(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw TopologyError(path + ": cannot open: " + std::strerror(errno));
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_topology(ss.str(), path);
}

uint32_t NetdevTable::ifindex(const std::string& name) {
  for (const auto& [n, idx] : names_)
    if (n == name) return idx;
  while (true) {
    bool taken = false;
    for (const auto& entry : names_)
      taken |= entry.second == next_;
    if (!taken) break;
    ++next_;
  }
  names_.emplace_back(name, next_);
  return next_++;
}

void NetdevTable::set(const std::string& name, uint32_t ifindex) {
  for (auto& entry : names_)
    if (entry.first == name) {
      entry.second = ifindex;
      return;
    }
  names_.emplace_back(name, ifindex);
}

const std::string* NetdevTable::name_of(uint32_t ifindex) const {
  for (const auto& entry : names_)
    if (entry.second == ifindex) return &entry.first;
  return nullptr;
}

bool NetdevTable::known(const std::string& name) const {
  for (const auto& entry : names_)
    if (entry.first == name) return true;
  return false;
}

}  // namespace rdmasim
