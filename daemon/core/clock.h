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

}  // namespace rdma_eventd::daemon
