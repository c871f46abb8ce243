// The journal budget on a real loop with a driven clock: its one timer is armed only while a
// summary is pending, fires at the end of the interval and writes the summary; a reload that
// changes the budget and a stop write what is pending at once.
#include "app/journal_budget_gate.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "core/clock.h"
#include "journal_budget_fixture.h"

namespace rdma_eventd::daemon {
namespace {

constexpr int64_t kWallStart = 1795342530000000;

class DrivenClock final : public Clock {
 public:
  Instant now() const override { return at; }
  Instant at{kWallStart, 0};
};

Instant at_second(int64_t s) {
  return {kWallStart + s * kMicrosPerSecond, s * kMicrosPerSecond};
}

class JournalBudgetGateTest : public ::testing::Test {
 protected:
  Record port_record() {
    Record r;
    r.seq = ++seq_;
    r.stream = "stream-1";
    r.event = EventKind::kPortErr;
    r.device = "mlx5_0";
    r.node_guid = "0c42:a103:00f6:5e44";
    r.port = 1;
    r.port_info = PortInfo{};
    r.port_info->port = 1;
    return r;
  }

  // Admits `n` records of mlx5_0 port 1 at `now`; returns how many the journal gets.
  int admit(int n, Instant now) {
    int journaled = 0;
    for (int i = 0; i < n; ++i)
      journaled += gate_.admit(port_record(), now);
    return journaled;
  }

  // Runs the loop until a summary is written, or fails after 5 s.
  void run_until_written() {
    Timer guard(loop_, [this] { loop_.stop(); });
    guard.arm(std::chrono::seconds(5));
    stop_on_write_ = true;
    loop_.run();
    stop_on_write_ = false;
    ASSERT_FALSE(written_.empty()) << "no summary was written within 5 s";
  }

  EventLoop loop_;
  DrivenClock clock_;
  std::vector<BudgetSummary> written_;
  bool stop_on_write_ = false;
  JournalBudgetGate gate_{loop_, clock_, small_budget(), [this](BudgetSummary& s) {
                            written_.push_back(s);
                            if (stop_on_write_) loop_.stop();
                          }};
  uint64_t seq_ = 0;
};

TEST_F(JournalBudgetGateTest, WhileEveryRecordIsJournaledNoTimerIsArmed) {
  EXPECT_EQ(admit(5, at_second(0)), 5);
  gate_.after_batch(at_second(0));
  EXPECT_FALSE(gate_.armed_for());
  EXPECT_EQ(gate_.stats().not_journaled, 0u);
}

TEST_F(JournalBudgetGateTest, ARefusedRecordArmsTheTimerAtTheEndOfItsInterval) {
  // Given 8 records at once on a port whose burst is 5, the last 3 are refused, and the timer
  // is armed for the end of the interval that the first refused one started.
  EXPECT_EQ(admit(8, at_second(0)), 5);
  gate_.after_batch(at_second(0));
  EXPECT_EQ(gate_.armed_for(), 10 * kMicrosPerSecond);
  EXPECT_EQ(gate_.stats().not_journaled, 3u);
  EXPECT_TRUE(written_.empty());

  // More refused records in the same interval leave the timer as it is.
  EXPECT_EQ(admit(2, at_second(0)), 0);
  gate_.after_batch(at_second(0));
  EXPECT_EQ(gate_.armed_for(), 10 * kMicrosPerSecond);
}

TEST_F(JournalBudgetGateTest, TheTimerWritesTheSummaryWhenTheIntervalEndsAndGoes) {
  EXPECT_EQ(admit(8, at_second(0)), 5);
  // The batch is seen at the end of the interval: the timer is due at once.
  clock_.at = at_second(10);
  gate_.after_batch(at_second(10));
  run_until_written();

  ASSERT_EQ(written_.size(), 1u);
  const BudgetSummary& s = written_[0];
  EXPECT_EQ(s.device, "mlx5_0");
  EXPECT_EQ(s.port, 1u);
  EXPECT_EQ(s.not_journaled, 3u);
  EXPECT_EQ(s.first_seq, 6u);
  EXPECT_EQ(s.last_seq, 8u);
  EXPECT_EQ(s.journaled_between, 0u);
  EXPECT_EQ(s.duration_us, 10 * kMicrosPerSecond);
  EXPECT_EQ(gate_.stats().summaries, 1u);
  EXPECT_FALSE(gate_.armed_for()) << "nothing is pending: no timer";
}

TEST_F(JournalBudgetGateTest, AReloadThatChangesTheBudgetWritesWhatIsPendingFirst) {
  EXPECT_EQ(admit(7, at_second(0)), 5);
  gate_.after_batch(at_second(0));

  // The same configuration again changes nothing.
  gate_.set_config(small_budget(), at_second(4));
  EXPECT_TRUE(written_.empty());
  EXPECT_EQ(gate_.armed_for(), 10 * kMicrosPerSecond);

  JournalBudgetConfig bigger = small_budget();
  bigger.port_burst = 50;
  gate_.set_config(bigger, at_second(4));
  ASSERT_EQ(written_.size(), 1u);
  EXPECT_EQ(written_[0].not_journaled, 2u);
  EXPECT_EQ(written_[0].first_seq, 6u);
  EXPECT_EQ(written_[0].last_seq, 7u);
  EXPECT_EQ(written_[0].duration_us, 4 * kMicrosPerSecond);  // cut short at the reload
  EXPECT_FALSE(gate_.armed_for());
  EXPECT_EQ(gate_.config().port_burst, 50u);

  // The new budget starts full.
  EXPECT_EQ(admit(50, at_second(4)), 50);
}

TEST_F(JournalBudgetGateTest, FlushWritesEverySummaryPendingAndDisarmsTheTimer) {
  EXPECT_EQ(admit(9, at_second(0)), 5);
  gate_.after_batch(at_second(0));
  gate_.flush(at_second(2));
  ASSERT_EQ(written_.size(), 1u);
  EXPECT_EQ(written_[0].not_journaled, 4u);
  EXPECT_EQ(written_[0].first_seq, 6u);
  EXPECT_EQ(written_[0].last_seq, 9u);
  EXPECT_EQ(written_[0].duration_us, 2 * kMicrosPerSecond);
  EXPECT_FALSE(gate_.armed_for());
  gate_.flush(at_second(3));
  EXPECT_EQ(written_.size(), 1u) << "a summary is written once";
}

TEST_F(JournalBudgetGateTest, TurnedOffEveryRecordIsJournaled) {
  JournalBudgetConfig off = small_budget();
  off.enabled = false;
  gate_.set_config(off, at_second(0));
  EXPECT_EQ(admit(1000, at_second(0)), 1000);
  gate_.after_batch(at_second(0));
  EXPECT_FALSE(gate_.armed_for());
  EXPECT_EQ(gate_.stats().not_journaled, 0u);
}

}  // namespace
}  // namespace rdma_eventd::daemon
