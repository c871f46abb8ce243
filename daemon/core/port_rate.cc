#include "core/port_rate.h"

#include <cerrno>
#include <cmath>
#include <cstddef>

#include "schema/raw_values.h"
#include "schema/record_text.h"

namespace rdma_eventd::daemon {
namespace {

// Reads 1 to max_digits decimal digits at `at`; no sign, no leading zero but a lone "0".
std::optional<uint32_t> digits(std::string_view text, size_t& at, size_t max_digits) {
  size_t n = 0;
  uint32_t v = 0;
  while (at + n < text.size() && n < max_digits && text[at + n] >= '0' && text[at + n] <= '9') {
    v = v * 10 + static_cast<uint32_t>(text[at + n] - '0');
    ++n;
  }
  if (n == 0 || (n > 1 && text[at] == '0')) return std::nullopt;
  if (at + n < text.size() && text[at + n] >= '0' && text[at + n] <= '9') return std::nullopt;
  at += n;
  return v;
}

bool literal(std::string_view text, size_t& at, std::string_view what) {
  if (text.substr(at, what.size()) != what) return false;
  at += what.size();
  return true;
}

LinkSpeed speed_from_display(std::string_view name) {
  for (int i = 1; i <= static_cast<int>(LinkSpeed::kXdr); ++i) {
    const auto s = static_cast<LinkSpeed>(i);
    if (link_speed_display(s) == name) return s;
  }
  return LinkSpeed::kUnknown;
}

}  // namespace

std::optional<SysfsRate> parse_sysfs_rate(std::string_view text) {
  if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  SysfsRate r;
  size_t at = 0;
  // 12 lanes of the fastest speed are 2,400 Gb/s: six digits leave room for speeds to come.
  const std::optional<uint32_t> whole = digits(text, at, 6);
  if (!whole) return std::nullopt;
  r.deci_gbps = *whole * 10 + (literal(text, at, ".5") ? 5 : 0);
  if (!literal(text, at, " Gb/sec (")) return std::nullopt;
  const std::optional<uint32_t> lanes = digits(text, at, 2);
  if (!lanes || (*lanes != 1 && *lanes != 2 && *lanes != 4 && *lanes != 8 && *lanes != 12))
    return std::nullopt;
  r.lanes = *lanes;
  if (!literal(text, at, "X")) return std::nullopt;
  if (literal(text, at, " ")) {
    const size_t start = at;
    while (at < text.size() && at - start < 8 &&
           ((text[at] >= 'A' && text[at] <= 'Z') || (text[at] >= '0' && text[at] <= '9')))
      ++at;
    if (at == start) return std::nullopt;
    r.speed = speed_from_display(text.substr(start, at - start));
  }
  if (!literal(text, at, ")") || at != text.size()) return std::nullopt;
  if (r.deci_gbps == 0) return std::nullopt;
  if (r.speed != LinkSpeed::kUnknown &&
      std::lround(lane_gbps(r.speed) * 10) * r.lanes != static_cast<long>(r.deci_gbps))
    return std::nullopt;
  return r;
}

bool beyond_active_speed(LinkSpeed speed) {
  // NDR (0x80) is the last code that fits; the speeds after it in the enumeration do not.
  return static_cast<int>(speed) > static_cast<int>(LinkSpeed::kNdr);
}

LinkSpeed choose_lane_speed(uint32_t active_speed, const std::optional<SysfsRate>& rate) {
  if (active_speed <= 0xff) {
    const LinkSpeed s = link_speed_from_raw(active_speed);
    if (s != LinkSpeed::kUnknown) return s;
  }
  if (rate && beyond_active_speed(rate->speed)) return rate->speed;
  return LinkSpeed::kUnknown;
}

EffectiveSpeed effective_speed_of(uint32_t port, const PortSpeedQuery& query) {
  EffectiveSpeed e;
  e.port = port;
  if (!query) {
    e.unknown = "not_in_libibverbs";
    return e;
  }
  uint64_t speed = 0;
  const int err = query(port, &speed);
  // A provider without the operation answers EOPNOTSUPP (libibverbs' dummy_ops.c), as does a
  // kernel without UVERBS_METHOD_QUERY_PORT_SPEED.
  if (err == EOPNOTSUPP || err == EPROTONOSUPPORT)
    e.unknown = "not_supported";
  else if (err != 0)
    e.unknown = "query_failed";
  else
    e.gbps = static_cast<double>(speed) / 10;
  return e;
}

}  // namespace rdma_eventd::daemon
