// The names rdma-sim gives DEVX things in topology files, commands and their output: EQE types,
// module statuses and error types, general event and port change subtypes, providers. The numbers
// are the kernel's (include/linux/mlx5/device.h, drivers/net/ethernet/mellanox/mlx5/core/lib/
// events.h); names are the kernel's constants in lower case without their prefix.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/devx.h"

namespace rdmasim::devx {

struct NamedValue {
  const char* name;
  uint32_t value;
};
using NameTable = std::vector<NamedValue>;

const NameTable& event_types();       // port_change 0x09, port_module_event 0x16, ...
const NameTable& module_statuses();   // plugged 1, unplugged 2, error 3, disabled 4
const NameTable& module_errors();     // power_budget_exceeded 0 ... pcie_power_slot_exceeded 0xc
const NameTable& general_subtypes();  // pci_power_change 5, fw_live_patch 7, ...
const NameTable& port_change_subtypes();  // down 1, active 4, lid 6, pkey 7, guid 8, ...
const NameTable& providers();             // mlx5, rxe, bnxt_re, irdma, ...

// The name of a value, or nullptr.
const char* name_of(const NameTable& table, uint32_t value);
// The value of a name of the table; nullopt for anything else.
std::optional<uint32_t> find_name(const NameTable& table, const std::string& name);
// A name of the table, or a number (decimal, or hex with 0x) up to max; nullopt otherwise.
std::optional<uint32_t> parse_named(const NameTable& table, const std::string& text, uint32_t max);
// Bytes in hex ("0102ff", optionally "0x0102ff"), at most max_bytes of them; nullopt otherwise.
std::optional<std::vector<uint8_t>> parse_hex(const std::string& text, size_t max_bytes);
// "port_change, port_module_event, ..." for error messages.
std::string names_list(const NameTable& table);
// "port_module_event (0x16)" or "0x30".
std::string describe(const NameTable& table, uint32_t value);

}  // namespace rdmasim::devx
