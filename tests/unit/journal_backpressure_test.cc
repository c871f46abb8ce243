// JournalBackpressure against a fake journal writer queue, on a real loop: the writer's
// signals are real eventfd writes, the stall check a real timer with a short interval.
#include "app/journal_backpressure.h"

#include <gtest/gtest.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <vector>

namespace rdma_eventd::daemon {
namespace {

using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

constexpr auto kStallAfter = 100ms;

// The queue as the writer thread keeps it: its depth, its progress, and the eventfd it writes
// when a notification it was asked for comes due.
class FakeJournalQueue final : public JournalQueue {
 public:
  FakeJournalQueue() : fd_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) { EXPECT_GE(fd_, 0); }
  ~FakeJournalQueue() override { close(fd_); }

  size_t queued() const override { return queued_; }
  uint64_t progress() const override { return progress_; }
  void notify_when_at_most(size_t entries) override {
    if (queued_ <= entries) {
      signal();
    } else {
      at_most_ = entries;
    }
  }
  void notify_on_progress() override { on_progress_ = true; }
  int wake_fd() const override { return fd_; }
  void consume_wake() override {
    uint64_t count = 0;
    EXPECT_EQ(read(fd_, &count, sizeof count), static_cast<ssize_t>(sizeof count));
  }

  void set_queued(size_t entries) { queued_ = entries; }
  // The writer finished one entry and `left` are queued; it signals what was asked for.
  void finish_one(size_t left) {
    queued_ = left;
    ++progress_;
    bool wake = std::exchange(on_progress_, false);
    if (at_most_ && queued_ <= *at_most_) {
      at_most_.reset();
      wake = true;
    }
    if (wake) signal();
  }
  std::optional<size_t> asked_at_most() const { return at_most_; }
  bool asked_on_progress() const { return on_progress_; }

 private:
  void signal() {
    const uint64_t one = 1;
    EXPECT_EQ(write(fd_, &one, sizeof one), static_cast<ssize_t>(sizeof one));
  }

  int fd_;
  size_t queued_ = 0;
  uint64_t progress_ = 0;
  std::optional<size_t> at_most_;
  bool on_progress_ = false;
};

class JournalBackpressureTest : public ::testing::Test {
 protected:
  JournalBackpressureTest() { backpressure_.attach(&queue_); }

  // Runs the loop until reading is paused or resumed once more, for at most `limit`.
  ::testing::AssertionResult run_until_pause_changes(SteadyClock::duration limit = 10s) {
    const size_t before = pause_calls_.size();
    bool timed_out = false;
    Timer guard(loop_, [&] {
      timed_out = true;
      loop_.stop();
    });
    guard.arm(std::chrono::duration_cast<std::chrono::microseconds>(limit));
    stop_on_pause_ = true;
    loop_.run();
    stop_on_pause_ = false;
    if (timed_out || pause_calls_.size() == before) {
      return ::testing::AssertionFailure() << "reading was neither paused nor resumed within "
                                           << std::chrono::duration<double>(limit).count()
                                           << " s; calls so far: " << pause_calls_.size();
    }
    return ::testing::AssertionSuccess();
  }

  // One turn of the loop: whatever is ready now runs.
  void pump() {
    loop_.defer([this] { loop_.defer([this] { loop_.stop(); }); });
    loop_.run();
  }

  EventLoop loop_;
  FakeJournalQueue queue_;
  std::vector<bool> pause_calls_;  // true: paused, false: resumed
  bool stop_on_pause_ = false;
  JournalBackpressure backpressure_{loop_,
                                    [this](bool paused) {
                                      pause_calls_.push_back(paused);
                                      if (stop_on_pause_) loop_.stop();
                                    },
                                    kStallAfter};
};

TEST_F(JournalBackpressureTest, AQueueBelowTheHighMarkIsNotWaitedFor) {
  queue_.set_queued(kJournalHighWater - 1);
  backpressure_.after_publish();
  EXPECT_TRUE(pause_calls_.empty());
  EXPECT_FALSE(backpressure_.paused());
  EXPECT_EQ(backpressure_.stats().pauses, 0u);
  EXPECT_FALSE(queue_.asked_at_most());
}

TEST_F(JournalBackpressureTest, PausesAtTheHighMarkAndResumesAtTheLowMark) {
  // Given a queue at the high mark, reading pauses and the writer is asked to say when the
  // queue is down to the low mark;
  queue_.set_queued(kJournalHighWater);
  backpressure_.after_publish();
  EXPECT_EQ(pause_calls_, std::vector<bool>{true});
  EXPECT_TRUE(backpressure_.paused());
  EXPECT_EQ(queue_.asked_at_most(), kJournalLowWater);
  // more batches while paused change nothing;
  backpressure_.after_publish();
  EXPECT_EQ(pause_calls_.size(), 1u);
  // the writer going down, still above the low mark, does not resume reading;
  queue_.finish_one(kJournalLowWater + 1);
  pump();
  EXPECT_EQ(pause_calls_.size(), 1u);
  EXPECT_TRUE(backpressure_.paused());
  // the low mark does.
  queue_.finish_one(kJournalLowWater);
  ASSERT_TRUE(run_until_pause_changes());
  EXPECT_EQ(pause_calls_, (std::vector<bool>{true, false}));
  EXPECT_FALSE(backpressure_.paused());
  EXPECT_FALSE(backpressure_.stalled());
  EXPECT_EQ(backpressure_.stats().pauses, 1u);
  EXPECT_EQ(backpressure_.stats().stalls, 0u);
  // The next deep queue pauses again.
  queue_.set_queued(kJournalHighWater);
  backpressure_.after_publish();
  EXPECT_EQ(pause_calls_, (std::vector<bool>{true, false, true}));
  EXPECT_EQ(backpressure_.stats().pauses, 2u);
}

TEST_F(JournalBackpressureTest, ASlowWriterIsWaitedForAsLongAsItMoves) {
  // Given a pause, and the writer finishing an entry before the first check: the first check
  // sees progress and waits one more interval; the second sees none and stops waiting.
  queue_.set_queued(kJournalHighWater);
  const auto start = SteadyClock::now();
  backpressure_.after_publish();
  queue_.finish_one(kJournalHighWater - 1);
  ASSERT_TRUE(run_until_pause_changes());
  const auto waited = SteadyClock::now() - start;
  EXPECT_EQ(pause_calls_, (std::vector<bool>{true, false}));
  EXPECT_TRUE(backpressure_.stalled());
  EXPECT_EQ(backpressure_.stats().stalls, 1u);
  // One interval would mean the first check took the progress for a stall.
  EXPECT_GE(waited, kStallAfter * 3 / 2)
      << "stopped waiting after "
      << std::chrono::duration_cast<std::chrono::milliseconds>(waited).count() << " ms";
}

TEST_F(JournalBackpressureTest, AStalledWriterIsNoLongerWaitedForUntilItMovesAgain) {
  // Given a pause and a writer that finishes nothing, reading resumes after the stall check;
  queue_.set_queued(kJournalHighWater);
  backpressure_.after_publish();
  ASSERT_TRUE(run_until_pause_changes());
  EXPECT_EQ(pause_calls_, (std::vector<bool>{true, false}));
  EXPECT_FALSE(backpressure_.paused());
  EXPECT_TRUE(backpressure_.stalled());
  EXPECT_EQ(backpressure_.stats().stalls, 1u);
  EXPECT_TRUE(queue_.asked_on_progress());
  // while it is stalled, however deep the queue, reading goes on;
  queue_.set_queued(kJournalHighWater * 4);
  backpressure_.after_publish();
  EXPECT_EQ(pause_calls_.size(), 2u);
  // once it finishes an entry it is waited for again.
  queue_.finish_one(kJournalHighWater * 4 - 1);
  pump();
  EXPECT_FALSE(backpressure_.stalled());
  backpressure_.after_publish();
  EXPECT_EQ(pause_calls_, (std::vector<bool>{true, false, true}));
  EXPECT_EQ(backpressure_.stats().pauses, 2u);
  EXPECT_EQ(backpressure_.stats().stalls, 1u);
}

TEST_F(JournalBackpressureTest, DetachingTheJournalWhilePausedResumesReading) {
  queue_.set_queued(kJournalHighWater);
  backpressure_.after_publish();
  backpressure_.attach(nullptr);
  EXPECT_EQ(pause_calls_, (std::vector<bool>{true, false}));
  EXPECT_FALSE(backpressure_.paused());
  // Without a journal nothing is waited for.
  backpressure_.after_publish();
  EXPECT_EQ(pause_calls_.size(), 2u);
}

}  // namespace
}  // namespace rdma_eventd::daemon
