#include "app/journal_backpressure.h"

#include <spdlog/spdlog.h>

#include "systemd/journal_sink.h"

namespace rdma_eventd::daemon {

JournalBackpressure::JournalBackpressure(EventLoop& loop, std::function<void(bool)> pause)
    : loop_(loop), pause_(std::move(pause)), check_(loop, [this] { on_check(); }) {}

JournalBackpressure::~JournalBackpressure() {
  wake_watch_.reset();
}

void JournalBackpressure::attach(JournalSink* journal) {
  if (journal == journal_) return;
  if (stats_.paused) resume();
  wake_watch_.reset();
  check_.cancel();
  stats_.stalled = false;
  journal_ = journal;
  if (!journal_) return;
  wake_watch_ = std::make_unique<IoWatch>(loop_, journal_->wake_fd(), Priority::kControl,
                                          [this](bool, bool) { on_wake(); });
  wake_watch_->watch(true, false);
}

void JournalBackpressure::after_publish() {
  if (!journal_ || stats_.paused || stats_.stalled) return;
  if (journal_->queued() < kJournalHighWater) return;
  stats_.paused = true;
  ++stats_.pauses;
  spdlog::debug("journal: {} entries queued; reading device events paused", journal_->queued());
  pause_(true);
  progress_mark_ = journal_->progress();
  journal_->notify_when_at_most(kJournalLowWater);
  check_.arm(kJournalStallAfter);
}

void JournalBackpressure::on_wake() {
  journal_->consume_wake();
  if (stats_.paused && journal_->queued() <= kJournalLowWater) {
    resume();
    spdlog::debug("journal: caught up; reading device events again");
  }
  if (stats_.stalled && journal_->progress() != progress_mark_) {
    stats_.stalled = false;
    spdlog::info("journal: journald takes entries again; device events wait for it again");
  }
}

void JournalBackpressure::on_check() {
  if (!stats_.paused) return;
  const uint64_t progress = journal_->progress();
  if (progress != progress_mark_) {
    progress_mark_ = progress;  // slow, not stuck: keep waiting
    check_.arm(kJournalStallAfter);
    return;
  }
  ++stats_.stalls;
  stats_.stalled = true;
  spdlog::warn(
      "journal: journald took no entry for {} s; reading device events again without waiting "
      "for it (records that do not fit its queue are not journaled, and counted)",
      kJournalStallAfter.count());
  resume();
  journal_->notify_on_progress();
}

void JournalBackpressure::resume() {
  stats_.paused = false;
  check_.cancel();
  pause_(false);
}

}  // namespace rdma_eventd::daemon
