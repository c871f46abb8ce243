// The widths of the PMA's port counters (ports/N/counters/), as Linux
// drivers/infiniband/core/sysfs.c's PORT_PMA_ATTR declares them: what the daemon takes as a
// counter's maximum (where it is pegged) and what rdma-sim gives its counters/ files.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace rdma_eventd::internal {

struct CounterWidth {
  std::string_view name;  // a literal: data() is its NUL-terminated file name
  uint8_t bits;
};

// The error counters, in pma_attrs[] order. They have these widths in every table; only the data
// and packet counters grow to 64 bits (pma_attrs_ext[]).
inline constexpr std::array<CounterWidth, 12> kPmaErrorCounterWidths = {{
    {"symbol_error", 16},
    {"link_error_recovery", 8},
    {"link_downed", 8},
    {"port_rcv_errors", 16},
    {"port_rcv_remote_physical_errors", 16},
    {"port_rcv_switch_relay_errors", 16},
    {"port_xmit_discards", 16},
    {"port_xmit_constraint_errors", 8},
    {"port_rcv_constraint_errors", 8},
    {"local_link_integrity_errors", 4},
    {"excessive_buffer_overrun_errors", 4},
    {"VL15_dropped", 16},
}};

// The one data counter that stays 32 bits in the extended table too.
inline constexpr CounterWidth kPortXmitWaitWidth = {"port_xmit_wait", 32};

}  // namespace rdma_eventd::internal
