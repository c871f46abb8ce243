// How wide a port's counter is and what it does at its maximum, by the driver of its device
// (docs/health.md, "Counter widths and wraps"). Pure.
//
// counters/ (the PMA's) keep their IBA widths and saturate: all ones is pegged. hw_counters/ are
// the driver's: mlx5's Q counters (out_of_sequence, packet_seq_err, local_ack_timeout_err, ...)
// are 32-bit firmware fields that wrap to 0 (rdma_eventd/internal/hw_counter_widths.h cites the
// driver); its other hw_counters, rxe's and any other driver's are taken as 64-bit.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/link_quality.h"

namespace rdma_eventd::daemon {

// The drivers whose hw_counters/ widths the daemon knows.
enum class CounterDriver : uint8_t { kOther, kMlx5 };

// By a device's parent driver (DeviceEntry::parent_driver): mlx5_core and its auxiliary drivers
// ("mlx5_core.sf" for a sub-function) are mlx5; anything else, "" (rxe, siw) included, is not.
CounterDriver counter_driver(std::string_view parent_driver);

// A counter (as CounterValue::name) of a device of `driver` read as `value`, with its width.
CounterValue counter_value(CounterDriver driver, std::string name, uint64_t value);

// A wrap is taken only where the growth it implies is at most this share of the counter's
// range (2^30 of a 32-bit counter); a larger drop is a reset (docs/health.md says why).
inline constexpr unsigned kWrapShareLog2 = 2;  // a quarter

// A counter `bits` wide that wraps read `value` after `previous`, lower: the growth across one
// wrap, (max - previous) + value + 1, where it is at most a quarter of the range; none where
// the drop is a reset (or `previous` is over the width: the width is not what the counter has).
std::optional<uint64_t> growth_across_wrap(uint64_t previous, uint64_t value, uint8_t bits);

}  // namespace rdma_eventd::daemon
