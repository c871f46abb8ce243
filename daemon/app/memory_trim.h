// Gives memory back to the system after a burst of work.
//
// A storm makes the daemon allocate a lot for a short time: records, subscribers' queues, the
// journal writer's queue. glibc keeps what is freed for reuse, so after a storm the daemon
// would stay as large as it was at the storm's peak. After enough work (records published,
// subscribers come and gone), a one-shot timer is armed; when it fires and nothing happened
// for a whole interval, malloc_trim(0) returns the free pages of every arena. While work goes
// on the timer re-arms itself at most once per interval; an idle daemon arms nothing and so
// never wakes up for it.
#pragma once

#include <chrono>
#include <cstdint>

#include "loop/event_loop.h"

namespace rdma_eventd::daemon {

class MemoryTrim {
 public:
  // Work done since the last trim before a trim is considered, and the quiet time it waits for.
  static constexpr uint64_t kWorkBeforeTrim = 4096;
  static constexpr std::chrono::seconds kQuiet{1};

  explicit MemoryTrim(EventLoop& loop);
  MemoryTrim(const MemoryTrim&) = delete;
  MemoryTrim& operator=(const MemoryTrim&) = delete;

  // `units` of work were done: a record each, a subscriber connecting or going.
  void note_work(uint64_t units);
  uint64_t trims() const { return trims_; }

 private:
  void on_timer();

  Timer timer_;
  uint64_t work_ = 0;         // since the last trim
  uint64_t work_at_arm_ = 0;  // work_ when the timer was armed
  uint64_t trims_ = 0;
};

}  // namespace rdma_eventd::daemon
