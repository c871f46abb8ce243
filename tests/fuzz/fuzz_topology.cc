// Fuzzes the simulator's topology loader (parse_topology, sim/rdma-sim/topology.cc) with arbitrary
// file contents. Beyond "no crash, no leak, no undefined behaviour", it checks:
//  - the only exception is TopologyError, and its message names the file;
//  - a topology that loads fits the shared-memory layout the stand-in libibverbs reads (device,
//    port, GID and P_Key counts, name lengths), and its tables are consistent: GID and P_Key
//    tables of the declared lengths, no zero or repeated GID, unique device names, one ifindex
//    per netdev and one netdev per ifindex, and the LIDs handed out like an SM would (nonzero,
//    unique, never one the file gave; none active on a port that is down);
//  - loading is deterministic: the same text gives the same fabric.
#include <net/if.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <tuple>

#include "common/shm_layout.h"
#include "fuzz_check.h"
#include "model.h"
#include "topology.h"

namespace {

using namespace rdmasim;
using nlohmann::json;

const std::string kFile = "fuzz.json";

bool port_up(const Port& p) {
  return p.attr.state == IBV_PORT_ACTIVE || p.attr.state == IBV_PORT_ACTIVE_DEFER;
}

void check_netdev(NetdevTable& netdevs, const std::string& name, uint32_t ifindex,
                  const std::string& where) {
  FUZZ_CHECK(netdevs.known(name), where + ": " + name);
  FUZZ_CHECK(netdevs.ifindex(name) == ifindex, where + ": " + name);
}

void check_port(const Port& p, const std::string& where) {
  FUZZ_CHECK(p.attr.gid_tbl_len >= 1 && p.attr.gid_tbl_len <= kMaxGids, where);
  FUZZ_CHECK(p.attr.pkey_tbl_len >= 1 && p.attr.pkey_tbl_len <= kMaxPkeys, where);
  FUZZ_CHECK(p.gids.size() == static_cast<size_t>(p.attr.gid_tbl_len), where);
  FUZZ_CHECK(p.pkeys.size() == p.attr.pkey_tbl_len, where);
  FUZZ_CHECK(p.netdev.size() < IF_NAMESIZE, where);
  std::set<std::tuple<std::array<uint8_t, 16>, uint32_t>> seen;
  for (const Gid& g : p.gids) {
    if (!g.valid) continue;
    FUZZ_CHECK(g.raw != (std::array<uint8_t, 16>{}), where + ": a zero GID is an empty slot");
    FUZZ_CHECK(seen.emplace(g.raw, g.type).second,
               where + ": GID " + gid_to_text(g.raw) + " twice");
    FUZZ_CHECK((g.type == IBV_GID_TYPE_IB) != p.is_ethernet(), where);
    FUZZ_CHECK(g.netdev.size() < IF_NAMESIZE, where);
    FUZZ_CHECK(g.netdev.empty() == (g.ifindex == 0), where);
  }
  if (p.is_ethernet()) {
    FUZZ_CHECK(p.attr.lid == 0 && p.attr.sm_lid == 0, where);
  } else {
    FUZZ_CHECK(p.attr.lid == (port_up(p) ? p.saved_lid : 0), where);
    FUZZ_CHECK(p.saved_lid <= 0xbfff, where + ": not a unicast LID");
  }
}

// Every netdev the file names, with its ifindex: as on a host, one ifindex per netdev.
void check_netdev_names(const Topology& t) {
  std::map<uint32_t, std::string> by_ifindex;
  for (const DeviceModel& d : t.devices) {
    for (const Port& p : d.ports) {
      auto note = [&](const std::string& name, uint32_t ifindex) {
        if (name.empty()) return;
        auto [it, added] = by_ifindex.emplace(ifindex, name);
        FUZZ_CHECK(added || it->second == name, "ifindex " + std::to_string(ifindex) + " is both " +
                                                    it->second + " and " + name);
      };
      note(p.netdev, p.netdev_ifindex);
      for (const Gid& g : p.gids)
        if (g.valid) note(g.netdev, g.ifindex);
    }
  }
}

void check_topology(Topology& t) {
  FUZZ_CHECK(t.devices.size() <= static_cast<size_t>(kMaxDevices), kFile);
  check_netdev_names(t);
  std::set<std::string> names;
  for (size_t i = 0; i < t.devices.size(); ++i) {
    const DeviceModel& d = t.devices[i];
    const std::string where = "devices[" + std::to_string(i) + "]";
    FUZZ_CHECK(!d.name.empty() && d.name.size() < static_cast<size_t>(kNameMax), where);
    FUZZ_CHECK(names.insert(d.name).second, where + ": name " + d.name + " twice");
    FUZZ_CHECK(!d.ports.empty() && d.ports.size() <= static_cast<size_t>(kMaxPorts), where);
    FUZZ_CHECK(d.attr.orig_attr.phys_port_cnt == d.ports.size(), where);
    FUZZ_CHECK(d.fw_ver.size() < sizeof d.attr.orig_attr.fw_ver, where);
    for (size_t j = 0; j < d.ports.size(); ++j) {
      const Port& p = d.ports[j];
      const std::string port_where = where + ".ports[" + std::to_string(j) + "]";
      check_port(p, port_where);
      // A netdev has one ifindex, whichever port or GID names it.
      if (!p.netdev.empty()) check_netdev(t.netdevs, p.netdev, p.netdev_ifindex, port_where);
      for (const Gid& g : p.gids) {
        if (g.valid && !g.netdev.empty()) check_netdev(t.netdevs, g.netdev, g.ifindex, port_where);
      }
    }
  }
}

// The LIDs the loader chose for the InfiniBand ports whose file left them out: nonzero, distinct,
// and none that the file gave to another port. `root` is the file as the loader read it.
void check_assigned_lids(const Topology& t, const json& root) {
  std::set<uint16_t> given, assigned;
  for (size_t i = 0; i < t.devices.size(); ++i) {
    const json& ports = root["devices"][i]["ports"];
    for (size_t j = 0; j < t.devices[i].ports.size(); ++j) {
      const Port& p = t.devices[i].ports[j];
      if (p.is_ethernet()) continue;
      const auto lid = ports[j].find("lid");
      if (lid != ports[j].end() && !lid->is_null()) {
        given.insert(p.saved_lid);
      } else {
        FUZZ_CHECK(p.saved_lid != 0, "an assigned LID is 0");
        FUZZ_CHECK(assigned.insert(p.saved_lid).second,
                   "LID " + std::to_string(p.saved_lid) + " assigned twice");
      }
    }
  }
  for (uint16_t lid : assigned) {
    FUZZ_CHECK(!given.count(lid), "LID " + std::to_string(lid) + " assigned and given");
  }
}

// What two loads of the same text must agree on.
std::string summary(const Topology& t) {
  std::string out;
  for (const DeviceModel& d : t.devices) {
    out += d.name + " " + guid_to_string(d.node_guid) + " " + d.node_desc + "\n";
    for (const Port& p : d.ports) {
      out += " " + std::to_string(p.attr.state) + " " + std::to_string(p.saved_lid) + " " +
             std::to_string(p.attr.lid) + " " + p.netdev + " " + std::to_string(p.netdev_ifindex);
      for (const Gid& g : p.gids)
        if (g.valid) out += " " + gid_to_text(g.raw) + "/" + std::to_string(g.ifindex);
      for (uint16_t k : p.pkeys)
        out += " " + std::to_string(k);
      out += "\n";
    }
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  Topology t;
  try {
    t = parse_topology(text, kFile);
  } catch (const TopologyError& e) {
    const std::string what = e.what();
    FUZZ_CHECK(what.starts_with(kFile + ": "), what);
    return 0;
  }
  const std::string first = summary(t);
  check_topology(t);
  check_assigned_lids(t, json::parse(text, nullptr, false, /*ignore_comments=*/true));
  FUZZ_CHECK(summary(parse_topology(text, kFile)) == first, first);
  return 0;
}
