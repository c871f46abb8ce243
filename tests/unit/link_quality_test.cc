// Link quality from a port's error counters: UFM's rate-scaled bit error rule, the growth rules,
// the clean period, and the samples that never raise a verdict (a baseline, a reset, a pegged
// counter, a down link, an unknown rate). Time is driven by hand.
#include "core/link_quality.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "link_quality_driven_port.h"
#include "link_quality_fixture.h"

namespace rdma_eventd::daemon {

// Named, not anonymous: the unity build puts several test files in one translation unit.
namespace link_quality_test {

TEST(LinkQualityCounters, WidthsAreTheKernelsAndEverythingElseIs64Bits) {
  EXPECT_EQ(counter_bits("symbol_error"), 16);
  EXPECT_EQ(counter_bits("link_error_recovery"), 8);
  EXPECT_EQ(counter_bits("link_downed"), 8);
  EXPECT_EQ(counter_bits("port_rcv_errors"), 16);
  EXPECT_EQ(counter_bits("port_rcv_remote_physical_errors"), 16);
  EXPECT_EQ(counter_bits("port_rcv_switch_relay_errors"), 16);
  EXPECT_EQ(counter_bits("port_xmit_discards"), 16);
  EXPECT_EQ(counter_bits("port_xmit_constraint_errors"), 8);
  EXPECT_EQ(counter_bits("port_rcv_constraint_errors"), 8);
  EXPECT_EQ(counter_bits("local_link_integrity_errors"), 4);
  EXPECT_EQ(counter_bits("excessive_buffer_overrun_errors"), 4);
  EXPECT_EQ(counter_bits("VL15_dropped"), 16);
  EXPECT_EQ(counter_bits("port_xmit_wait"), 32);
  for (const char* name : {"port_xmit_data", "port_rcv_data", "port_xmit_packets",
                           "port_rcv_packets", "unicast_xmit_packets", "multicast_rcv_packets",
                           "hw_counters/link_downed", "hw_counters/symbol_error", "no_such"}) {
    EXPECT_EQ(counter_bits(name), 64) << name;
  }
  EXPECT_EQ(counter_max(4), 15u);
  EXPECT_EQ(counter_max(8), 255u);
  EXPECT_EQ(counter_max(16), 65535u);
  EXPECT_EQ(counter_max(64), UINT64_MAX);
  EXPECT_EQ(link_fault_name(LinkFault::kBitErrors), "bit_errors");
  EXPECT_EQ(link_fault_name(LinkFault::kLinkRecoveries), "link_recoveries");
  EXPECT_EQ(link_fault_name(LinkFault::kTransportErrors), "transport_errors");
}

TEST(LinkQualityBitErrors, TwelveMinutesAllowUfmsFiguresAtEdrHdrNdrAndXdr) {
  // 1e-14 * rate * 720 s: 0.72 errors at EDR 4x, 1.44 at HDR 4x, 2.88 at NDR 4x, 5.76 at XDR
  // 4x. As many as allowed (rounded down) is clean, one more is bad. (EDR is judged where
  // configured.)
  LinkQualityConfig from_edr;
  from_edr.bit_errors_min_speed = LinkSpeed::kEdr;
  struct Case {
    LinkRate rate;
    uint64_t allowed = 0;
  };
  for (const Case& c : {Case{kEdr4x, 0}, Case{kHdr4x, 1}, Case{kNdr4x, 2}, Case{kXdr4x, 5}}) {
    SCOPED_TRACE(c.rate.gbps());
    DrivenPort port(from_edr);
    EXPECT_EQ(port.up(0, {counter(kSymbols, 1000)}, c.rate), Changes{});
    EXPECT_EQ(port.up(60, {counter(kSymbols, 1000 + c.allowed)}, c.rate), Changes{});
    EXPECT_FALSE(port.port().bad());
    EXPECT_EQ(port.up(120, {counter(kSymbols, 1001 + c.allowed)}, c.rate),
              Changes{bad_bits(c.allowed + 1, c.allowed, 720, c.rate, 1001 + c.allowed)});
    EXPECT_TRUE(port.port().bad());
  }
}

TEST(LinkQualityBitErrors, ErrorsThatPassTwelveMinutesFailTheLongWindowAtHdrAndNdr) {
  // 1e-15 * rate * 7500 s: 1.5 at HDR 4x, 3 at NDR 4x. An error every 30 minutes is one per
  // 12 minutes (allowed at both rates) but adds up within 125 minutes.
  DrivenPort ndr;
  EXPECT_EQ(ndr.up(0, {counter(kSymbols, 0)}), Changes{});
  EXPECT_EQ(ndr.up(600, {counter(kSymbols, 1)}), Changes{});
  EXPECT_EQ(ndr.up(2400, {counter(kSymbols, 2)}), Changes{});
  EXPECT_EQ(ndr.up(4200, {counter(kSymbols, 3)}), Changes{});  // exactly 3: not more than 3
  EXPECT_EQ(ndr.up(6000, {counter(kSymbols, 4)}), Changes{bad_bits(4, 3, 7500, kNdr4x, 4)});

  DrivenPort hdr;
  EXPECT_EQ(hdr.up(0, {counter(kSymbols, 0)}, kHdr4x), Changes{});
  EXPECT_EQ(hdr.up(600, {counter(kSymbols, 1)}, kHdr4x), Changes{});
  EXPECT_EQ(hdr.up(2400, {counter(kSymbols, 2)}, kHdr4x), Changes{bad_bits(2, 1, 7500, kHdr4x, 2)});
}

TEST(LinkQualityBitErrors, TheLongWindowEndsExactly125MinutesBack) {
  // The window is (now - 7500 s, now]: growth 7500 s old has left it, 7499 s old has not.
  auto three_errors = [](DrivenPort& port) {
    port.up(0, {counter(kSymbols, 0)});
    port.up(600, {counter(kSymbols, 1)});
    port.up(2400, {counter(kSymbols, 2)});
    port.up(4200, {counter(kSymbols, 3)});
  };
  DrivenPort left;
  three_errors(left);
  EXPECT_EQ(left.up(8100, {counter(kSymbols, 4)}), Changes{});
  EXPECT_EQ(left.up(8160, {counter(kSymbols, 5)}), Changes{bad_bits(4, 3, 7500, kNdr4x, 5)});

  DrivenPort inside;
  three_errors(inside);
  EXPECT_EQ(inside.up(8099, {counter(kSymbols, 4)}), Changes{bad_bits(4, 3, 7500, kNdr4x, 4)});
}

TEST(LinkQualityBitErrors, ARetrainToALowerRateIsJudgedAtTheNewRate) {
  // One error is allowed at HDR (1.44) and not at EDR (0.72): the link that retrains to EDR
  // within the window is bad at its next sample, without another error (EDR judged, as
  // configured).
  LinkQualityConfig from_edr;
  from_edr.bit_errors_min_speed = LinkSpeed::kEdr;
  DrivenPort port(from_edr);
  EXPECT_EQ(port.up(0, {counter(kSymbols, 7)}, kHdr4x), Changes{});
  EXPECT_EQ(port.up(60, {counter(kSymbols, 8)}, kHdr4x), Changes{});
  EXPECT_EQ(port.up(120, {counter(kSymbols, 8)}, kEdr4x), Changes{bad_bits(1, 0, 720, kEdr4x, 8)});
}

TEST(LinkQualityBitErrors, AnIntegerAllowanceIsThatInteger) {
  // 1e-11 * 100 Gb/s * 60 s is 60, though the product of the figures is 59.999999999999993.
  LinkQualityConfig config;
  config.symbol_error = {{1e-11, 60}};
  config.bit_errors_min_speed = LinkSpeed::kEdr;
  DrivenPort port(config);
  port.up(0, {counter(kSymbols, 0)}, kEdr4x);
  EXPECT_EQ(port.up(30, {counter(kSymbols, 60)}, kEdr4x), Changes{});
  EXPECT_EQ(port.up(50, {counter(kSymbols, 61)}, kEdr4x),
            Changes{bad_bits(61, 60, 60, kEdr4x, 61)});
}

TEST(LinkQualityClean, CleanAfter126MinutesWithoutGrowthNotOneSecondBefore) {
  DrivenPort port;
  port.up(0, {counter(kSymbols, 0)});
  EXPECT_EQ(port.up(60, {counter(kSymbols, 3)}), Changes{bad_bits(3, 2, 720, kNdr4x, 3)});
  EXPECT_EQ(port.next_deadline(), at(60 + 7560).mono_us);
  // More errors while bad: no second kBad, and the clean period starts again.
  EXPECT_EQ(port.up(3660, {counter(kSymbols, 4)}), Changes{});
  EXPECT_EQ(port.next_deadline(), at(3660 + 7560).mono_us);
  EXPECT_EQ(port.advance(3660 + 7559), Changes{});
  EXPECT_TRUE(port.port().bad());
  EXPECT_EQ(port.advance(3660 + 7560), Changes{clean(LinkFault::kBitErrors, kSymbols, 4)});
  EXPECT_FALSE(port.port().bad());
  EXPECT_FALSE(port.next_deadline().has_value());
  EXPECT_EQ(port.port().view().since, at(3660 + 7560));

  // A sample at the deadline does the same.
  DrivenPort sampled;
  sampled.up(0, {counter(kSymbols, 0)});
  sampled.up(60, {counter(kSymbols, 3)});
  EXPECT_EQ(sampled.up(60 + 7559, {counter(kSymbols, 3)}), Changes{});
  EXPECT_EQ(sampled.up(60 + 7560, {counter(kSymbols, 3)}),
            Changes{clean(LinkFault::kBitErrors, kSymbols, 3)});
}

TEST(LinkQualityClean, EachFaultIsBadAndCleanOnItsOwn) {
  DrivenPort port(with_transport({kOutOfSequence, 100, 60}));
  port.up(0, {counter(kSymbols, 0), counter(kOutOfSequence, 0)});
  EXPECT_EQ(port.up(60, {counter(kSymbols, 3), counter(kOutOfSequence, 0)}),
            Changes{bad_bits(3, 2, 720, kNdr4x, 3)});
  // At 800 s the 3 errors have left the 720 s window (and are within the long one's 3).
  EXPECT_EQ(port.up(800, {counter(kSymbols, 3), counter(kOutOfSequence, 100)}),
            Changes{bad_rule(LinkFault::kTransportErrors, kOutOfSequence, 100, 99, 60, 100)});
  LinkQualityView v = port.port().view();
  EXPECT_EQ(v.faults, (std::vector{LinkFault::kBitErrors, LinkFault::kTransportErrors}));
  EXPECT_EQ(v.since, at(60));
  EXPECT_EQ(port.next_deadline(), at(60 + 7560).mono_us);

  EXPECT_EQ(port.advance(60 + 7560), Changes{clean(LinkFault::kBitErrors, kSymbols, 3)});
  v = port.port().view();
  EXPECT_TRUE(v.bad);
  EXPECT_EQ(v.faults, std::vector{LinkFault::kTransportErrors});
  EXPECT_EQ(v.since, at(60));  // still bad since then
  EXPECT_EQ(port.advance(800 + 7560),
            Changes{clean(LinkFault::kTransportErrors, kOutOfSequence, 100)});
  EXPECT_EQ(port.port().view().since, at(800 + 7560));
}

TEST(LinkQualitySaturation, A16BitSymbolErrorPeggedKeepsItsVerdictUntilReset) {
  DrivenPort port;
  port.up(0, {counter(kSymbols, 0)});
  EXPECT_EQ(port.up(60, {counter(kSymbols, 3)}), Changes{bad_bits(3, 2, 720, kNdr4x, 3)});
  EXPECT_EQ(port.up(120, {counter(kSymbols, 65535)}),
            Changes{about(Kind::kPegged, kSymbols, 65535)});
  EXPECT_EQ(port.up(180, {counter(kSymbols, 65535)}), Changes{});
  // Its errors are unknown: no deadline, and no clean long after the clean period.
  EXPECT_FALSE(port.next_deadline().has_value());
  EXPECT_EQ(port.advance(20000), Changes{});
  EXPECT_EQ(port.up(20000, {counter(kSymbols, 65535)}), Changes{});
  const LinkQualityView v = port.port().view();
  EXPECT_TRUE(v.bad);
  EXPECT_EQ(v.pegged, std::vector{kSymbols});
  EXPECT_EQ(v.pegged_since_wall_us, (std::map<std::string, int64_t>{{kSymbols, at(120).wall_us}}));

  // Reset: reported once, it leaves pegged, and the clean period counts from the reset.
  EXPECT_EQ(port.up(30000, {counter(kSymbols, 0)}), Changes{about(Kind::kReset, kSymbols, 0)});
  EXPECT_TRUE(port.port().view().pegged.empty());
  EXPECT_EQ(port.next_deadline(), at(30000 + 7560).mono_us);
  EXPECT_EQ(port.advance(30000 + 7560), Changes{clean(LinkFault::kBitErrors, kSymbols, 0)});
}

TEST(LinkQualitySaturation, GrowthUpToTheMaximumCountsInTheSampleThatPegs) {
  DrivenPort port;
  port.up(0, {counter(kSymbols, 65530)});
  EXPECT_EQ(port.up(60, {counter(kSymbols, 65535)}),
            (Changes{about(Kind::kPegged, kSymbols, 65535), bad_bits(5, 2, 720, kNdr4x, 65535)}));
}

TEST(LinkQualitySaturation, APeggedCountersPastGrowthIsNotJudgedAgain) {
  // One error pegs symbol_error at HDR (allowed there); at EDR the same error would be too
  // many (EDR judged, as configured), but a pegged counter's errors are unknown: it makes
  // nothing bad after the retrain.
  LinkQualityConfig from_edr;
  from_edr.bit_errors_min_speed = LinkSpeed::kEdr;
  DrivenPort port(from_edr);
  port.up(0, {counter(kSymbols, 65534)}, kHdr4x);
  EXPECT_EQ(port.up(60, {counter(kSymbols, 65535)}, kHdr4x),
            Changes{about(Kind::kPegged, kSymbols, 65535)});
  EXPECT_EQ(port.up(120, {counter(kSymbols, 65535)}, kEdr4x), Changes{});
  EXPECT_FALSE(port.port().bad());
}

TEST(LinkQualitySaturation, An8BitCounterPeggedAtTheFirstSampleIsNeitherBadNorClean) {
  DrivenPort port;
  EXPECT_EQ(port.up(0, {counter(kRecoveries, 255), counter(kDowned, 255)}),
            (Changes{about(Kind::kPegged, kRecoveries, 255), about(Kind::kPegged, kDowned, 255)}));
  // Pegged: no growth to judge, however long, and port_errs do not matter either.
  for (int64_t s = 60; s <= 9000; s += 60) {
    ASSERT_EQ(port.up(s, {counter(kRecoveries, 255), counter(kDowned, 255)}, kNdr4x, 1), Changes{})
        << s;
  }
  LinkQualityView v = port.port().view();
  EXPECT_FALSE(v.bad);
  EXPECT_EQ(v.pegged, (std::vector{kDowned, kRecoveries}));
  EXPECT_EQ(v.pegged_since_wall_us, (std::map<std::string, int64_t>{{kDowned, at(0).wall_us},
                                                                    {kRecoveries, at(0).wall_us}}));
  // Reset, then growth counts again.
  EXPECT_EQ(port.up(9060, {counter(kRecoveries, 0), counter(kDowned, 0)}),
            (Changes{about(Kind::kReset, kRecoveries, 0), about(Kind::kReset, kDowned, 0)}));
  EXPECT_EQ(port.up(9120, {counter(kRecoveries, 5), counter(kDowned, 1)}),
            (Changes{about(Kind::kHiddenDown, kDowned, 1, 1),
                     bad_rule(LinkFault::kLinkRecoveries, kRecoveries, 5, 4, 720, 5)}));
}

TEST(LinkQualitySaturation, An8BitCounterThatPegsCountsItsLastGrowthOnly) {
  DrivenPort port;
  port.up(0, {counter(kRecoveries, 250), counter(kDowned, 253)});
  EXPECT_EQ(port.up(60, {counter(kRecoveries, 255), counter(kDowned, 255)}),
            (Changes{about(Kind::kPegged, kRecoveries, 255), about(Kind::kPegged, kDowned, 255),
                     about(Kind::kHiddenDown, kDowned, 255, 2),
                     bad_rule(LinkFault::kLinkRecoveries, kRecoveries, 5, 4, 720, 255)}));
  EXPECT_EQ(port.up(120, {counter(kRecoveries, 255), counter(kDowned, 255)}), Changes{});
  EXPECT_EQ(port.advance(100000), Changes{});
  EXPECT_TRUE(port.port().bad());
}

TEST(LinkQualitySaturation, A4BitCounterIsPeggedAt15AndReportedOnce) {
  DrivenPort port(with_transport({kIntegrity, 1, 60}));
  port.up(0, {counter(kIntegrity, 14)});
  EXPECT_EQ(port.up(60, {counter(kIntegrity, 15)}),
            (Changes{about(Kind::kPegged, kIntegrity, 15),
                     bad_rule(LinkFault::kTransportErrors, kIntegrity, 1, 0, 60, 15)}));
  EXPECT_EQ(port.up(120, {counter(kIntegrity, 15)}), Changes{});
  EXPECT_FALSE(port.next_deadline().has_value());
  EXPECT_EQ(port.advance(60 + 7560), Changes{});
  EXPECT_TRUE(port.port().bad());

  // A clean port whose 4-bit counter is pegged stays clean, and says it is pegged.
  DrivenPort clean_port;
  clean_port.up(0, {counter(kIntegrity, 3)});
  EXPECT_EQ(clean_port.up(60, {counter(kIntegrity, 15)}),
            Changes{about(Kind::kPegged, kIntegrity, 15)});
  EXPECT_EQ(clean_port.up(120, {counter(kIntegrity, 15)}), Changes{});
  const LinkQualityView v = clean_port.port().view();
  EXPECT_FALSE(v.bad);
  EXPECT_EQ(v.pegged, std::vector{kIntegrity});
  EXPECT_EQ(v.pegged_since_wall_us, (std::map<std::string, int64_t>{{kIntegrity, at(60).wall_us}}));
}

TEST(LinkQualityBaseline, AResetIsReportedOnceAndCountsNothing) {
  DrivenPort port;
  port.up(0, {counter(kSymbols, 100)});
  EXPECT_EQ(port.up(60, {counter(kSymbols, 5)}), Changes{about(Kind::kReset, kSymbols, 5)});
  EXPECT_EQ(port.up(120, {counter(kSymbols, 7)}), Changes{});  // 2 since the reset's value
  EXPECT_EQ(port.up(180, {counter(kSymbols, 8)}), Changes{bad_bits(3, 2, 720, kNdr4x, 8)});
}

TEST(LinkQualityBaseline, AfterAReopenAHugeJumpOrADropIsABaseline) {
  DrivenPort port;
  port.up(0, {counter(kSymbols, 10), counter(kRecoveries, 1), counter(kDowned, 2)});
  port.port().forget_baseline();
  EXPECT_EQ(
      port.up(60, {counter(kSymbols, 60000), counter(kRecoveries, 200), counter(kDowned, 100)}),
      Changes{});
  EXPECT_EQ(port.up(120, {counter(kSymbols, 60002)}), Changes{});
  EXPECT_EQ(port.up(180, {counter(kSymbols, 60003)}), Changes{bad_bits(3, 2, 720, kNdr4x, 60003)});
  // The errors between the last sample and the reopen are unknown: a bad link's clean period
  // starts again at the first read after it.
  EXPECT_EQ(port.next_deadline(), at(180 + 7560).mono_us);
  port.port().forget_baseline();
  EXPECT_EQ(port.up(240, {counter(kSymbols, 5)}), Changes{});
  EXPECT_EQ(port.next_deadline(), at(240 + 7560).mono_us);

  DrivenPort reloaded;  // a driver reload: the counters start again from 0
  reloaded.up(0, {counter(kSymbols, 500), counter(kDowned, 9)});
  reloaded.port().forget_baseline();
  EXPECT_EQ(reloaded.up(60, {counter(kSymbols, 0), counter(kDowned, 0)}), Changes{});
}

TEST(LinkQualityBaseline, TheFirstSampleAtHugeValuesRaisesNothingButAPeggedCounter) {
  DrivenPort port;
  EXPECT_EQ(port.up(0,
                    {counter(kSymbols, 65000), counter(kRecoveries, 254), counter(kDowned, 254),
                     counter(kOutOfSequence, 1000000000000000), counter(kIntegrity, 15)},
                    kNdr4x, 0),
            Changes{about(Kind::kPegged, kIntegrity, 15)});
  LinkQualityView want;
  want.since = at(0);
  want.pegged = {kIntegrity};
  want.pegged_since_wall_us = {{kIntegrity, at(0).wall_us}};
  want.values = {{kSymbols, 65000},
                 {kRecoveries, 254},
                 {kDowned, 254},
                 {kOutOfSequence, 1000000000000000},
                 {kIntegrity, 15}};
  want.unknown = "baseline";  // judged from the next sample on
  EXPECT_EQ(port.port().view(), want);
}

TEST(LinkQualityHiddenDown, LinkDownedGrowthBeyondThePortErrsSeenIsAHiddenDown) {
  DrivenPort port;
  port.up(0, {counter(kDowned, 3)});
  // A down the daemon saw (port_err), sampled on the port_err and on the port_active after it.
  EXPECT_EQ(port.down(30, {counter(kDowned, 4)}, 1), Changes{});
  EXPECT_EQ(port.up(31, {counter(kDowned, 4)}), Changes{});
  // A down too brief for an event.
  EXPECT_EQ(port.up(90, {counter(kDowned, 5)}), Changes{about(Kind::kHiddenDown, kDowned, 5, 1)});
  // Three downs, one seen.
  EXPECT_EQ(port.up(150, {counter(kDowned, 8)}, kNdr4x, 1),
            Changes{about(Kind::kHiddenDown, kDowned, 8, 2)});
  // Judged on a down port too.
  EXPECT_EQ(port.down(210, {counter(kDowned, 9)}),
            Changes{about(Kind::kHiddenDown, kDowned, 9, 1)});
  // A hidden down is no verdict of link quality.
  EXPECT_FALSE(port.port().bad());
}

TEST(LinkQualityHiddenDown, RxeHasOnlyTheHwCounter) {
  DrivenPort port;
  port.up(0, {counter(kHwDowned, 0), counter("hw_counters/sent_pkts", 10)});
  EXPECT_EQ(port.up(60, {counter(kHwDowned, 1), counter("hw_counters/sent_pkts", 20)}, kNdr4x, 1),
            Changes{});
  EXPECT_EQ(port.up(120, {counter(kHwDowned, 2), counter("hw_counters/sent_pkts", 30)}),
            Changes{about(Kind::kHiddenDown, kHwDowned, 2, 1)});
}

TEST(LinkQualityHiddenDown, PortErrsSeenWaitForTheNextReadOfLinkDowned) {
  DrivenPort port;
  port.up(0, {counter(kDowned, 3), counter(kHwDowned, 3)});
  // counters/link_downed failed to read: hw_counters/link_downed is not used instead, and the
  // port_err seen is set against the next read.
  EXPECT_EQ(port.down(30, {counter(kHwDowned, 4)}, 1), Changes{});
  EXPECT_EQ(port.up(60, {counter(kDowned, 4), counter(kHwDowned, 4)}), Changes{});
}

TEST(LinkQualityHiddenDown, DownsNotShownYetAreTheNewestAndAreCarriedOneReadAtMost) {
  // All shown, or more shown than seen (the rest is the quality's to judge): nothing carried.
  EXPECT_EQ(downs_to_carry(3, 0, 3, false), 0u);
  EXPECT_EQ(downs_to_carry(3, 2, 7, false), 0u);
  // A read that began before this sample's last port_errs were read: those wait for the next.
  EXPECT_EQ(downs_to_carry(3, 0, 1, false), 2u);
  // The downs carried from the sample before are shown first: 5 carried and 10 fresh of which
  // the counter shows 7 leave the newest 8, not the 3 fresh ones beyond 7 (a burst of flaps
  // read while port_errs still came in: each read shows the last one's carried downs first).
  EXPECT_EQ(downs_to_carry(10, 5, 7, false), 8u);
  EXPECT_EQ(downs_to_carry(1, 1, 1, false), 1u);
  // A carried down not shown by a read that began well after its event was read is carried no
  // more (its growth, if it ever comes, is a hidden down).
  EXPECT_EQ(downs_to_carry(0, 4, 0, false), 0u);
  EXPECT_EQ(downs_to_carry(2, 4, 1, false), 2u);
  // A read that began just after (a cached counter not read again yet): all still carried.
  EXPECT_EQ(downs_to_carry(0, 4, 0, true), 4u);
  EXPECT_EQ(downs_to_carry(2, 4, 1, true), 5u);
  EXPECT_EQ(downs_to_carry(UINT32_MAX, UINT32_MAX, 0, true), UINT32_MAX);
}

TEST(LinkQualityMissing, ACounterAbsentFromASampleKeepsItsBaselineAndItsGrowth) {
  DrivenPort port;
  port.up(0, {counter(kSymbols, 0), counter(kRecoveries, 0)});
  EXPECT_EQ(port.up(60, {counter(kSymbols, 2), counter(kRecoveries, 0)}), Changes{});
  EXPECT_EQ(port.up(120, {counter(kRecoveries, 0)}), Changes{});
  EXPECT_EQ(port.up(180, {counter(kSymbols, 2), counter(kRecoveries, 0)}), Changes{});
  EXPECT_EQ(port.up(240, {counter(kRecoveries, 0)}), Changes{});
  EXPECT_EQ(port.up(300, {counter(kSymbols, 3), counter(kRecoveries, 0)}),
            Changes{bad_bits(3, 2, 720, kNdr4x, 3)});
}

TEST(LinkQualityJudgement, ADownPortUpdatesBaselinesOnly) {
  DrivenPort port;
  port.up(0, {counter(kSymbols, 0), counter(kRecoveries, 0)});
  EXPECT_EQ(port.down(60, {counter(kSymbols, 1000), counter(kRecoveries, 50)}), Changes{});
  EXPECT_EQ(port.up(120, {counter(kSymbols, 1000), counter(kRecoveries, 50)}), Changes{});
  EXPECT_EQ(port.up(180, {counter(kSymbols, 1002), counter(kRecoveries, 54)}), Changes{});
  // The window's allowance is for the 660 s of its 720 the link was up.
  EXPECT_EQ(port.up(240, {counter(kSymbols, 1003), counter(kRecoveries, 54)}),
            Changes{bad_bits_up(3, 2, 720, 660, kNdr4x, 1003)});
  // Nor does growth while down hold a bad link's clean period back.
  EXPECT_EQ(port.down(300, {counter(kSymbols, 2000), counter(kRecoveries, 90)}), Changes{});
  EXPECT_EQ(port.next_deadline(), at(240 + 7560).mono_us);
}

TEST(LinkQualityJudgement, AnUnknownRateJudgesNoBitErrorsButTheOtherRules) {
  DrivenPort port;
  port.up(0, {counter(kSymbols, 0), counter(kRecoveries, 0)}, kUnknownRate);
  EXPECT_EQ(port.up(60, {counter(kSymbols, 1000), counter(kRecoveries, 5)}, kUnknownRate),
            Changes{bad_rule(LinkFault::kLinkRecoveries, kRecoveries, 5, 4, 720, 5)});
  EXPECT_EQ(port.port().view().faults, std::vector{LinkFault::kLinkRecoveries});
  EXPECT_EQ(port.port().view().ber_estimate, std::nullopt);  // not known, not 0
}

TEST(LinkQualityJudgement, LinkRecoveriesWithinTheirWindow) {
  // 5 within 720 s; the window is (now - 720 s, now].
  DrivenPort inside;
  inside.up(0, {counter(kRecoveries, 0)});
  EXPECT_EQ(inside.up(60, {counter(kRecoveries, 4)}), Changes{});
  EXPECT_EQ(inside.up(779, {counter(kRecoveries, 5)}),
            Changes{bad_rule(LinkFault::kLinkRecoveries, kRecoveries, 5, 4, 720, 5)});

  DrivenPort outside;
  outside.up(0, {counter(kRecoveries, 0)});
  outside.up(60, {counter(kRecoveries, 4)});
  EXPECT_EQ(outside.up(780, {counter(kRecoveries, 5)}), Changes{});
  EXPECT_EQ(outside.advance(100000), Changes{});
  EXPECT_FALSE(outside.port().bad());
}

TEST(LinkQualityJudgement, ATransportRuleOfItsOwn) {
  DrivenPort port(with_transport({kOutOfSequence, 100, 60}));
  port.up(0, {counter(kOutOfSequence, 0)});
  EXPECT_EQ(port.up(30, {counter(kOutOfSequence, 99)}), Changes{});
  EXPECT_EQ(port.up(90, {counter(kOutOfSequence, 100)}), Changes{});  // 1 within (30, 90]
  EXPECT_EQ(port.up(120, {counter(kOutOfSequence, 199)}),
            Changes{bad_rule(LinkFault::kTransportErrors, kOutOfSequence, 100, 99, 60, 199)});
  // No rule of its own by default.
  DrivenPort defaults;
  defaults.up(0, {counter(kOutOfSequence, 0)});
  EXPECT_EQ(defaults.up(60, {counter(kOutOfSequence, 1000000)}), Changes{});
}

TEST(LinkQualitySteps, TheOldestGrowthIsMergedIntoTheNextNeverDropped) {
  // 300 samples of growth 1: 256 steps are kept, the 45 oldest as one at t=45 (the 45th
  // second). At t=620 the true growth within (20, 620] is 281; counted from the kept steps it
  // is 301: too many, never too few.
  DrivenPort port(with_transport({"hw_counters/retries", 301, 600}));
  port.up(0, {counter("hw_counters/retries", 0)});
  for (int64_t s = 1; s <= 300; ++s) {
    ASSERT_EQ(port.up(s, {counter("hw_counters/retries", static_cast<uint64_t>(s))}), Changes{});
  }
  EXPECT_EQ(
      port.up(620, {counter("hw_counters/retries", 301)}),
      Changes{bad_rule(LinkFault::kTransportErrors, "hw_counters/retries", 301, 300, 600, 301)});
  static_assert(PortLinkQuality::kMaxSteps == 256);
}

TEST(LinkQualityEstimate, TheBerEstimateIsOverTheTimeObservedUpToTheLongestWindow) {
  DrivenPort port;
  port.up(0, {counter(kSymbols, 0)});
  EXPECT_EQ(port.port().view().ber_estimate, std::nullopt);  // one read observes no time
  port.up(720, {counter(kSymbols, 2)});
  EXPECT_EQ(port.port().view().ber_estimate, 2 / (400e9 * 720));
  port.up(7200, {counter(kSymbols, 2)});
  EXPECT_EQ(port.port().view().ber_estimate, 2 / (400e9 * 7200));
  port.up(7800, {counter(kSymbols, 2)});
  EXPECT_EQ(port.port().view().ber_estimate, 2 / (400e9 * 7500));
  port.up(720 + 7500, {counter(kSymbols, 2)});
  EXPECT_EQ(port.port().view().ber_estimate, 0);  // the growth has left the window

  LinkQualityView never_read;
  never_read.unknown = "not_read";
  EXPECT_EQ(PortLinkQuality().view(), never_read);
}
TEST(LinkQualityEstimate, APeggedSymbolErrorLeavesTheEstimateUnknownNotZero) {
  // symbol_error is 16 bits: at 65535 it counts nothing more, so no growth is no news.
  DrivenPort port;
  port.up(0, {counter(kSymbols, 65000)});
  port.up(60, {counter(kSymbols, 65000)});
  EXPECT_EQ(port.port().view().ber_estimate, 0.0);
  port.up(120, {counter(kSymbols, 65535)});
  port.up(180, {counter(kSymbols, 65535)});
  EXPECT_EQ(port.port().view().ber_estimate, std::nullopt);
  EXPECT_EQ(port.port().view().pegged, std::vector<std::string>{std::string(kSymbols)});
}

}  // namespace link_quality_test
}  // namespace rdma_eventd::daemon
