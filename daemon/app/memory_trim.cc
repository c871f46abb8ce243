#include "app/memory_trim.h"

#include <malloc.h>
#include <spdlog/spdlog.h>

namespace rdma_eventd::daemon {

MemoryTrim::MemoryTrim(EventLoop& loop) : timer_(loop, [this] { on_timer(); }) {}

void MemoryTrim::note_work(uint64_t units) {
  work_ += units;
  if (work_ < kWorkBeforeTrim || timer_.armed()) return;
  work_at_arm_ = work_;
  timer_.arm(kQuiet);
}

void MemoryTrim::on_timer() {
  if (work_ != work_at_arm_) {
    // Still busy: trimming now would only hand back pages the next batch takes again.
    work_at_arm_ = work_;
    timer_.arm(kQuiet);
    return;
  }
  const int released = malloc_trim(0);
  ++trims_;
  spdlog::debug("memory: quiet after {} units of work; returned free memory to the system ({})",
                work_, released ? "some released" : "nothing to release");
  work_ = 0;
}

}  // namespace rdma_eventd::daemon
