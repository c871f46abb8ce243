#include "core/counter_width.h"

#include <utility>

#include "rdma_eventd/internal/hw_counter_widths.h"

namespace rdma_eventd::daemon {
namespace {

constexpr std::string_view kHwPrefix = "hw_counters/";

bool is_driver(std::string_view parent_driver, std::string_view driver) {
  return parent_driver == driver ||
         (parent_driver.size() > driver.size() + 1 && parent_driver.starts_with(driver) &&
          parent_driver[driver.size()] == '.');
}

}  // namespace

CounterDriver counter_driver(std::string_view parent_driver) {
  return is_driver(parent_driver, "mlx5_core") ? CounterDriver::kMlx5 : CounterDriver::kOther;
}

CounterValue counter_value(CounterDriver driver, std::string name, uint64_t value) {
  CounterValue c;
  c.value = value;
  const std::string_view n = name;
  if (!n.starts_with(kHwPrefix)) {
    c.bits = counter_bits(n);
  } else if (driver == CounterDriver::kMlx5 &&
             internal::is_mlx5_q_counter(n.substr(kHwPrefix.size()))) {
    c.bits = internal::kMlx5QCounterBits;
    c.wraps = true;
  }
  c.name = std::move(name);
  return c;
}

std::optional<uint64_t> growth_across_wrap(uint64_t previous, uint64_t value, uint8_t bits) {
  const uint64_t max = counter_max(bits);
  if (value >= previous || previous > max || bits <= kWrapShareLog2) return std::nullopt;
  // Both terms are within the range, so the sum fits even at 64 bits: max - previous < max.
  const uint64_t growth = (max - previous) + value + 1;
  const uint64_t share = uint64_t{1} << (bits - kWrapShareLog2);
  if (growth > share) return std::nullopt;
  return growth;
}

}  // namespace rdma_eventd::daemon
