// A PortHealthModel driven by hand: records made here, a clock the test moves.
#pragma once

#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "core/port_health.h"

namespace rdma_eventd::daemon {

inline void PrintTo(const HealthTransition& t, std::ostream* os) {
  *os << "{" << t.device << " port " << t.port << ": "
      << (t.previous ? health_name(*t.previous) : "(none)") << " -> " << health_name(t.health)
      << " (" << reason_name(t.reason) << ") at " << t.time.mono_us << " seq " << t.cause_seq
      << ", downs " << t.downs_in_window << ", link " << (t.link_up ? "up" : "down") << ", rate "
      << t.rate.gbps() << ", last healthy " << t.last_healthy.gbps() << ", expected "
      << t.expected.gbps() << ", errors " << t.errors_in_window << "}";
}

inline constexpr int64_t kSecond = 1000000;
inline constexpr int64_t kWallBase = 1795342530000000;  // 2026-11-22T...Z

inline const std::string kGuid0 = "0c42:a103:00f6:5e44";
inline const std::string kGuid1 = "0c42:a103:006d:0b3a";

// A device pattern as the configuration reads one (a name, a glob or a node GUID).
inline DevicePattern device_pattern(std::string_view text) {
  return *DevicePattern::parse(text, nullptr);
}

class PortHealthTest : public ::testing::Test {
 protected:
  using Transitions = PortHealthModel::Transitions;

  explicit PortHealthTest(HealthConfig config = HealthConfig{}) : model_(std::move(config)) {}

  Instant now() const { return {.wall_us = kWallBase + mono_, .mono_us = mono_}; }
  void at(int64_t seconds) { mono_ = 1000 * kSecond + seconds * kSecond; }  // boot + 1000 s
  int64_t mono_at(int64_t seconds) const { return 1000 * kSecond + seconds * kSecond; }
  Instant instant_at(int64_t seconds) const {
    return {.wall_us = kWallBase + mono_at(seconds), .mono_us = mono_at(seconds)};
  }

  static PortInfo port(uint32_t n, PortState state, uint32_t lanes = 4,
                       LinkSpeed speed = LinkSpeed::kHdr) {
    PortInfo p;
    p.port = n;
    p.link_layer = LinkLayer::kInfiniband;
    p.state = state;
    p.phys_state = state == PortState::kActive ? PhysState::kLinkUp : PhysState::kPolling;
    p.lanes = lanes;
    p.speed = speed;
    return p;
  }

  Record record(EventKind kind, const std::string& device, const std::string& guid) {
    Record r;
    r.seq = ++seq_;
    r.event = kind;
    r.device = device;
    r.node_guid = guid;
    return r;
  }

  Record port_record(EventKind kind, const std::string& device, PortInfo info,
                     const std::string& guid = kGuid0) {
    Record r = record(kind, device, guid);
    r.port = info.port;
    r.port_info = info;
    return r;
  }

  Transitions feed(const Record& r) {
    Transitions out;
    model_.on_record(r, now(), out);
    return out;
  }

  // The link of mlx5_0 port `n` goes down / comes up (port_err / port_active records).
  Transitions down(uint32_t n = 1, const std::string& device = "mlx5_0") {
    return feed(port_record(EventKind::kPortErr, device, port(n, PortState::kDown)));
  }
  Transitions up(uint32_t n = 1, uint32_t lanes = 4, const std::string& device = "mlx5_0") {
    return feed(port_record(EventKind::kPortActive, device, port(n, PortState::kActive, lanes)));
  }

  Transitions advance() {
    Transitions out;
    model_.advance(now(), out);
    return out;
  }

  // The transition a test expects, with the fields every transition of mlx5_0 port 1 at 4x
  // HDR shares under the default thresholds; the test sets what differs.
  HealthTransition want(PortHealth health, std::optional<PortHealth> previous,
                        HealthReason reason) const {
    HealthTransition t;
    t.device = "mlx5_0";
    t.node_guid = kGuid0;
    t.port = 1;
    t.health = health;
    t.previous = previous;
    t.reason = reason;
    t.time = now();
    t.cause_seq = seq_;
    t.window_s = model_.config().flap_window_s;
    t.quiet_s = model_.config().flap_quiet_s;
    t.link_up = health == PortHealth::kHealthy || health == PortHealth::kDegraded;
    t.rate = {4, LinkSpeed::kHdr};
    t.last_healthy = {4, LinkSpeed::kHdr};
    return t;
  }

  PortHealth health_of(uint32_t n = 1, const std::string& device = "mlx5_0") const {
    auto v = model_.verdict(device, n, now());
    EXPECT_TRUE(v.has_value()) << device << " port " << n;
    return v ? v->health : PortHealth::kHealthy;
  }

  PortHealthModel model_;
  int64_t mono_ = 1000 * kSecond;
  uint64_t seq_ = 0;
};

}  // namespace rdma_eventd::daemon
