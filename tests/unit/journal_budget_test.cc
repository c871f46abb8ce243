// The journal budget: what is journaled, what is summarized, when a timer is wanted.
#include "core/journal_budget.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/clock.h"
#include "journal_budget_fixture.h"

namespace rdma_eventd::daemon {
namespace {

constexpr int64_t kWallBase = 1795342530000000;

class JournalBudgetTest : public ::testing::Test {
 protected:
  Instant at(double seconds) const {
    const auto us = static_cast<int64_t>(seconds * kMicrosPerSecond);
    return {.wall_us = kWallBase + us, .mono_us = us};
  }

  Record port_record(uint32_t port, const std::string& device = "mlx5_0") {
    Record r;
    r.seq = ++seq_;
    r.stream = "stream-1";
    r.event = EventKind::kPortErr;
    r.device = device;
    r.node_guid = "0c42:a103:00f6:5e44";
    r.port = port;
    r.port_info = PortInfo{};
    r.port_info->port = port;
    return r;
  }

  Record device_record(EventKind kind = EventKind::kDeviceAdded) {
    Record r;
    r.seq = ++seq_;
    r.stream = "stream-1";
    r.event = kind;
    r.device = "mlx5_1";
    r.node_guid = "0c42:a103:006d:0b3a";
    return r;
  }

  // Sends `n` records of mlx5_0 port 1 at time `t`; returns how many were journaled.
  int send(JournalBudget& b, int n, double t, uint32_t port = 1) {
    int journaled = 0;
    for (int i = 0; i < n; ++i)
      journaled += b.admit(port_record(port), at(t));
    return journaled;
  }

  std::vector<BudgetSummary> due(JournalBudget& b, double t) {
    std::vector<BudgetSummary> out;
    b.take_due(at(t), out);
    return out;
  }

  uint64_t seq_ = 0;
};

TEST_F(JournalBudgetTest, UnderBudgetEverythingIsJournaledAndNoTimerIsWanted) {
  JournalBudget b(JournalBudgetConfig{}, 0);
  for (int s = 0; s < 100; ++s) {
    EXPECT_EQ(send(b, 2, s), 2) << "at " << s << " s";  // the rate exactly
    EXPECT_TRUE(b.admit(device_record(), at(s)));
  }
  EXPECT_FALSE(b.next_deadline().has_value());
  EXPECT_TRUE(due(b, 1000).empty());
}

TEST_F(JournalBudgetTest, APortOverItsBudgetGetsItsBurstThenOneExactSummaryPerInterval) {
  JournalBudget b(small_budget(), 0);
  EXPECT_EQ(send(b, 8, 0), 5);  // seq 1-5 journaled, 6-8 not
  EXPECT_EQ(b.next_deadline(), 10 * kMicrosPerSecond);
  EXPECT_EQ(send(b, 2, 1), 1);  // a token came back: seq 9 journaled, 10 not
  EXPECT_TRUE(due(b, 9.999999).empty());

  BudgetSummary want;
  want.device = "mlx5_0";
  want.node_guid = "0c42:a103:00f6:5e44";
  want.port = 1;
  want.stream = "stream-1";
  want.start = at(0);
  want.duration_us = 10 * kMicrosPerSecond;
  want.not_journaled = 4;
  want.first_seq = 6;
  want.last_seq = 10;
  want.journaled_between = 1;  // seq 9
  want.ranges = {{6, 8, 3}, {10, 10, 1}};
  want.over_port_budget = 4;
  EXPECT_EQ(due(b, 10), std::vector<BudgetSummary>{want});
  EXPECT_FALSE(b.next_deadline().has_value());

  // The bucket is full again (a burst of 5): journaled again, and nothing is pending.
  EXPECT_EQ(send(b, 5, 10.5), 5);
  EXPECT_EQ(send(b, 3, 10.5), 0);  // a new interval starts with seq 16
  EXPECT_EQ(b.next_deadline(), at(20.5).mono_us);
}

TEST_F(JournalBudgetTest, AHealthVerdictIsAlwaysJournaledAndCountedInItsPortsSummary) {
  JournalBudget b(small_budget(), 0);
  EXPECT_EQ(send(b, 7, 0), 5);  // seq 1-5 journaled, 6-7 not
  Record verdict;
  verdict.seq = ++seq_;  // 8
  verdict.stream = "stream-1";
  verdict.event = EventKind::kPortHealth;
  verdict.device = "mlx5_0";
  verdict.node_guid = "0c42:a103:00f6:5e44";
  verdict.port = 1;
  verdict.health = "flapping";
  EXPECT_TRUE(b.admit(verdict, at(0)));  // the port's bucket is empty: journaled all the same
  EXPECT_EQ(send(b, 2, 0), 0);           // seq 9-10 not
  const std::vector<BudgetSummary> s = due(b, 10);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].port, 1u);
  EXPECT_EQ(s[0].first_seq, 6u);
  EXPECT_EQ(s[0].last_seq, 10u);
  EXPECT_EQ(s[0].not_journaled, 4u);
  EXPECT_EQ(s[0].journaled_between, 1u);  // the verdict, seq 8
  EXPECT_EQ(s[0].ranges, (std::vector<SeqRange>{{6, 7, 2}, {9, 10, 2}}));
}

TEST_F(JournalBudgetTest, ARecordAfterTheDeadlineClosesTheIntervalBeforeTheTimerFires) {
  JournalBudget b(small_budget(), 0);
  send(b, 6, 0);                 // seq 6 not journaled, interval [0, 10 s)
  EXPECT_EQ(send(b, 7, 12), 5);  // late timer: 5 tokens back (capped by the burst), 2 not
  // The first interval ended at 10 s with seq 6 alone; the second started at 12 s.
  EXPECT_EQ(b.next_deadline(), 10 * kMicrosPerSecond);
  const std::vector<BudgetSummary> s = due(b, 12);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].first_seq, 6u);
  EXPECT_EQ(s[0].last_seq, 6u);
  EXPECT_EQ(s[0].duration_us, 10 * kMicrosPerSecond);
  EXPECT_EQ(b.next_deadline(), 22 * kMicrosPerSecond);
  const std::vector<BudgetSummary> s2 = due(b, 22);
  ASSERT_EQ(s2.size(), 1u);
  EXPECT_EQ(s2[0].first_seq, 12u);
  EXPECT_EQ(s2[0].last_seq, 13u);
  EXPECT_EQ(s2[0].ranges, (std::vector<SeqRange>{{12, 13, 2}}));
}

// small_budget() with a host bucket small enough to matter, and the ports' burst to go with it.
JournalBudgetConfig with_host_bucket(uint32_t port_burst, uint32_t host_rate, uint32_t host_burst) {
  JournalBudgetConfig c = small_budget();
  c.port_burst = port_burst;
  c.host_rate = host_rate;
  c.host_burst = host_burst;
  return c;
}

TEST_F(JournalBudgetTest, TheHostBucketCapsAllPortsTogetherAndCountsDeviceRecords) {
  JournalBudget b(with_host_bucket(/*port_burst=*/2, /*host_rate=*/2, /*host_burst=*/2), 0);
  EXPECT_TRUE(b.admit(port_record(1), at(0)));   // seq 1
  EXPECT_TRUE(b.admit(device_record(), at(0)));  // seq 2: the host's last token
  EXPECT_FALSE(b.admit(port_record(1), at(0)));  // seq 3: its port had a token, the host none
  EXPECT_FALSE(b.admit(port_record(2), at(0)));  // seq 4: the same for another port
  EXPECT_FALSE(b.admit(device_record(EventKind::kDeviceFatal), at(0)));  // seq 5
  // Half a second later the host has one token again (2 a second) and port 1 has 1.5: the
  // refusal of seq 3 by the host did not use up port 1's token.
  EXPECT_TRUE(b.admit(port_record(1), at(0.5)));  // seq 6

  std::vector<BudgetSummary> out;
  b.take_all(at(3), out);
  ASSERT_EQ(out.size(), 3u);     // oldest first; the host's, then by device and port
  EXPECT_EQ(out[0].device, "");  // the host's records
  EXPECT_EQ(out[0].node_guid, "");
  EXPECT_EQ(out[0].ranges, (std::vector<SeqRange>{{5, 5, 1}}));
  EXPECT_EQ(out[0].over_host_budget, 1u);
  EXPECT_EQ(summary_message(out[0]),
            "host: 1 device record not journaled in the last 3 s; subscribers were sent it, "
            "seq 5");
  EXPECT_EQ(out[1].port, 1u);
  EXPECT_EQ(out[1].ranges, (std::vector<SeqRange>{{3, 3, 1}}));
  EXPECT_EQ(out[1].over_host_budget, 1u);
  EXPECT_EQ(out[1].over_port_budget, 0u);
  EXPECT_EQ(out[1].journaled_between, 0u);              // seq 6 came after the range
  EXPECT_EQ(out[1].duration_us, 3 * kMicrosPerSecond);  // cut short: the daemon stops
  EXPECT_EQ(out[2].port, 2u);
  EXPECT_EQ(out[2].ranges, (std::vector<SeqRange>{{4, 4, 1}}));
  EXPECT_FALSE(b.next_deadline().has_value());
}

TEST_F(JournalBudgetTest, ARecordRefusedByItsPortTakesNothingFromTheHost) {
  JournalBudget b(with_host_bucket(/*port_burst=*/1, /*host_rate=*/1, /*host_burst=*/2), 0);
  EXPECT_TRUE(b.admit(port_record(1), at(0)));   // the host has 1 left
  EXPECT_FALSE(b.admit(port_record(1), at(0)));  // refused by port 1's bucket
  EXPECT_TRUE(b.admit(device_record(), at(0)));  // so the host's last token is still there
}

TEST_F(JournalBudgetTest, BeyondSixteenRunsTheRangeAndCountsStillAccount) {
  JournalBudgetConfig c = small_budget();
  c.port_rate = 10;  // a token every 100 ms: runs of refused records broken by journaled ones
  JournalBudget b(c, 0);
  std::vector<uint64_t> refused;
  auto send_one = [&](double t) {
    if (!b.admit(port_record(1), at(t))) refused.push_back(seq_);
  };
  for (int i = 0; i < 6; ++i)
    send_one(0);
  for (int i = 1; i <= 40; ++i) {
    send_one(i * 0.15);
    send_one(i * 0.15);
  }
  std::vector<BudgetSummary> out;
  b.take_all(at(6.5), out);
  ASSERT_EQ(out.size(), 1u);
  const BudgetSummary& s = out[0];
  EXPECT_FALSE(s.ranges_complete);
  EXPECT_EQ(s.ranges.size(), BudgetSummary::kMaxRanges);
  EXPECT_EQ(s.first_seq, refused.front());
  EXPECT_EQ(s.last_seq, refused.back());
  EXPECT_EQ(s.not_journaled, refused.size());
  // Every record of the port in [first, last] is counted once, one way or the other.
  EXPECT_EQ(s.not_journaled + s.journaled_between, s.last_seq - s.first_seq + 1);
  // The ranges listed are exact: each holds refused records only.
  for (const SeqRange& r : s.ranges) {
    for (uint64_t q = r.first; q <= r.last; ++q)
      EXPECT_TRUE(std::find(refused.begin(), refused.end(), q) != refused.end()) << q;
    EXPECT_EQ(r.count, r.last - r.first + 1);
  }
}

TEST_F(JournalBudgetTest, ADisabledBudgetJournalsEverything) {
  JournalBudgetConfig c = small_budget();
  c.enabled = false;
  JournalBudget b(c, 0);
  EXPECT_EQ(send(b, 1000, 0), 1000);
  EXPECT_FALSE(b.next_deadline().has_value());
}

TEST_F(JournalBudgetTest, AReloadRefillsTheBucketsAndKeepsWhatIsPending) {
  JournalBudget b(small_budget(), 0);
  send(b, 7, 0);
  JournalBudgetConfig bigger = small_budget();
  bigger.port_burst = 50;
  b.set_config(bigger, at(1));
  EXPECT_EQ(send(b, 60, 1), 50);
  EXPECT_EQ(b.next_deadline(), 10 * kMicrosPerSecond);
  const std::vector<BudgetSummary> s = due(b, 10);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].not_journaled, 2u + 10u);
  EXPECT_EQ(s[0].journaled_between, 50u);
}

TEST_F(JournalBudgetTest, IdlePortsAreForgottenBeyondTheBound) {
  JournalBudget b(small_budget(), 0);
  for (size_t i = 0; i < JournalBudget::kMaxPorts + 100; ++i) {
    // One record per port, 10 s apart: each bucket is full again before the next port comes.
    EXPECT_TRUE(b.admit(port_record(1, "dev" + std::to_string(i)), at(10.0 * i)));
  }
  EXPECT_LE(b.ports_tracked(), JournalBudget::kMaxPorts);
}

TEST(BudgetSummaryText, TheMessageSaysHowManyWhyAndWhichSeqs) {
  BudgetSummary s;
  s.device = "mlx5_0";
  s.port = 1;
  s.not_journaled = 4812;
  s.duration_us = 10 * kMicrosPerSecond;
  s.health = "flapping";
  s.first_seq = 1200;
  s.last_seq = 6011;
  EXPECT_EQ(summary_message(s),
            "mlx5_0 port 1: 4,812 records not journaled in the last 10 s (flapping); subscribers "
            "were sent all of them, seq 1200\u20136011");
  s.journaled_between = 1000;
  s.health = "";
  s.duration_us = 2500000;
  EXPECT_EQ(summary_message(s),
            "mlx5_0 port 1: 4,812 records not journaled in the last 3 s; subscribers were sent "
            "all of them, seq 1200\u20136011 (1,000 journaled in between)");
}

TEST(BudgetSummaryText, TheJournalFieldsCarryTheExactAccount) {
  BudgetSummary s;
  s.device = "mlx5_0";
  s.node_guid = "0c42:a103:00f6:5e44";
  s.port = 1;
  s.stream = "847eff512abbab7d6f447f3d16f8a903";
  s.start = {.wall_us = 1795342530123456, .mono_us = 7 * kMicrosPerSecond};
  s.duration_us = 10 * kMicrosPerSecond;
  s.not_journaled = 5;
  s.first_seq = 10;
  s.last_seq = 20;
  s.journaled_between = 1;
  s.ranges = {{10, 12, 3}, {18, 20, 2}};
  s.over_port_budget = 4;
  s.over_host_budget = 1;
  s.health = "flapping";
  EXPECT_EQ(summary_journal_fields(s, "rdma-eventd"),
            (std::vector<std::string>{
                "MESSAGE=mlx5_0 port 1: 5 records not journaled in the last 10 s (flapping); "
                "subscribers were sent all of them, seq 10\u201320 (1 journaled in between)",
                "PRIORITY=4",
                "MESSAGE_ID=a105a327ff284edaa9d0ced1b833b9d9",
                "SYSLOG_IDENTIFIER=rdma-eventd",
                "RDMA_BUDGET_SCOPE=port",
                "RDMA_DEVICE=mlx5_0",
                "RDMA_NODE_GUID=0c42:a103:00f6:5e44",
                "RDMA_PORT=1",
                "RDMA_HEALTH=flapping",
                "RDMA_STREAM=847eff512abbab7d6f447f3d16f8a903",
                "RDMA_NOT_JOURNALED=5",
                "RDMA_FIRST_SEQ=10",
                "RDMA_LAST_SEQ=20",
                "RDMA_JOURNALED_BETWEEN=1",
                "RDMA_SEQ_RANGES=10-12:3,18-20:2",
                "RDMA_SEQ_RANGES_COMPLETE=1",
                "RDMA_OVER_PORT_BUDGET=4",
                "RDMA_OVER_HOST_BUDGET=1",
                "RDMA_INTERVAL_START=2026-11-22T10:15:30.123456Z",
                "RDMA_INTERVAL_US=10000000"}));
}

}  // namespace
}  // namespace rdma_eventd::daemon
