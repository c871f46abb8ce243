// When the daemon gives memory back: TrimSchedule, the rule MemoryTrim runs on its timer.
#include "app/memory_trim.h"

#include <gtest/gtest.h>

namespace rdma_eventd::daemon {
namespace {

constexpr uint64_t kEnough = TrimSchedule::kWorkBeforeTrim;

TEST(MemoryTrim, WaitsForAQuietSecond) {
  EXPECT_EQ(MemoryTrim::kQuiet, std::chrono::seconds(1));
  EXPECT_EQ(kEnough, 4096u);
}

TEST(TrimSchedule, AnIdleDaemonNeverArmsTheCheck) {
  // A record now and then, short of the threshold, arms nothing: no wakeup for it.
  TrimSchedule s;
  for (uint64_t i = 0; i < kEnough - 1; ++i)
    ASSERT_FALSE(s.note_work(1)) << "armed after " << i + 1 << " units";
  EXPECT_FALSE(s.check_armed());
  EXPECT_EQ(s.work(), kEnough - 1);
}

TEST(TrimSchedule, EnoughWorkArmsTheCheckOnce) {
  TrimSchedule s;
  EXPECT_FALSE(s.note_work(kEnough - 1));
  EXPECT_TRUE(s.note_work(1));
  EXPECT_TRUE(s.check_armed());
  // Armed already: more work does not arm it again.
  EXPECT_FALSE(s.note_work(kEnough));
  EXPECT_TRUE(s.check_armed());
}

TEST(TrimSchedule, AQuietIntervalTrimsAndStartsCountingAgain) {
  TrimSchedule s;
  ASSERT_TRUE(s.note_work(kEnough));
  EXPECT_TRUE(s.quiet_check_ran_out());
  EXPECT_FALSE(s.check_armed());
  EXPECT_EQ(s.work(), 0u);
  // After a trim, the threshold counts from zero.
  EXPECT_FALSE(s.note_work(kEnough - 1));
  EXPECT_TRUE(s.note_work(1));
}

TEST(TrimSchedule, WorkDuringTheIntervalWaitsAnotherOne) {
  // Given work after the check was armed, the check does not trim but waits another interval,
  // and trims once an interval passes with nothing done.
  TrimSchedule s;
  ASSERT_TRUE(s.note_work(kEnough));
  EXPECT_FALSE(s.note_work(1));
  EXPECT_FALSE(s.quiet_check_ran_out());
  EXPECT_TRUE(s.check_armed());
  EXPECT_FALSE(s.note_work(3));
  EXPECT_FALSE(s.quiet_check_ran_out());
  EXPECT_TRUE(s.check_armed());
  EXPECT_TRUE(s.quiet_check_ran_out());
  EXPECT_FALSE(s.check_armed());
}

}  // namespace
}  // namespace rdma_eventd::daemon
