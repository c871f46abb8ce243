#include "model.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <iterator>

namespace rdmasim {

void DeviceModel::finalize() {
  ibv_device_attr& a = attr.orig_attr;
  std::snprintf(a.fw_ver, sizeof a.fw_ver, "%s", fw_ver.c_str());
  a.node_guid = htobe64(node_guid);
  a.sys_image_guid = htobe64(sys_image_guid);
  a.phys_port_cnt = static_cast<uint8_t>(ports.size());
}

ShmDevx devx_caps(const DeviceModel& d) {
  ShmDevx c{};
  c.provider = static_cast<uint32_t>(d.devx.provider);
  c.log_max_uctx = d.devx.is_mlx5() ? d.devx.log_max_uctx : 0;
  c.event_cap = d.devx.event_cap;
  c.port_module_event = d.devx.port_module_event;
  c.temp_warn_event = d.devx.temp_warn_event;
  c.general_notification_event = d.devx.general_notification_event;
  c.port_type = !d.ports.empty() && d.ports[0].is_ethernet() ? 1 : 0;
  std::copy(std::begin(d.devx.user_unaffiliated_events), std::end(d.devx.user_unaffiliated_events),
            c.user_unaffiliated_events);
  return c;
}

std::vector<uint32_t> roce_gid_types(devx::Provider provider) {
  if (provider == devx::Provider::kRxe) return {IBV_GID_TYPE_ROCE_V2};
  return {IBV_GID_TYPE_ROCE_V1, IBV_GID_TYPE_ROCE_V2};
}

const char* parent_driver_of(devx::Provider provider) {
  using devx::Provider;
  // By provider, in the order of devx::Provider; rxe and siw have none.
  static constexpr const char* kDrivers[] = {
      "mlx5_core", "mlx4_core", nullptr, nullptr, "bnxt_en", "ice",    "efa",
      "hns3",      "mana",      "qede",  "cxgb4", "erdma",   "be2net", "vmw_pvrdma"};
  static_assert(std::size(kDrivers) == static_cast<size_t>(Provider::kVmwPvrdma) + 1);
  const auto i = static_cast<size_t>(provider);
  return i < std::size(kDrivers) ? kDrivers[i] : nullptr;
}

ibv_transport_type transport_for(ibv_node_type type) {
  switch (type) {
    case IBV_NODE_CA:
    case IBV_NODE_SWITCH:
    case IBV_NODE_ROUTER:
      return IBV_TRANSPORT_IB;
    case IBV_NODE_RNIC:
      return IBV_TRANSPORT_IWARP;
    case IBV_NODE_USNIC:
      return IBV_TRANSPORT_USNIC;
    case IBV_NODE_USNIC_UDP:
      return IBV_TRANSPORT_USNIC_UDP;
    case IBV_NODE_UNSPECIFIED:
      return IBV_TRANSPORT_UNSPECIFIED;
    default:
      return IBV_TRANSPORT_UNKNOWN;
  }
}

std::string guid_to_string(uint64_t guid) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%04x:%04x:%04x:%04x", static_cast<unsigned>(guid >> 48) & 0xffff,
                static_cast<unsigned>(guid >> 32) & 0xffff,
                static_cast<unsigned>(guid >> 16) & 0xffff, static_cast<unsigned>(guid) & 0xffff);
  return buf;
}

std::string gid_to_sysfs(const std::array<uint8_t, 16>& raw) {
  // The kernel's %pI6: eight groups of four hex digits, never compressed.
  char buf[48];
  char* p = buf;
  for (int i = 0; i < 16; i += 2)
    p += std::snprintf(p, 6, i ? ":%02x%02x" : "%02x%02x", raw[i], raw[i + 1]);
  return buf;
}

std::string gid_to_text(const std::array<uint8_t, 16>& raw) {
  char buf[INET6_ADDRSTRLEN];
  return inet_ntop(AF_INET6, raw.data(), buf, sizeof buf) ? buf : gid_to_sysfs(raw);
}

bool parse_gid(const std::string& text, std::array<uint8_t, 16>* raw) {
  return inet_pton(AF_INET6, text.c_str(), raw->data()) == 1;
}

bool ip_to_gid(const std::string& ip, std::array<uint8_t, 16>* raw) {
  in_addr v4;
  if (inet_pton(AF_INET, ip.c_str(), &v4) == 1) {
    raw->fill(0);
    (*raw)[10] = 0xff;
    (*raw)[11] = 0xff;
    std::memcpy(raw->data() + 12, &v4, 4);
    return true;
  }
  return parse_gid(ip, raw);
}

bool parse_guid(const std::string& text, uint64_t* guid) {
  unsigned a, b, c, d;
  char tail;
  if (std::sscanf(text.c_str(), "%4x:%4x:%4x:%4x%c", &a, &b, &c, &d, &tail) == 4 &&
      text.size() == 19) {
    *guid = (uint64_t{a} << 48) | (uint64_t{b} << 32) | (uint64_t{c} << 16) | d;
    return true;
  }
  if (text.size() > 2 && text.size() <= 18 && text[0] == '0' &&
      (text[1] == 'x' || text[1] == 'X')) {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(text.c_str() + 2, &end, 16);
    if (end && *end == '\0') {
      *guid = v;
      return true;
    }
  }
  return false;
}

const char* gid_type_name(uint32_t type) {
  switch (type) {
    case IBV_GID_TYPE_IB:
      return "ib";
    case IBV_GID_TYPE_ROCE_V1:
      return "roce-v1";
    case IBV_GID_TYPE_ROCE_V2:
      return "roce-v2";
    default:
      return "unknown";
  }
}

bool parse_gid_type(const std::string& name, uint32_t* type) {
  if (name == "ib")
    *type = IBV_GID_TYPE_IB;
  else if (name == "roce-v1")
    *type = IBV_GID_TYPE_ROCE_V1;
  else if (name == "roce-v2")
    *type = IBV_GID_TYPE_ROCE_V2;
  else
    return false;
  return true;
}

const CodeNames& port_state_codes() {
  static const CodeNames kNames = {{"down", IBV_PORT_DOWN},
                                   {"init", IBV_PORT_INIT},
                                   {"armed", IBV_PORT_ARMED},
                                   {"active", IBV_PORT_ACTIVE},
                                   {"active_defer", IBV_PORT_ACTIVE_DEFER}};
  return kNames;
}
const CodeNames& phys_state_codes() {
  static const CodeNames kNames = {{"sleep", 1},    {"polling", 2},
                                   {"disabled", 3}, {"port_configuration_training", 4},
                                   {"linkup", 5},   {"link_error_recovery", 6},
                                   {"phy_test", 7}};
  return kNames;
}
const CodeNames& width_codes() {
  static const CodeNames kNames = {{"1x", 1}, {"2x", 16}, {"4x", 2}, {"8x", 4}, {"12x", 8}};
  return kNames;
}
const CodeNames& speed_codes() {
  static const CodeNames kNames = {{"sdr", 1},   {"ddr", 2},   {"qdr", 4},
                                   {"fdr10", 8}, {"fdr", 16},  {"edr", 32},
                                   {"hdr", 64},  {"ndr", 128}, {"xdr", 256}};
  return kNames;
}

const char* code_name(const CodeNames& names, uint32_t code) {
  for (const auto& [name, c] : names)
    if (c == code) return name.c_str();
  return "unknown";
}

const char* port_state_name(uint32_t state) {
  return state == IBV_PORT_NOP ? "nop" : code_name(port_state_codes(), state);
}
const char* phys_state_name(uint32_t phys) {
  return code_name(phys_state_codes(), phys);
}
const char* width_name(uint8_t width) {
  return code_name(width_codes(), width);
}
const char* speed_name(uint32_t speed) {
  return code_name(speed_codes(), speed);
}

}  // namespace rdmasim
