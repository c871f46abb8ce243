// A token bucket: at most `rate` takes per second on average, and bursts of up to `rate`.
// Pure: the caller passes the time (a monotonic clock in microseconds, read once per loop
// callback), so tests drive it without a clock and the hub never polls a timer for it.
#pragma once

#include <algorithm>
#include <cstdint>

namespace rdma_eventd::daemon {

class TokenBucket {
 public:
  // Starts full.
  TokenBucket(uint32_t rate, int64_t now_us) : rate_(rate), level_(capacity()), last_us_(now_us) {}

  // Takes one token if there is one.
  bool take(int64_t now_us) {
    refill(now_us);
    if (level_ < kUnit) return false;
    level_ -= kUnit;
    return true;
  }

  // A new rate (and burst) from now on, starting full: a reload that raises the limit takes
  // effect at once, and one that lowers it allows at most the new burst.
  void set_rate(uint32_t rate, int64_t now_us) {
    rate_ = rate;
    level_ = capacity();
    last_us_ = std::max(last_us_, now_us);
  }

  uint32_t rate() const { return rate_; }

 private:
  // One token is kUnit units, and a second refills `rate` tokens: integer arithmetic, exact.
  static constexpr uint64_t kUnit = 1000000;

  uint64_t capacity() const { return uint64_t{rate_} * kUnit; }

  void refill(int64_t now_us) {
    // A clock that went back adds nothing; more than a second refills the bucket anyway, and
    // capping the elapsed time keeps the product far from overflowing.
    const int64_t elapsed = std::clamp<int64_t>(now_us - last_us_, 0, 1000000);
    last_us_ = std::max(last_us_, now_us);
    level_ = std::min(capacity(), level_ + static_cast<uint64_t>(elapsed) * rate_);
  }

  uint32_t rate_;
  uint64_t level_;
  int64_t last_us_;
};

}  // namespace rdma_eventd::daemon
