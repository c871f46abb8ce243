// A port's link quality across a restart of the daemon on the same boot: its whole state is
// exported and restored, and the first read after the restore, which spans the time the daemon
// was away, is judged for what it can say: a counter below its saved value is a new baseline
// without a word, growth is dated at the saved read (the earliest it can have happened), and
// link_downed growth is no hidden down. Time is driven by hand.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/clock.h"
#include "core/link_quality.h"
#include "core/port_health_types.h"
#include "link_quality_fixture.h"

namespace rdma_eventd::daemon {
// Named, not anonymous: the unity build puts several test files in one translation unit.
namespace link_quality_restore_test {

using Changes = std::vector<LinkQualityChange>;
using Kind = LinkQualityChange::Kind;

constexpr int64_t kStartMono = 9000 * kMicrosPerSecond;
constexpr int64_t kStartWall = 1795342530000000;
const LinkRate kNdr{4, LinkSpeed::kNdr};  // 400 Gb/s: 2.88 errors in 12 min, 3 in 125 min
const std::string kSymbolsName(kSymbolError);
const std::string kDownedName(kLinkDowned);

Instant after(int64_t seconds) {
  const int64_t mono = kStartMono + seconds * kMicrosPerSecond;
  return {.wall_us = kStartWall + mono, .mono_us = mono};
}

CounterValue read_of(const std::string& name, uint64_t value) {
  return {name, counter_bits(name), value};
}

// A port sampled by hand, that can be saved and restored into another (the restarted daemon).
class RestartedPort {
 public:
  Changes up(int64_t seconds, std::vector<CounterValue> counters, uint32_t downs_seen = 0) {
    Changes out;
    port_.sample(config_, {kNdr, true, downs_seen, std::move(counters)}, after(seconds), out);
    return out;
  }
  Changes advance(int64_t seconds) {
    Changes out;
    port_.advance(config_, after(seconds), out);
    return out;
  }
  // The daemon stops and starts again: a new PortLinkQuality, given the saved state.
  void restart() {
    const LinkQualityState saved = port_.export_state();
    port_ = PortLinkQuality();
    port_.restore(saved);
  }
  // `name` read as `first` at 0 s and as `then` at 60 s, before the daemon restarts.
  void read_twice_then_restart(const std::string& name, uint64_t first, uint64_t then) {
    up(0, {read_of(name, first)});
    up(60, {read_of(name, then)});
    restart();
  }
  std::optional<int64_t> next_deadline() const { return port_.next_deadline(config_); }
  PortLinkQuality& port() { return port_; }

 private:
  LinkQualityConfig config_;
  PortLinkQuality port_;
};

// A bit error verdict at the port's rate.
LinkQualityChange bad_symbols(uint64_t count, uint64_t allowed, uint32_t window_s, uint64_t value) {
  return bad_bits(count, allowed, window_s, kNdr, value);
}

TEST(LinkQualityRestore, TheWholeStateSurvivesExportAndRestore) {
  RestartedPort port;
  port.up(0, {read_of(kSymbolsName, 0), read_of(kDownedName, 0),
              read_of(std::string(kLinkErrorRecovery), 0)});
  port.up(60,
          {read_of(kSymbolsName, 5), read_of(kDownedName, 1),
           read_of(std::string(kLinkErrorRecovery), 255)},
          /*downs_seen=*/0);
  port.up(120, {read_of(kSymbolsName, 6)}, /*downs_seen=*/2);  // downs wait for link_downed
  const LinkQualityState saved = port.port().export_state();
  ASSERT_TRUE(saved.sampled);
  // The 255 recoveries peg link_error_recovery in the sample that makes it bad too. Each fault
  // keeps the last sample its rule was over: symbol_error's 6 in 720 s still are at 120 s.
  EXPECT_EQ(
      saved.faults,
      (std::vector<LinkQualityState::Fault>{
          {LinkFault::kBitErrors, {kSymbolsName}, after(120).mono_us},
          {LinkFault::kLinkRecoveries, {std::string(kLinkErrorRecovery)}, after(60).mono_us}}));
  EXPECT_EQ(saved.downs_seen_pending, 2u);
  EXPECT_EQ(saved.last_sample, after(120));
  EXPECT_EQ(saved.first_sample, after(0));
  ASSERT_EQ(saved.counters.size(), 3u);
  EXPECT_EQ(saved.counters[2].name, kSymbolsName);
  EXPECT_EQ(saved.counters[2].steps,
            (std::vector<GrowthStep>{{after(60).mono_us, 5}, {after(120).mono_us, 1}}));
  EXPECT_TRUE(saved.counters[1].pegged);  // link_error_recovery at 255

  LinkQualityView before = port.port().view();
  port.restart();
  EXPECT_EQ(port.port().export_state(), saved);
  before.unknown = "not_read";  // until its first read across the restart
  EXPECT_EQ(port.port().view(), before);
  EXPECT_TRUE(port.port().bad());
}

TEST(LinkQualityRestore, ACounterBelowItsSavedValueIsABaselineWithoutAWord) {
  // Reset, or its driver reloaded, while the daemon was away: nothing to report.
  RestartedPort port;
  port.read_twice_then_restart(kSymbolsName, 40, 41);
  EXPECT_EQ(port.up(3600, {read_of(kSymbolsName, 2)}), Changes{});
  EXPECT_EQ(port.port().last_value(kSymbolsName), 2u);
  // Counted from there: 3 more within 12 minutes is over NDR's 2.88.
  EXPECT_EQ(port.up(3660, {read_of(kSymbolsName, 5)}), Changes{bad_symbols(3, 2, 720, 5)});
  // Without the restart the same drop is a reset, said once.
  RestartedPort watched;
  watched.up(0, {read_of(kSymbolsName, 40)});
  const Changes reset = watched.up(3600, {read_of(kSymbolsName, 2)});
  ASSERT_EQ(reset.size(), 1u);
  EXPECT_EQ(reset[0].kind, Kind::kReset);
}

TEST(LinkQualityRestore, GrowthAcrossARestartCountsOnlyInWindowsReachingBackToTheSavedRead) {
  // The daemon was away an hour; the counter grew by 4 at some time in that hour. Dated at the
  // saved read, it is no burst in the 12-minute window, but over the 125-minute one (3 allowed).
  RestartedPort port;
  port.read_twice_then_restart(kSymbolsName, 0, 0);
  EXPECT_EQ(port.up(3660, {read_of(kSymbolsName, 4)}), Changes{bad_symbols(4, 3, 7500, 4)});
  // Watched all along, the same 4 within a minute is over the 12-minute window.
  RestartedPort watched;
  watched.up(0, {read_of(kSymbolsName, 0)});
  watched.up(60, {read_of(kSymbolsName, 0)});
  EXPECT_EQ(watched.up(3660, {read_of(kSymbolsName, 4)}), Changes{bad_symbols(4, 2, 720, 4)});

  // Within the allowance of both: nothing, and later growth is dated as usual.
  RestartedPort slow;
  slow.up(0, {read_of(kSymbolsName, 0)});
  slow.up(60, {read_of(kSymbolsName, 0)});
  slow.restart();
  EXPECT_EQ(slow.up(3660, {read_of(kSymbolsName, 3)}), Changes{});
  EXPECT_EQ(slow.up(3720, {read_of(kSymbolsName, 6)}), Changes{bad_symbols(3, 2, 720, 6)});
}

TEST(LinkQualityRestore, LinkDownedGrowthAcrossARestartIsNoHiddenDown) {
  RestartedPort port;
  port.read_twice_then_restart(kDownedName, 1, 1);
  // Two downs while nobody could see their events.
  EXPECT_EQ(port.up(3600, {read_of(kDownedName, 3)}), Changes{});
  // From then on, one without its port_err is hidden again.
  const Changes hidden = port.up(3660, {read_of(kDownedName, 4)});
  ASSERT_EQ(hidden.size(), 1u);
  EXPECT_EQ(hidden[0].kind, Kind::kHiddenDown);
  EXPECT_EQ(hidden[0].count, 1u);
}

TEST(LinkQualityRestore, APeggedCounterStaysPeggedAndUnknown) {
  RestartedPort port;
  port.up(0, {read_of(kSymbolsName, 0)});
  port.up(60, {read_of(kSymbolsName, 3)});  // bad
  const Changes pegged = port.up(120, {read_of(kSymbolsName, 65535)});
  ASSERT_EQ(pegged.size(), 1u);
  EXPECT_EQ(pegged[0].kind, Kind::kPegged);
  port.restart();
  EXPECT_EQ(port.port().view().pegged, std::vector<std::string>{kSymbolsName});
  EXPECT_EQ(port.port().view().pegged_since_wall_us.at(kSymbolsName), after(120).wall_us);
  // Not reported again, never clean while pegged.
  EXPECT_EQ(port.up(3600, {read_of(kSymbolsName, 65535)}), Changes{});
  EXPECT_FALSE(port.next_deadline().has_value());
  EXPECT_EQ(port.up(60 + 7560 + 60, {read_of(kSymbolsName, 65535)}), Changes{});
  EXPECT_TRUE(port.port().bad());
}

TEST(LinkQualityRestore, ABadFaultStaysBadAndIsCleanAtItsDeadlineFromBeforeTheRestart) {
  RestartedPort port;
  port.up(0, {read_of(kSymbolsName, 0)});
  EXPECT_EQ(port.up(60, {read_of(kSymbolsName, 3)}), Changes{bad_symbols(3, 2, 720, 3)});
  port.up(120, {read_of(kSymbolsName, 3)});  // the 3 errors still over the 720 s window
  port.restart();
  EXPECT_TRUE(port.port().bad());
  EXPECT_EQ(port.next_deadline(), after(120 + 7560).mono_us);
  EXPECT_EQ(port.up(3600, {read_of(kSymbolsName, 3)}), Changes{});
  EXPECT_TRUE(port.port().bad());
  EXPECT_EQ(port.advance(120 + 7559), Changes{});
  LinkQualityChange clean;
  clean.kind = Kind::kClean;
  clean.counter = kSymbolsName;
  clean.fault = LinkFault::kBitErrors;
  clean.value = 3;
  EXPECT_EQ(port.advance(120 + 7560), Changes{clean});
  EXPECT_FALSE(port.port().bad());
}

TEST(LinkQualityRestore, GrowthWhileAwayRestartsTheCleanPeriodOfABadFault) {
  // Errors at an unknown time while the daemon was away are no quiet time: the clean period
  // counts from the read that found them.
  RestartedPort port;
  port.read_twice_then_restart(kSymbolsName, 0, 3);
  EXPECT_EQ(port.up(3600, {read_of(kSymbolsName, 4)}), Changes{});
  EXPECT_EQ(port.next_deadline(), after(3600 + 7560).mono_us);
}

TEST(LinkQualityRestore, ARevisionCountsWhatIsWorthWritingNotTimePassing) {
  RestartedPort port;
  port.up(0, {read_of(kSymbolsName, 0)});
  const uint64_t first = port.port().revision();
  port.up(60, {read_of(kSymbolsName, 0)});
  EXPECT_EQ(port.port().revision(), first);
  port.up(120, {read_of(kSymbolsName, 1)});
  EXPECT_GT(port.port().revision(), first);
}

}  // namespace link_quality_restore_test
}  // namespace rdma_eventd::daemon
