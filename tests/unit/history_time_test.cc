// rdma-eventctl history's times (eventctl/history_time.cc): journalctl's syntax, local time.
#include "history_time.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>

namespace rdma_eventctl {
namespace {

constexpr int64_t kS = 1'000'000;
// 2026-11-25 08:30:15.5 UTC
constexpr int64_t kNow = 1795595415 * kS + 500'000;

// Runs the test's body in the time zone `tz` (a POSIX TZ string: no tzdata needed).
class InZone {
 public:
  explicit InZone(const char* tz) {
    const char* old = std::getenv("TZ");
    had_ = old != nullptr;
    if (had_) old_ = old;
    setenv("TZ", tz, 1);
    tzset();
  }
  ~InZone() {
    if (had_) {
      setenv("TZ", old_.c_str(), 1);
    } else {
      unsetenv("TZ");
    }
    tzset();
  }

 private:
  bool had_ = false;
  std::string old_;
};

TEST(HistoryTime, AbsoluteDatesAndTimesAreLocal) {
  InZone utc("UTC0");
  EXPECT_EQ(parse_journal_time("2026-11-24", kNow), 1795478400 * kS);
  EXPECT_EQ(parse_journal_time("2026-11-24 18:30", kNow), (1795478400 + 18 * 3600 + 1800) * kS);
  EXPECT_EQ(parse_journal_time("2026-11-24 18:30:15", kNow),
            (1795478400 + 18 * 3600 + 1800 + 15) * kS);
  EXPECT_EQ(parse_journal_time("2026-11-24T18:30:15", kNow),
            (1795478400 + 18 * 3600 + 1800 + 15) * kS);
  InZone cet("CET-1");
  EXPECT_EQ(parse_journal_time("2026-11-24 18:30", kNow), (1795478400 + 17 * 3600 + 1800) * kS);
}

TEST(HistoryTime, NamedDaysAreLocalMidnights) {
  InZone cet("CET-1");  // 09:30:15 local
  EXPECT_EQ(parse_journal_time("now", kNow), kNow);
  EXPECT_EQ(parse_journal_time("today", kNow), (1795564800 - 3600) * kS);
  EXPECT_EQ(parse_journal_time("yesterday", kNow), (1795564800 - 3600 - 86400) * kS);
  EXPECT_EQ(parse_journal_time("tomorrow", kNow), (1795564800 - 3600 + 86400) * kS);
}

TEST(HistoryTime, RelativeTimesAndEpochSeconds) {
  EXPECT_EQ(parse_journal_time("-1h", kNow), kNow - 3600 * kS);
  EXPECT_EQ(parse_journal_time("-30min", kNow), kNow - 1800 * kS);
  EXPECT_EQ(parse_journal_time("+2d", kNow), kNow + 2 * 86400 * kS);
  EXPECT_EQ(parse_journal_time("-1h30min", kNow), kNow - 5400 * kS);
  EXPECT_EQ(parse_journal_time("-1 week", kNow), kNow - 604800 * kS);
  EXPECT_EQ(parse_journal_time("-1.5h", kNow), kNow - 5400 * kS);
  EXPECT_EQ(parse_journal_time("-250ms", kNow), kNow - 250'000);
  EXPECT_EQ(parse_journal_time("-10", kNow), kNow - 10 * kS);
  EXPECT_EQ(parse_journal_time("2 hours ago", kNow), kNow - 7200 * kS);
  EXPECT_EQ(parse_journal_time("@1795595415", kNow), 1795595415 * kS);
  EXPECT_EQ(parse_journal_time("@1795595415.000123", kNow), 1795595415 * kS + 123);
}

TEST(HistoryTime, AnythingElseIsRefused) {
  for (const char* bad : {"", "soon", "-", "-1x", "-h", "2026-13-01", "2026-11-24 25:00",
                          "2026-11-24 18", "2026-11-24 18:30:15:00", "2026/11/24", "2026-02-30",
                          "@", "-99999999999999w", "ago", "1h ago later"}) {
    EXPECT_EQ(parse_journal_time(bad, kNow), std::nullopt) << "'" << bad << "'";
  }
}

}  // namespace
}  // namespace rdma_eventctl
