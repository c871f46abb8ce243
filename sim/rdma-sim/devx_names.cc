#include "devx_names.h"

#include <cstdio>
#include <cstdlib>

#include "rdma_eventd/internal/mlx5_module_errors.h"

namespace rdmasim::devx {

const NameTable& event_types() {
  static const NameTable kTable = {
      {"comp", 0x00},
      {"path_mig", 0x01},
      {"comm_est", 0x02},
      {"sq_drained", 0x03},
      {"cq_error", 0x04},
      {"wq_catas_error", 0x05},
      {"path_mig_failed", 0x07},
      {"internal_error", 0x08},
      {"port_change", kEventPortChange},
      {"cmd", kEventCmd},
      {"page_request", kEventPageRequest},
      {"page_fault", 0x0c},
      {"nic_vport_change", 0x0d},
      {"esw_functions_changed", 0x0e},
      {"vhca_state_change", 0x0f},
      {"wq_inval_req_error", 0x10},
      {"wq_access_error", 0x11},
      {"srq_catas_error", 0x12},
      {"srq_last_wqe", 0x13},
      {"srq_rq_limit", 0x14},
      {"gpio_event", 0x15},
      {"port_module_event", kEventPortModule},
      {"temp_warn_event", kEventTempWarn},
      {"xrq_error", 0x18},
      {"remote_config", 0x19},
      {"db_bf_congestion", 0x1a},
      {"stall_event", 0x1b},
      {"dct_drained", 0x1c},
      {"dct_key_violation", 0x1d},
      {"fpga_error", 0x20},
      {"fpga_qp_error", 0x21},
      {"general_event", kEventGeneral},
      {"monitor_counter", 0x24},
      {"pps_event", 0x25},
      {"device_tracer", 0x26},
      {"object_change", 0x27},
  };
  return kTable;
}

const NameTable& module_statuses() {
  static const NameTable kTable = {
      {"plugged", 0x1}, {"unplugged", 0x2}, {"error", 0x3}, {"disabled", 0x4}};
  return kTable;
}

const NameTable& module_errors() {
  static const NameTable kTable = [] {
    NameTable t;
    for (const rdma_eventd::internal::Mlx5ModuleError& e : rdma_eventd::internal::kMlx5ModuleErrors)
      t.push_back({e.name, e.code});
    return t;
  }();
  return kTable;
}

const NameTable& general_subtypes() {
  static const NameTable kTable = {{"delay_drop_timeout", 0x1},
                                   {"pci_power_change", 0x5},
                                   {"fw_live_patch", 0x7},
                                   {"pci_sync_for_fw_update", 0x8}};
  return kTable;
}

const NameTable& port_change_subtypes() {
  static const NameTable kTable = {{"down", 1}, {"active", 4}, {"initialized", 5}, {"lid", 6},
                                   {"pkey", 7}, {"guid", 8},   {"client_rereg", 9}};
  return kTable;
}

const NameTable& providers() {
  static const NameTable kTable = {
      {"mlx5", static_cast<uint32_t>(Provider::kMlx5)},
      {"mlx4", static_cast<uint32_t>(Provider::kMlx4)},
      {"rxe", static_cast<uint32_t>(Provider::kRxe)},
      {"siw", static_cast<uint32_t>(Provider::kSiw)},
      {"bnxt_re", static_cast<uint32_t>(Provider::kBnxtRe)},
      {"irdma", static_cast<uint32_t>(Provider::kIrdma)},
      {"efa", static_cast<uint32_t>(Provider::kEfa)},
      {"hns", static_cast<uint32_t>(Provider::kHns)},
      {"mana", static_cast<uint32_t>(Provider::kMana)},
      {"qedr", static_cast<uint32_t>(Provider::kQedr)},
      {"cxgb4", static_cast<uint32_t>(Provider::kCxgb4)},
      {"erdma", static_cast<uint32_t>(Provider::kErdma)},
      {"ocrdma", static_cast<uint32_t>(Provider::kOcrdma)},
      {"vmw_pvrdma", static_cast<uint32_t>(Provider::kVmwPvrdma)},
  };
  return kTable;
}

const char* name_of(const NameTable& table, uint32_t value) {
  for (const NamedValue& n : table)
    if (n.value == value) return n.name;
  return nullptr;
}

std::optional<uint32_t> find_name(const NameTable& table, const std::string& name) {
  for (const NamedValue& n : table)
    if (name == n.name) return n.value;
  return std::nullopt;
}

std::optional<uint32_t> parse_named(const NameTable& table, const std::string& text, uint32_t max) {
  if (auto v = find_name(table, text)) return v;
  const bool hex = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
  const std::string digits = hex ? text.substr(2) : text;
  if (digits.empty() || digits.size() > 8 ||
      digits.find_first_not_of(hex ? "0123456789abcdefABCDEF" : "0123456789") != std::string::npos)
    return std::nullopt;
  const unsigned long v = std::strtoul(digits.c_str(), nullptr, hex ? 16 : 10);
  if (v > max) return std::nullopt;
  return static_cast<uint32_t>(v);
}

std::optional<std::vector<uint8_t>> parse_hex(const std::string& text, size_t max_bytes) {
  const bool prefixed = text.size() >= 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
  const std::string digits = prefixed ? text.substr(2) : text;
  if (digits.size() % 2 != 0 || digits.size() / 2 > max_bytes ||
      digits.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos)
    return std::nullopt;
  std::vector<uint8_t> bytes;
  for (size_t i = 0; i < digits.size(); i += 2)
    bytes.push_back(static_cast<uint8_t>(std::strtoul(digits.substr(i, 2).c_str(), nullptr, 16)));
  return bytes;
}

std::string names_list(const NameTable& table) {
  std::string out;
  for (const NamedValue& n : table)
    out += (out.empty() ? "" : ", ") + std::string(n.name);
  return out;
}

std::string describe(const NameTable& table, uint32_t value) {
  char hex[16];
  std::snprintf(hex, sizeof hex, "0x%02x", value);
  const char* name = name_of(table, value);
  return name ? std::string(name) + " (" + hex + ")" : std::string(hex);
}

}  // namespace rdmasim::devx
