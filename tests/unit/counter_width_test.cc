// Counter widths by driver (core/counter_width) and what a wrapping counter's drop is, and link
// quality judging mlx5's 32-bit Q counters on a driven clock: a wrap counts its growth, a reset
// stays a baseline, all ones is no peg, and 64-bit counters are judged as they always were.
#include "core/counter_width.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "link_quality_driven_port.h"
#include "link_quality_fixture.h"

namespace rdma_eventd::daemon {
namespace {

using namespace link_quality_test;

constexpr uint64_t kMax32 = 4294967295;

TEST(CounterWidth, Mlx5IsTheDriverOfTheParentAndItsAuxiliaryDrivers) {
  EXPECT_EQ(counter_driver("mlx5_core"), CounterDriver::kMlx5);
  EXPECT_EQ(counter_driver("mlx5_core.sf"), CounterDriver::kMlx5);
  for (const char* other : {"", "mlx4_core", "bnxt_en", "mlx5", "mlx5_core_x", "mlx5_coresf",
                            "xmlx5_core", "mlx5_core."})
    EXPECT_EQ(counter_driver(other), CounterDriver::kOther) << other;
}

TEST(CounterWidth, Mlx5QCountersAre32BitsAndWrapItsOthers64) {
  // mlx5_ib_query_q_counters(): be32_to_cpu of QUERY_Q_COUNTER's fields (vport_: switchdev).
  for (const char* name : {"out_of_sequence", "out_of_buffer", "packet_seq_err",
                           "local_ack_timeout_err", "rnr_nak_retry_err", "req_cqe_flush_error",
                           "roce_slow_restart_trans", "vport_out_of_sequence"}) {
    const std::string file = std::string("hw_counters/") + name;
    EXPECT_EQ(counter_value(CounterDriver::kMlx5, file, 7), (CounterValue{file, 32, 7, true}));
  }
  // Congestion (be64 at their _high offset), PPCNT (be64), op counters (flow counters), and a
  // name the table does not know.
  for (const char* name : {"np_cnp_sent", "rp_cnp_handled", "rx_icrc_encapsulated", "rdma_tx_bytes",
                           "no_such_counter", "vport_np_cnp_sent"}) {
    const std::string file = std::string("hw_counters/") + name;
    EXPECT_EQ(counter_value(CounterDriver::kMlx5, file, 7), (CounterValue{file, 64, 7, false}));
  }
  // rxe's are atomic64_t; an unknown driver's are taken as 64-bit.
  for (const char* name : {"out_of_sequence", "out_of_seq_request", "link_downed"}) {
    const std::string file = std::string("hw_counters/") + name;
    EXPECT_EQ(counter_value(CounterDriver::kOther, file, 7), (CounterValue{file, 64, 7, false}));
  }
  // counters/ keep their IBA widths and saturate, whoever the driver (no PMA file is named
  // out_of_sequence: 64, as any name it does not know).
  EXPECT_EQ(counter_value(CounterDriver::kMlx5, "symbol_error", 7),
            (CounterValue{"symbol_error", 16, 7, false}));
  EXPECT_EQ(counter_value(CounterDriver::kMlx5, "link_downed", 7),
            (CounterValue{"link_downed", 8, 7, false}));
  EXPECT_EQ(counter_value(CounterDriver::kMlx5, "out_of_sequence", 7),
            (CounterValue{"out_of_sequence", 64, 7, false}));
  EXPECT_EQ(counter_value(CounterDriver::kOther, "local_link_integrity_errors", 7),
            (CounterValue{"local_link_integrity_errors", 4, 7, false}));
}

TEST(CounterWidth, ADropFromTheTopQuarterIsAWrapAndAnyOtherAReset) {
  EXPECT_EQ(growth_across_wrap(kMax32 - 5, 4, 32), 10u);
  EXPECT_EQ(growth_across_wrap(kMax32, 0, 32), 1u);
  // At most a quarter of the range (2^30) across the wrap; one more is a reset.
  EXPECT_EQ(growth_across_wrap(kMax32 - (uint64_t{1} << 30) + 1, 0, 32), uint64_t{1} << 30);
  EXPECT_EQ(growth_across_wrap(kMax32 - (uint64_t{1} << 30), 0, 32), std::nullopt);
  EXPECT_EQ(growth_across_wrap(kMax32 - 100, (uint64_t{1} << 30), 32), std::nullopt);
  // A reset of a counter in the lower part of its range; no drop; a value over the width.
  EXPECT_EQ(growth_across_wrap(1000000, 12, 32), std::nullopt);
  EXPECT_EQ(growth_across_wrap(12, 12, 32), std::nullopt);
  EXPECT_EQ(growth_across_wrap(12, 13, 32), std::nullopt);
  EXPECT_EQ(growth_across_wrap(kMax32 + 1, 3, 32), std::nullopt);
  EXPECT_EQ(growth_across_wrap(UINT64_MAX - 1, 0, 64), 2u);
}

const std::string kSeq = "hw_counters/out_of_sequence";

CounterValue mlx5_seq(uint64_t value) {
  return counter_value(CounterDriver::kMlx5, kSeq, value);
}

TEST(LinkQualityWrap, GrowthAcrossAWrapCountsAgainstItsTransportRule) {
  DrivenPort port(with_transport({kSeq, 100, 60}));
  EXPECT_EQ(port.up(0, {mlx5_seq(kMax32 - 40)}), Changes{});
  // 41 to reach 2^32 (0), then 70: 111 in 30 s, no reset.
  EXPECT_EQ(port.up(30, {mlx5_seq(70)}),
            Changes{bad_rule(LinkFault::kTransportErrors, kSeq, 111, 99, 60, 70)});
  EXPECT_EQ(port.port().last_growth(kSeq), 111u);
  EXPECT_EQ(port.port().view().unknown, "");
  // And on from there as any growth: within the window with what came before the wrap.
  DrivenPort slow(with_transport({kSeq, 100, 60}));
  slow.up(0, {mlx5_seq(kMax32 - 59)});
  EXPECT_EQ(slow.up(20, {mlx5_seq(kMax32 - 9)}), Changes{});
  EXPECT_EQ(slow.up(40, {mlx5_seq(39)}), Changes{});  // 49 across the wrap: 99 so far
  EXPECT_EQ(slow.up(50, {mlx5_seq(41)}),
            Changes{bad_rule(LinkFault::kTransportErrors, kSeq, 101, 99, 60, 41)});
}

TEST(LinkQualityWrap, ADropFromLowInTheRangeIsStillAResetAndABaseline) {
  DrivenPort port(with_transport({kSeq, 100, 60}));
  port.up(0, {mlx5_seq(1000000)});
  EXPECT_EQ(port.up(30, {mlx5_seq(5)}), Changes{about(Kind::kReset, kSeq, 5)});
  EXPECT_EQ(port.port().last_growth(kSeq), std::nullopt);
  // The next read counts from the reset's value, nothing from before it.
  EXPECT_EQ(port.up(40, {mlx5_seq(104)}), Changes{});
  EXPECT_EQ(port.up(50, {mlx5_seq(105)}),
            Changes{bad_rule(LinkFault::kTransportErrors, kSeq, 100, 99, 60, 105)});
  // A drop larger than a quarter of the range from the top is a reset too.
  DrivenPort high(with_transport({kSeq, 1, 60}));
  high.up(0, {mlx5_seq(kMax32 - (uint64_t{1} << 30))});
  EXPECT_EQ(high.up(30, {mlx5_seq(0)}), Changes{about(Kind::kReset, kSeq, 0)});
}

TEST(LinkQualityWrap, A32BitCounterAtAllOnesIsNotPeggedAndCountsOn) {
  DrivenPort port(with_transport({kSeq, 1000, 60}));
  port.up(0, {mlx5_seq(kMax32 - 95)});
  EXPECT_EQ(port.up(30, {mlx5_seq(kMax32)}), Changes{});
  EXPECT_EQ(port.up(40, {mlx5_seq(kMax32)}), Changes{});
  LinkQualityView v = port.port().view();
  EXPECT_TRUE(v.pegged.empty());
  EXPECT_EQ(v.unknown, "");
  EXPECT_EQ(v.values.at(kSeq), kMax32);
  EXPECT_EQ(port.port().last_growth(kSeq), 0u);  // read, and did not grow
  // 95 before, 905 across the wrap.
  EXPECT_EQ(port.up(50, {mlx5_seq(904)}),
            Changes{bad_rule(LinkFault::kTransportErrors, kSeq, 1000, 999, 60, 904)});
  v = port.port().view();
  EXPECT_TRUE(v.pegged.empty());
  EXPECT_EQ(v.faults, std::vector{LinkFault::kTransportErrors});
}

TEST(LinkQualityWrap, A64BitCounterIsJudgedAsBefore) {
  // rxe's (or an unknown driver's) hw_counters: all ones is pegged, a drop is a reset.
  const CounterValue near_top = counter_value(CounterDriver::kOther, kSeq, UINT64_MAX - 40);
  EXPECT_EQ(near_top, (CounterValue{kSeq, 64, UINT64_MAX - 40}));
  DrivenPort port(with_transport({kSeq, 100, 60}));
  port.up(0, {near_top});
  EXPECT_EQ(port.up(30, {counter_value(CounterDriver::kOther, kSeq, 70)}),
            Changes{about(Kind::kReset, kSeq, 70)});
  DrivenPort pegs(with_transport({kSeq, 100, 60}));
  pegs.up(0, {near_top});
  EXPECT_EQ(pegs.up(30, {counter_value(CounterDriver::kOther, kSeq, UINT64_MAX)}),
            Changes{about(Kind::kPegged, kSeq, UINT64_MAX)});
  EXPECT_EQ(pegs.port().view().pegged, std::vector{kSeq});
  EXPECT_EQ(pegs.port().view().unknown, "pegged");
}

TEST(LinkQualityWrap, ADropAcrossARestartIsASilentBaselineEvenNearTheTop) {
  DrivenPort before(with_transport({kSeq, 100, 60}));
  before.up(0, {mlx5_seq(kMax32 - 40)});
  before.up(30, {mlx5_seq(kMax32 - 10)});
  DrivenPort after(with_transport({kSeq, 100, 60}));
  after.port().restore(before.port().export_state());
  // The time away is unknown: it may have wrapped more than once.
  EXPECT_EQ(after.up(90, {mlx5_seq(70)}), Changes{});
  EXPECT_EQ(after.port().last_growth(kSeq), std::nullopt);
  EXPECT_EQ(after.up(100, {mlx5_seq(169)}), Changes{});
  EXPECT_EQ(after.up(110, {mlx5_seq(170)}),
            Changes{bad_rule(LinkFault::kTransportErrors, kSeq, 100, 99, 60, 170)});
}

}  // namespace
}  // namespace rdma_eventd::daemon
