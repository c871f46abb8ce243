#include "app/journal_backpressure.h"

#include <spdlog/spdlog.h>

namespace rdma_eventd::daemon {

JournalBackpressure::JournalBackpressure(EventLoop& loop, std::function<void(bool)> pause,
                                         std::chrono::milliseconds stall_after)
    : loop_(loop),
      pause_(std::move(pause)),
      stall_after_(stall_after),
      check_(loop, [this] { on_check(); }) {}

JournalBackpressure::~JournalBackpressure() {
  wake_watch_.reset();
}

void JournalBackpressure::attach(JournalQueue* journal) {
  if (journal == journal_) return;
  if (paused_) resume();
  wake_watch_.reset();
  check_.cancel();
  stalled_ = false;
  journal_ = journal;
  if (!journal_) return;
  wake_watch_ = std::make_unique<IoWatch>(loop_, journal_->wake_fd(), Priority::kControl,
                                          [this](bool, bool) { on_wake(); });
  wake_watch_->watch(true, false);
}

void JournalBackpressure::after_publish() {
  if (!journal_ || paused_ || stalled_) return;
  if (journal_->queued() < kJournalHighWater) return;
  paused_ = true;
  ++stats_.pauses;
  spdlog::debug("journal: {} entries queued; reading device events paused", journal_->queued());
  pause_(true);
  progress_mark_ = journal_->progress();
  journal_->notify_when_at_most(kJournalLowWater);
  check_.arm(stall_after_);
}

void JournalBackpressure::on_wake() {
  journal_->consume_wake();
  if (paused_ && journal_->queued() <= kJournalLowWater) {
    resume();
    spdlog::debug("journal: caught up; reading device events again");
  }
  if (stalled_ && journal_->progress() != progress_mark_) {
    stalled_ = false;
    spdlog::info("journal: journald takes entries again; device events wait for it again");
  }
}

void JournalBackpressure::on_check() {
  if (!paused_) return;
  const uint64_t progress = journal_->progress();
  if (progress != progress_mark_) {
    progress_mark_ = progress;  // slow, not stuck: keep waiting
    check_.arm(stall_after_);
    return;
  }
  ++stats_.stalls;
  stalled_ = true;
  spdlog::warn(
      "journal: journald took no entry for {} s; reading device events again without waiting "
      "for it (records that do not fit its queue are not journaled, and counted)",
      std::chrono::duration<double>(stall_after_).count());
  resume();
  journal_->notify_on_progress();
}

void JournalBackpressure::resume() {
  paused_ = false;
  check_.cancel();
  pause_(false);
}

}  // namespace rdma_eventd::daemon
