// A one-shot Timer armed at the next deadline of a model that keeps its own (port health's
// windows, the journal budget's intervals): armed only while the model has one, so that an idle
// daemon never wakes up for it, and left alone while the deadline stays the one it is armed for.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <utility>

#include "loop/event_loop.h"

namespace rdma_eventd::daemon {

class DeadlineTimer {
 public:
  DeadlineTimer(EventLoop& loop, std::function<void()> cb)
      : timer_(loop, [this, cb = std::move(cb)] {
          armed_for_.reset();  // one-shot: it is not armed any more
          cb();
        }) {}
  DeadlineTimer(const DeadlineTimer&) = delete;
  DeadlineTimer& operator=(const DeadlineTimer&) = delete;

  // Arms it at `deadline` (CLOCK_MONOTONIC µs), `now_mono_us` being the time now; none cancels.
  void arm_at(std::optional<int64_t> deadline, int64_t now_mono_us) {
    if (!deadline) {
      if (armed_for_) timer_.cancel();
      armed_for_.reset();
      return;
    }
    if (armed_for_ == deadline) return;
    timer_.arm(std::chrono::microseconds(std::max<int64_t>(0, *deadline - now_mono_us)));
    armed_for_ = deadline;
  }

  // When it fires next; none while it is not armed.
  std::optional<int64_t> armed_for() const { return armed_for_; }

 private:
  std::optional<int64_t> armed_for_;
  Timer timer_;
};

}  // namespace rdma_eventd::daemon
