#include "app/memory_trim.h"

#include <malloc.h>
#include <spdlog/spdlog.h>

namespace rdma_eventd::daemon {

bool TrimSchedule::note_work(uint64_t units) {
  work_ += units;
  if (work_ < kWorkBeforeTrim || armed_) return false;
  work_at_arm_ = work_;
  armed_ = true;
  return true;
}

bool TrimSchedule::quiet_check_ran_out() {
  if (work_ != work_at_arm_) {
    // Still busy: trimming now would only hand back pages the next batch takes again.
    work_at_arm_ = work_;
    return false;
  }
  armed_ = false;
  work_ = 0;
  return true;
}

MemoryTrim::MemoryTrim(EventLoop& loop) : timer_(loop, [this] { on_timer(); }) {}

void MemoryTrim::note_work(uint64_t units) {
  if (schedule_.note_work(units)) timer_.arm(kQuiet);
}

void MemoryTrim::on_timer() {
  const uint64_t work = schedule_.work();
  if (!schedule_.quiet_check_ran_out()) {
    timer_.arm(kQuiet);
    return;
  }
  const int released = malloc_trim(0);
  spdlog::debug("memory: quiet after {} units of work; returned free memory to the system ({})",
                work, released ? "some released" : "nothing to release");
}

}  // namespace rdma_eventd::daemon
