// The daemon's two clocks, in microseconds: wall time for what records and replies say, and
// monotonic time for what is measured (rates, durations, timestamps systemd compares).
#pragma once

#include <time.h>

#include <cstdint>

namespace rdma_eventd::daemon {

inline int64_t clock_us(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

inline int64_t realtime_us() {
  return clock_us(CLOCK_REALTIME);
}

inline int64_t monotonic_us() {
  return clock_us(CLOCK_MONOTONIC);
}

inline constexpr int64_t kMicrosPerSecond = 1000000;

// Both clocks read at one moment: what a callback stamps its records with and measures from,
// and what the pure models (device lifecycle, port health, the journal budget) are handed, so
// that tests drive time and the models never read a clock themselves.
struct Instant {
  // CLOCK_REALTIME: only what is shown (record times, "since 2026-11-22T03:14:23Z").
  int64_t wall_us = 0;
  // CLOCK_MONOTONIC: what windows, quiet periods, durations and deadlines are measured in. It
  // never jumps, and it starts again only when the host boots.
  int64_t mono_us = 0;

  friend bool operator==(const Instant&, const Instant&) = default;
};

// Where code that keeps time reads it, so that tests can drive time instead of waiting for it.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual Instant now() const = 0;
};

class SystemClock final : public Clock {
 public:
  Instant now() const override { return {realtime_us(), monotonic_us()}; }
};

inline const Clock& system_clock() {
  static const SystemClock clock;
  return clock;
}

}  // namespace rdma_eventd::daemon
