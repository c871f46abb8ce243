// The error types of an mlx5 PORT_MODULE_EVENT (mlx5 core events.h, MLX5_MODULE_EVENT_ERROR_*),
// named as the kernel's constants in lower case without their prefix: the names the daemon puts in
// module_error records and rdma-sim takes in its commands.
#pragma once

#include <array>
#include <cstdint>

namespace rdma_eventd::internal {

struct Mlx5ModuleError {
  const char* name;
  uint32_t code;
};

inline constexpr std::array<Mlx5ModuleError, 9> kMlx5ModuleErrors = {{
    {"power_budget_exceeded", 0x0},
    {"long_range_for_non_mlnx", 0x1},
    {"bus_stuck", 0x2},
    {"no_eeprom_retry_timeout", 0x3},
    {"enforce_part_number_list", 0x4},
    {"unknown_identifier", 0x5},
    {"high_temperature", 0x6},
    {"bad_cable", 0x7},
    {"pcie_power_slot_exceeded", 0xc},
}};

}  // namespace rdma_eventd::internal
