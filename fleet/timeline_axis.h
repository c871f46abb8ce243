// Where the page's timeline begins and ends: over the incidents, with those of a host whose
// clock is far off (a host that booted in 1970) listed, not drawn, so that one wrong clock
// cannot squeeze a day of the fleet into the last pixel. Pure.
//
// The fence: around the median of the incidents' start times, ten times their median absolute
// deviation from it, and never less than ten days either side: a day's incidents are drawn
// with anything up to ten days off, a month's spread evenly are all drawn, a clock decades
// off is not. Fewer than three incidents have no majority to tell the odd one out: all are
// drawn. Without incidents, nothing is fenced.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

namespace rdma_eventd_fleet {

struct TimeFence {
  int64_t low = std::numeric_limits<int64_t>::min();
  int64_t high = std::numeric_limits<int64_t>::max();
  bool contains(int64_t t) const { return t >= low && t <= high; }
};

TimeFence incidents_fence(std::vector<int64_t> starts);

// The span drawn: every time added that is within the fence.
class AxisSpan {
 public:
  explicit AxisSpan(TimeFence fence) : fence_(fence) {}
  // False when `t` is outside the fence (not drawn).
  bool add(int64_t t);
  bool empty() const { return first_ > last_; }
  int64_t first() const { return first_; }
  int64_t last() const { return last_; }
  const TimeFence& fence() const { return fence_; }

 private:
  TimeFence fence_;
  int64_t first_ = std::numeric_limits<int64_t>::max();
  int64_t last_ = std::numeric_limits<int64_t>::min();
};

}  // namespace rdma_eventd_fleet
