// What the rules count and when a bad link is clean (docs/health.md, "Link quality"): an
// allowance scales with the time the link was up in its window, the bit error rule applies from
// HDR on (where symbol_error counts what FEC left), and a bad link is clean once no window of its
// rule has been over its allowance for clean_s, as reads show. Time is driven by hand.
#include <gtest/gtest.h>

#include "core/link_quality.h"
#include "link_quality_driven_port.h"
#include "link_quality_fixture.h"

namespace rdma_eventd::daemon::link_quality_test {

TEST(LinkQualityUpTime, TheAllowanceScalesWithTheTimeTheLinkWasUpInTheWindow) {
  // NDR 4x allows 2.88 errors in 720 s up; down 600 of those 720 s it allows 0.48: one error
  // in the two minutes it was up is over the rule's rate.
  DrivenPort port;
  port.up(0, {counter(kSymbols, 0)});
  port.up(60, {counter(kSymbols, 0)});
  port.down(100, {counter(kSymbols, 0)});
  port.up(700, {counter(kSymbols, 0)});  // a baseline: the link came up
  EXPECT_EQ(port.up(760, {counter(kSymbols, 1)}), Changes{bad_bits_up(1, 0, 720, 120, kNdr4x, 1)});

  // Up the whole window, the same error is within the allowance.
  DrivenPort always_up;
  always_up.up(0, {counter(kSymbols, 0)});
  EXPECT_EQ(always_up.up(760, {counter(kSymbols, 1)}), Changes{});
}

TEST(LinkQualityUpTime, ADownIsFromTheSampleThatSawItDownToTheOneThatSawItUp) {
  DrivenPort port;
  port.up(0, {counter(kRecoveries, 0), counter(kSymbols, 0)});
  port.down(60, {counter(kRecoveries, 0), counter(kSymbols, 0)});
  // Nothing is judged while down; once up, the window still holds the time it was down.
  port.up(700, {counter(kRecoveries, 0), counter(kSymbols, 0)});
  EXPECT_EQ(port.up(730, {counter(kRecoveries, 0), counter(kSymbols, 1)}),
            Changes{bad_bits_up(1, 0, 720, 720 - 640, kNdr4x, 1)});
}

TEST(LinkQualityMinSpeed, BelowHdrTheBitErrorRuleIsNotAppliedUnlessConfigured) {
  // EDR's symbol_error is the raw count: one error in 12 minutes is over 1e-14 there.
  DrivenPort edr;
  edr.up(0, {counter(kSymbols, 0), counter(kRecoveries, 0)}, kEdr4x);
  EXPECT_EQ(edr.up(60, {counter(kSymbols, 50), counter(kRecoveries, 0)}, kEdr4x), Changes{});
  EXPECT_FALSE(edr.port().bad());
  EXPECT_EQ(edr.port().view().unknown, "");  // the rules that apply judged it
  // The other rules still apply.
  EXPECT_EQ(edr.up(120, {counter(kSymbols, 50), counter(kRecoveries, 5)}, kEdr4x),
            Changes{bad_rule(LinkFault::kLinkRecoveries, kRecoveries, 5, 4, 720, 5)});

  LinkQualityConfig config;
  config.bit_errors_min_speed = LinkSpeed::kEdr;
  DrivenPort judged(config);
  judged.up(0, {counter(kSymbols, 0)}, kEdr4x);
  EXPECT_EQ(judged.up(60, {counter(kSymbols, 1)}, kEdr4x), Changes{bad_bits(1, 0, 720, kEdr4x, 1)});
  // HDR100 (2x HDR) is HDR's lanes: judged by default.
  DrivenPort hdr100;
  hdr100.up(0, {counter(kSymbols, 0)}, LinkRate{2, LinkSpeed::kHdr});
  EXPECT_EQ(hdr100.up(60, {counter(kSymbols, 1)}, LinkRate{2, LinkSpeed::kHdr}),
            Changes{bad_bits(1, 0, 720, LinkRate{2, LinkSpeed::kHdr}, 1)});
}

TEST(LinkQualityCleanByRules, ALinkBackUnderItsRuleIsCleanWhileErrorsGoOnBelowIt) {
  // Bad for a burst of 3 at NDR 4x; then one error every 3000 s: 2.5 per 125 minutes, under
  // the long window's 3. "No growth for 126 minutes" would never come; the rule's own rate
  // says clean once the burst has left every window and clean_s has passed.
  DrivenPort port;
  port.up(0, {counter(kSymbols, 0)});
  ASSERT_EQ(port.up(60, {counter(kSymbols, 3)}), Changes{bad_bits(3, 2, 720, kNdr4x, 3)});
  uint64_t errors = 3;
  Changes cleaned;
  int64_t cleaned_at = 0;
  for (int64_t t = 120; t <= 20000 && cleaned.empty(); t += 60) {
    if (t % 3000 == 60) ++errors;  // at 3060, 6060, 9060, ...
    cleaned = port.up(t, {counter(kSymbols, errors)});
    cleaned_at = t;
  }
  // The burst leaves the 7500 s window at 7560: the last sample over it is 7500.
  EXPECT_EQ(cleaned, Changes{clean(LinkFault::kBitErrors, kSymbols, errors)});
  EXPECT_EQ(cleaned_at, 7500 + 7560);
  EXPECT_FALSE(port.port().bad());
}

TEST(LinkQualityCleanByRules, ALinkStillOverItsRuleIsNeverClean) {
  // 4 errors per 125 minutes, one every 1875 s: over the long window's 3, forever bad.
  DrivenPort port;
  port.up(0, {counter(kSymbols, 0)});
  uint64_t errors = 0;
  bool was_bad = false;
  for (int64_t t = 60; t <= 30000; t += 60) {
    if (t % 1875 < 60) ++errors;
    const Changes changes = port.up(t, {counter(kSymbols, errors)});
    if (port.port().bad()) was_bad = true;
    if (was_bad) {
      EXPECT_TRUE(port.port().bad()) << "clean at " << t;
    }
    for (const LinkQualityChange& c : changes)
      EXPECT_NE(c.kind, Kind::kClean) << "at " << t;
  }
  EXPECT_TRUE(was_bad);
}

TEST(LinkQualityCleanByRules, TheLastOverIsKeptAcrossARestart) {
  DrivenPort port;
  port.up(0, {counter(kSymbols, 0)});
  port.up(60, {counter(kSymbols, 3)});
  port.up(120, {counter(kSymbols, 3)});  // still over the 720 s window
  const LinkQualityState saved = port.port().export_state();
  ASSERT_EQ(saved.faults.size(), 1u);
  EXPECT_EQ(saved.faults[0].last_over_mono_us, at(120).mono_us);
  PortLinkQuality restored;
  restored.restore(saved);
  EXPECT_EQ(restored.next_deadline(LinkQualityConfig{}), at(120 + 7560).mono_us);
}

// On an Ethernet (RoCE) port the bit error rule reads the netdev's uncorrectable FEC blocks,
// at any lane speed (they are what FEC left); without them its bit errors are not judged.
TEST(LinkQualityRoce, TheBitErrorRuleReadsUncorrectableFecBlocks) {
  const std::string fec(kFecUncorrectable);
  auto roce = [&](PortLinkQuality& port, int64_t seconds, std::vector<CounterValue> counters) {
    Changes out;
    PortSample s{kEdr4x, true, 0, std::move(counters)};
    s.ethernet = true;
    port.sample(LinkQualityConfig{}, s, at(seconds), out);
    return out;
  };
  PortLinkQuality port;
  roce(port, 0, {counter(fec, 0), counter(std::string(kFecCorrected), 0)});
  EXPECT_EQ(roce(port, 60, {counter(fec, 0), counter(std::string(kFecCorrected), 100000)}),
            Changes{});
  EXPECT_EQ(port.view().unknown, "");
  EXPECT_EQ(port.view().ber_estimate, 0);
  // EDR 4x allows 0.72 in 720 s: one uncorrectable block is over (no HDR gate for FEC's count).
  Changes bad = roce(port, 120, {counter(fec, 1), counter(std::string(kFecCorrected), 100000)});
  LinkQualityChange want = bad_bits(1, 0, 720, kEdr4x, 1);
  want.counter = fec;
  EXPECT_EQ(bad, Changes{want});

  // No FEC statistics (FEC off, a driver without them): not judged, and said why.
  PortLinkQuality none;
  roce(none, 0, {counter(std::string(kLinkDowned), 0)});
  roce(none, 60, {counter(std::string(kLinkDowned), 0)});
  EXPECT_EQ(none.view().unknown, "no_fec_statistics");
  EXPECT_EQ(none.view().ber_estimate, std::nullopt);
}

}  // namespace rdma_eventd::daemon::link_quality_test
