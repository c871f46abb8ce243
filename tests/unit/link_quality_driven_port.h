// One port's link quality driven by hand (link_quality_test.cc, link_quality_unknown_test.cc,
// counter_width_test.cc): samples at seconds after its first, with the rates and counters a test
// names.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/link_quality.h"

namespace rdma_eventd::daemon::link_quality_test {

using Changes = std::vector<LinkQualityChange>;
using Kind = LinkQualityChange::Kind;

constexpr int64_t kSecond = 1000000;
constexpr int64_t kBootMono = 4000 * kSecond;
constexpr int64_t kWallAtBoot = 1795342530000000;

const LinkRate kEdr4x{4, LinkSpeed::kEdr};  // 100 Gb/s
const LinkRate kHdr4x{4, LinkSpeed::kHdr};  // 200 Gb/s
const LinkRate kNdr4x{4, LinkSpeed::kNdr};  // 400 Gb/s
const LinkRate kXdr4x{4, LinkSpeed::kXdr};  // 800 Gb/s
const LinkRate kUnknownRate{};

const std::string kSymbols(kSymbolError);
const std::string kRecoveries(kLinkErrorRecovery);
const std::string kDowned(kLinkDowned);
const std::string kHwDowned(kHwLinkDowned);
const std::string kIntegrity = "local_link_integrity_errors";
const std::string kOutOfSequence = "hw_counters/out_of_sequence";

// `seconds` after the port's first sample.
inline Instant at(int64_t seconds) {
  const int64_t mono = kBootMono + seconds * kSecond;
  return {.wall_us = kWallAtBoot + mono, .mono_us = mono};
}

inline CounterValue counter(const std::string& name, uint64_t value) {
  return {name, counter_bits(name), value};
}

inline LinkQualityChange clean(LinkFault fault, const std::string& name, uint64_t value) {
  LinkQualityChange c;
  c.kind = Kind::kClean;
  c.counter = name;
  c.fault = fault;
  c.value = value;
  return c;
}

inline LinkQualityChange about(Kind kind, const std::string& name, uint64_t value,
                               uint64_t count = 0) {
  LinkQualityChange c;
  c.kind = kind;
  c.counter = name;
  c.value = value;
  c.count = count;
  return c;
}

// One port sampled by hand.
class DrivenPort {
 public:
  explicit DrivenPort(LinkQualityConfig config = {}) : config_(std::move(config)) {}

  Changes up(int64_t seconds, std::vector<CounterValue> counters, LinkRate rate = kNdr4x,
             uint32_t downs_seen = 0) {
    return sample(seconds, {rate, true, downs_seen, std::move(counters)});
  }
  Changes down(int64_t seconds, std::vector<CounterValue> counters, uint32_t downs_seen = 0) {
    return sample(seconds, {kUnknownRate, false, downs_seen, std::move(counters)});
  }
  Changes advance(int64_t seconds) {
    Changes out;
    port_.advance(config_, at(seconds), out);
    return out;
  }
  std::optional<int64_t> next_deadline() const { return port_.next_deadline(config_); }
  PortLinkQuality& port() { return port_; }

 private:
  Changes sample(int64_t seconds, const PortSample& s) {
    Changes out;
    port_.sample(config_, s, at(seconds), out);
    return out;
  }

  LinkQualityConfig config_;
  PortLinkQuality port_;
};

inline LinkQualityConfig with_transport(GrowthRule rule) {
  LinkQualityConfig config;
  config.transport.push_back(std::move(rule));
  return config;
}

}  // namespace rdma_eventd::daemon::link_quality_test
