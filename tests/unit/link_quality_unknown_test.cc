// Unknown is a state, never a verdict: what a sample could not judge says why, a link that comes
// up is judged from a baseline taken then (errors of its training are not its own), and nothing
// that was not read clean is called clean. Time is driven by hand.
#include <gtest/gtest.h>

#include "core/link_quality.h"
#include "link_quality_driven_port.h"
#include "link_quality_fixture.h"

namespace rdma_eventd::daemon::link_quality_test {

TEST(LinkQualityUnknown, NotReadThenABaselineThenJudged) {
  DrivenPort port;
  EXPECT_EQ(port.port().view().unknown, "not_read");
  port.up(0, {counter(kSymbols, 7), counter(kRecoveries, 1), counter(kDowned, 0)});
  EXPECT_EQ(port.port().view().unknown, "baseline");  // no growth known yet
  port.up(60, {counter(kSymbols, 7), counter(kRecoveries, 1), counter(kDowned, 0)});
  EXPECT_EQ(port.port().view().unknown, "");
  EXPECT_FALSE(port.port().view().bad);
}

TEST(LinkQualityUnknown, ADownLinkIsNotJudgedAndTheFirstSampleUpIsABaseline) {
  DrivenPort port;
  port.up(0, {counter(kSymbols, 0), counter(kRecoveries, 0)});
  port.up(60, {counter(kSymbols, 0), counter(kRecoveries, 0)});
  ASSERT_EQ(port.port().view().unknown, "");
  // Down: its counters rest, nothing is judged.
  EXPECT_EQ(port.down(120, {counter(kSymbols, 0), counter(kRecoveries, 0)}), Changes{});
  EXPECT_EQ(port.port().view().unknown, "link_down");
  // Training after a reseat: errors between the down sample and the first sample up are no
  // errors of the link that came up. At NDR 4x, 3 in 12 minutes would be bad.
  EXPECT_EQ(port.up(180, {counter(kSymbols, 40), counter(kRecoveries, 9)}), Changes{});
  EXPECT_EQ(port.port().view().unknown, "baseline");
  EXPECT_EQ(port.up(240, {counter(kSymbols, 40), counter(kRecoveries, 9)}), Changes{});
  EXPECT_EQ(port.port().view().unknown, "");
  EXPECT_FALSE(port.port().bad());
  // From the baseline on, growth counts as always.
  EXPECT_EQ(port.up(300, {counter(kSymbols, 43), counter(kRecoveries, 9)}),
            Changes{bad_bits_up(3, 2, 720, 660, kNdr4x, 43)});
}

TEST(LinkQualityUnknown, ALinkThatWentDownBetweenTwoSamplesIsABaselineToo) {
  // The down and the up both came between two reads (events come faster than a read a second):
  // the port_err seen says the link is new.
  DrivenPort port;
  port.up(0, {counter(kSymbols, 0)});
  port.up(60, {counter(kSymbols, 0)});
  Changes out;
  PortSample s{kNdr4x, true, 1, {counter(kSymbols, 40)}};
  s.went_down = true;
  port.port().sample(LinkQualityConfig{}, s, at(120), out);
  EXPECT_EQ(out, Changes{});
  EXPECT_EQ(port.port().view().unknown, "baseline");
  EXPECT_EQ(port.up(180, {counter(kSymbols, 43)}), Changes{bad_bits(3, 2, 720, kNdr4x, 43)});
}

TEST(LinkQualityUnknown, ErrorsWhileTrainingStartTheCleanPeriodAfreshButNeverMakeABadLink) {
  DrivenPort port;
  port.up(0, {counter(kSymbols, 0)});
  port.up(60, {counter(kSymbols, 3)});
  ASSERT_TRUE(port.port().bad());
  port.down(120, {counter(kSymbols, 3)});
  // The errors of the training are at an unknown time: no quiet time for the fault either.
  port.up(180, {counter(kSymbols, 10)});
  EXPECT_EQ(port.next_deadline(), at(180 + 7560).mono_us);
}

TEST(LinkQualityUnknown, APeggedRuleCounterLeavesThePortUnknownNotClean) {
  DrivenPort port;
  port.up(0, {counter(kSymbols, 65535), counter(kRecoveries, 0)});
  EXPECT_EQ(port.port().view().unknown, "pegged");
  port.up(60, {counter(kSymbols, 65535), counter(kRecoveries, 0)});
  EXPECT_EQ(port.port().view().unknown, "pegged");  // read every time, judged never
  EXPECT_FALSE(port.port().view().bad);
  EXPECT_EQ(port.port().view().ber_estimate, std::nullopt);
  // A counter no rule reads may peg: the rules still judge.
  DrivenPort other;
  other.up(0, {counter(kSymbols, 0), counter(kIntegrity, 15)});
  other.up(60, {counter(kSymbols, 0), counter(kIntegrity, 15)});
  EXPECT_EQ(other.port().view().unknown, "");
}

TEST(LinkQualityUnknown, AnUnknownRateOrNoRuleCounterIsSaid) {
  DrivenPort rate;
  rate.up(0, {counter(kSymbols, 0), counter(kRecoveries, 0)}, kUnknownRate);
  rate.up(60, {counter(kSymbols, 0), counter(kRecoveries, 0)}, kUnknownRate);
  EXPECT_EQ(rate.port().view().unknown, "rate_unknown");
  // rxe: only hw_counters/link_downed, which no rule reads.
  DrivenPort rxe;
  rxe.up(0, {counter(kHwDowned, 0)});
  rxe.up(60, {counter(kHwDowned, 0)});
  EXPECT_EQ(rxe.port().view().unknown, "no_error_counters");
}

TEST(LinkQualityUnknown, ARestoredPortIsNotJudgedUntilItsFirstReadAcrossTheRestart) {
  DrivenPort port;
  port.up(0, {counter(kSymbols, 0)});
  port.up(60, {counter(kSymbols, 0)});
  PortLinkQuality restored;
  restored.restore(port.port().export_state());
  EXPECT_EQ(restored.view().unknown, "not_read");
  // The first read across the restart spans the time away: judged, not a baseline, and a link
  // that was up then is no link that came up.
  Changes out;
  restored.sample(LinkQualityConfig{}, {kNdr4x, true, 0, {counter(kSymbols, 0)}}, at(600), out);
  EXPECT_EQ(out, Changes{});
  EXPECT_EQ(restored.view().unknown, "");
}

}  // namespace rdma_eventd::daemon::link_quality_test
