// Port health and the error counters (core/port_health with what core/link_quality found): a
// link fault makes a port that is up degraded with the fault's reason, none left makes it
// healthy (clean_period_elapsed); worse verdicts win; downs too brief for an event count for
// the flap rule.
#include <gtest/gtest.h>

#include "port_health_fixture.h"

namespace rdma_eventd::daemon {
namespace {

constexpr uint8_t kBitErrors = 1u << 0;
constexpr uint8_t kLinkRecoveries = 1u << 1;
constexpr uint8_t kTransport = 1u << 2;

class PortHealthLinkTest : public PortHealthTest {
 protected:
  Transitions faults(uint8_t bits, uint32_t port = 1) {
    Transitions out;
    EXPECT_TRUE(model_.set_link_faults("mlx5_0", port, bits, now(), out));
    return out;
  }
  Transitions hidden_downs(uint32_t n) {
    Transitions out;
    EXPECT_TRUE(model_.count_hidden_downs("mlx5_0", 1, n, now(), out));
    return out;
  }
};

TEST_F(PortHealthLinkTest, ALinkFaultMakesAPortDegradedUntilNoneIsLeft) {
  at(0);
  up();
  at(10);
  HealthTransition bad =
      want(PortHealth::kDegraded, PortHealth::kHealthy, HealthReason::kBitErrors);
  bad.cause_seq = 0;
  EXPECT_EQ(faults(kBitErrors), Transitions{bad});
  // Another fault besides: the same verdict, no transition.
  at(20);
  EXPECT_EQ(faults(kBitErrors | kLinkRecoveries), Transitions{});
  EXPECT_EQ(model_.verdict("mlx5_0", 1, now())->reason, HealthReason::kBitErrors);
  // The first is clean: still degraded, for the other.
  at(30);
  EXPECT_EQ(faults(kLinkRecoveries), Transitions{});
  EXPECT_EQ(model_.verdict("mlx5_0", 1, now())->reason, HealthReason::kLinkRecoveries);
  at(40);
  HealthTransition clean =
      want(PortHealth::kHealthy, PortHealth::kDegraded, HealthReason::kCleanPeriodElapsed);
  clean.cause_seq = 0;
  EXPECT_EQ(faults(0), Transitions{clean});
  // A transport fault has its own reason.
  at(50);
  bad = want(PortHealth::kDegraded, PortHealth::kHealthy, HealthReason::kTransportErrors);
  bad.cause_seq = 0;
  EXPECT_EQ(faults(kTransport), Transitions{bad});
}

TEST_F(PortHealthLinkTest, AWorseVerdictWinsAndTheFaultShowsOnceTheLinkIsBack) {
  at(0);
  up();
  at(5);
  faults(kBitErrors);
  at(6);
  down();
  EXPECT_EQ(health_of(), PortHealth::kDown);
  at(7);
  Transitions t = up();
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].health, PortHealth::kDegraded);
  EXPECT_EQ(t[0].reason, HealthReason::kBitErrors);
  // A port the model does not know is left alone.
  Transitions out;
  EXPECT_FALSE(model_.set_link_faults("mlx5_9", 1, kBitErrors, now(), out));
  EXPECT_FALSE(model_.count_hidden_downs("mlx5_9", 1, 3, now(), out));
  EXPECT_TRUE(out.empty());
}

TEST_F(PortHealthLinkTest, DownsTooBriefForAnEventCountForTheFlapRule) {
  at(0);
  up();
  at(10);
  down();
  at(11);
  up();
  // Two more downs that no event told of: three within the window, flapping; the link is up.
  at(20);
  Transitions t = hidden_downs(2);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].health, PortHealth::kFlapping);
  EXPECT_EQ(t[0].reason, HealthReason::kFlapsInWindow);
  EXPECT_EQ(t[0].downs_in_window, 3u);
  EXPECT_TRUE(t[0].link_up);
  // The quiet period runs from the last of them.
  at(20 + 600 - 1);
  EXPECT_EQ(advance(), Transitions{});
  at(20 + 600);
  t = advance();
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].health, PortHealth::kHealthy);
  EXPECT_EQ(t[0].reason, HealthReason::kQuietPeriodElapsed);
}

}  // namespace
}  // namespace rdma_eventd::daemon
