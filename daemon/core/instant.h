// One reading of the daemon's two clocks, taken once by the caller and passed to the pure
// models (port health, the journal budget) so that tests drive time and the models never read
// a clock themselves.
#pragma once

#include <cstdint>

namespace rdma_eventd::daemon {

struct Instant {
  // CLOCK_MONOTONIC: what windows, quiet periods, intervals and deadlines are measured in. It
  // never jumps, and it starts again only when the host boots.
  int64_t mono_us = 0;
  // CLOCK_REALTIME: only what is shown to people ("since 2026-11-22T03:14:23Z").
  int64_t wall_us = 0;

  friend bool operator==(const Instant&, const Instant&) = default;
};

inline constexpr int64_t kMicrosPerSecond = 1000000;

}  // namespace rdma_eventd::daemon
