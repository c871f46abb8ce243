// What the unit tests of link quality share (link_quality_test.cc,
// link_quality_restore_test.cc): the changes a port's counters make, as the tests expect them,
// and how one prints when it is not the one expected.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "core/link_quality.h"

namespace rdma_eventd::daemon {

inline void PrintTo(const LinkQualityChange& c, std::ostream* os) {
  static constexpr const char* kKinds[] = {"bad",         "clean",   "pegged", "reset",
                                           "hidden_down", "unknown", "judged"};
  *os << "{" << kKinds[static_cast<int>(c.kind)] << " " << c.counter << " "
      << link_fault_name(c.fault) << " count " << c.count << " allowed " << c.allowed << " window "
      << c.window_s << " ber " << c.ber << " value " << c.value << "}";
}

// The link went bad for `fault`: counter `name` grew by `count` within `window_s`, where the
// rule allows `allowed`, and now reads `value`.
inline LinkQualityChange bad_rule(LinkFault fault, const std::string& name, uint64_t count,
                                  uint64_t allowed, uint32_t window_s, uint64_t value) {
  return {.kind = LinkQualityChange::Kind::kBad,
          .counter = name,
          .fault = fault,
          .count = count,
          .allowed = allowed,
          .window_s = window_s,
          .value = value};
}

// The link went bad for its bit errors: symbol_error's growth, with the bit error rate it
// gives at `rate`.
inline LinkQualityChange bad_bits(uint64_t count, uint64_t allowed, uint32_t window_s,
                                  LinkRate rate, uint64_t value) {
  LinkQualityChange c =
      bad_rule(LinkFault::kBitErrors, std::string(kSymbolError), count, allowed, window_s, value);
  c.ber = static_cast<double>(count) / (rate.gbps() * 1e9 * window_s);
  return c;
}

// The bad_bits() of a window the link was up for `up_s` seconds of.
inline LinkQualityChange bad_bits_up(uint64_t count, uint64_t allowed, uint32_t window_s,
                                     double up_s, LinkRate rate, uint64_t value) {
  LinkQualityChange c = bad_bits(count, allowed, window_s, rate, value);
  c.ber = static_cast<double>(count) / (rate.gbps() * 1e9 * up_s);
  return c;
}

}  // namespace rdma_eventd::daemon
