// A token bucket: at most `rate` tokens per second on average, and bursts of up to `burst`
// (the rate, unless given). Pure: the caller passes the time (a monotonic clock in
// microseconds, read once per loop callback), so tests drive it without a clock and nobody
// polls a timer for it. Exact in integers. Starts full.
#pragma once

#include <algorithm>
#include <cstdint>

namespace rdma_eventd::daemon {

class TokenBucket {
 public:
  TokenBucket(uint32_t rate, int64_t now_us) : TokenBucket(rate, rate, now_us) {}
  TokenBucket(uint32_t rate, uint32_t burst, int64_t now_us)
      : rate_(rate), burst_(burst), level_(capacity()), last_us_(now_us) {}

  // Takes one token if there is one.
  bool take(int64_t now_us) {
    if (!has_token(now_us)) return false;
    take_token();
    return true;
  }

  // Whether a token is there, refilling up to now first; take_token() takes it.
  bool has_token(int64_t now_us) {
    refill(now_us);
    return level_ >= kUnit;
  }
  void take_token() { level_ -= kUnit; }  // only after has_token() said yes

  bool full(int64_t now_us) const { return level_at(now_us) == capacity(); }

  // A new rate (and burst, the same) from now on, starting full: a reload that raises the
  // limit takes effect at once, and one that lowers it allows at most the new burst.
  void set_rate(uint32_t rate, int64_t now_us) {
    rate_ = rate;
    burst_ = rate;
    level_ = capacity();
    last_us_ = std::max(last_us_, now_us);
  }

  uint32_t rate() const { return rate_; }

 private:
  // One token is kUnit units, and a second refills `rate` tokens.
  static constexpr uint64_t kUnit = 1000000;

  uint64_t capacity() const { return uint64_t{burst_} * kUnit; }

  uint64_t level_at(int64_t now_us) const {
    // A clock that went back adds nothing; the time to fill an empty bucket fills it anyway,
    // and capping the elapsed time there keeps the product far from overflowing.
    const int64_t fill_us = static_cast<int64_t>(capacity() / std::max<uint32_t>(rate_, 1)) + 1;
    const int64_t elapsed = std::clamp<int64_t>(now_us - last_us_, 0, fill_us);
    return std::min(capacity(), level_ + static_cast<uint64_t>(elapsed) * rate_);
  }

  void refill(int64_t now_us) {
    level_ = level_at(now_us);
    last_us_ = std::max(last_us_, now_us);
  }

  uint32_t rate_;
  uint32_t burst_;
  uint64_t level_;
  int64_t last_us_;
};

}  // namespace rdma_eventd::daemon
