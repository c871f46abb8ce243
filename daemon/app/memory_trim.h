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

// The rule alone, without the timer and the allocator (unit-tested): when to arm the quiet
// check, and whether to trim when it runs out.
class TrimSchedule {
 public:
  // Work done since the last trim before a trim is considered.
  static constexpr uint64_t kWorkBeforeTrim = 4096;

  // `units` of work were done. True when the quiet check must be armed now.
  bool note_work(uint64_t units);
  // The quiet check ran out. True: nothing was done since it was armed, trim now (counting
  // starts again from zero). False: work went on, the check is armed again.
  bool quiet_check_ran_out();

  bool check_armed() const { return armed_; }
  uint64_t work() const { return work_; }  // since the last trim

 private:
  uint64_t work_ = 0;
  uint64_t work_at_arm_ = 0;  // work_ when the check was last armed
  bool armed_ = false;
};

class MemoryTrim {
 public:
  // The quiet time the check waits for.
  static constexpr std::chrono::seconds kQuiet{1};

  explicit MemoryTrim(EventLoop& loop);
  MemoryTrim(const MemoryTrim&) = delete;
  MemoryTrim& operator=(const MemoryTrim&) = delete;

  // `units` of work were done: a record each, a subscriber connecting or going.
  void note_work(uint64_t units);

 private:
  void on_timer();

  Timer timer_;
  TrimSchedule schedule_;
};

}  // namespace rdma_eventd::daemon
