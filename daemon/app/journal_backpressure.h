// Keeping the journal complete under a storm without letting it hold up anything else.
//
// The journal writer takes entries at journald's pace, which under a storm is slower than
// the devices produce events. While the writer's queue holds kJournalHighWater entries or more,
// the daemon stops reading device events (the kernel queues them meanwhile, nothing is lost)
// and goes on serving subscribers; once the queue is down to kJournalLowWater, it reads again.
// The marks are low, far below the queue's capacity, so that the records flow at journald's
// pace in small steps rather than in bursts a subscriber must absorb. A journald that stops
// taking entries (stalled, not merely slow) must not stop the daemon: when the writer makes no
// progress for kJournalStallAfter, reading resumes, the queue fills up to its capacity and then
// drops what does not fit (counted as "dropped"), and backpressure comes back once journald
// moves again.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "core/journal_queue.h"
#include "loop/event_loop.h"

namespace rdma_eventd::daemon {

inline constexpr size_t kJournalHighWater = 1024;
inline constexpr size_t kJournalLowWater = 256;
inline constexpr std::chrono::milliseconds kJournalStallAfter = std::chrono::seconds(2);

struct BackpressureStats {
  uint64_t pauses = 0;  // times reading device events paused for the journal
  uint64_t stalls = 0;  // times the journal made no progress and was no longer waited for
};

class JournalBackpressure {
 public:
  // pause(true) stops reading device events, pause(false) resumes it. `stall_after`: how long
  // the writer may make no progress before it is no longer waited for.
  JournalBackpressure(EventLoop& loop, std::function<void(bool)> pause,
                      std::chrono::milliseconds stall_after = kJournalStallAfter);
  ~JournalBackpressure();
  JournalBackpressure(const JournalBackpressure&) = delete;
  JournalBackpressure& operator=(const JournalBackpressure&) = delete;

  // The journal writer's queue to follow, or nullptr when there is none (reading is never
  // paused).
  void attach(JournalQueue* journal);
  // After each batch of records has gone to the sinks.
  void after_publish();

  const BackpressureStats& stats() const { return stats_; }
  bool paused() const { return paused_; }    // reading device events is paused now
  bool stalled() const { return stalled_; }  // the journal made no progress: not waited for

 private:
  void on_wake();
  void on_check();
  void resume();

  EventLoop& loop_;
  std::function<void(bool)> pause_;
  std::chrono::milliseconds stall_after_;
  JournalQueue* journal_ = nullptr;
  std::unique_ptr<IoWatch> wake_watch_;
  Timer check_;
  uint64_t progress_mark_ = 0;
  bool paused_ = false;
  bool stalled_ = false;
  BackpressureStats stats_;
};

}  // namespace rdma_eventd::daemon
