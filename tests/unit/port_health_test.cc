// Port health driven by the link: up, down, flapping, degraded, and when the model wants a timer.
#include "port_health_fixture.h"

namespace rdma_eventd::daemon {
namespace {

TEST_F(PortHealthTest, APortFirstSeenUpIsHealthyAndOneNeverSeenUpIsDownButNotCounted) {
  // Given a dual-port adapter whose port 2 has no cable (down by design),
  // port 1 is healthy, port 2 is down for never_up, and the host is healthy.
  Transitions t = up(1);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0], want(PortHealth::kHealthy, std::nullopt, HealthReason::kFirstSeen));
  t = feed(port_record(EventKind::kPortState, "mlx5_0", port(2, PortState::kDown)));
  HealthTransition never = want(PortHealth::kDown, std::nullopt, HealthReason::kNeverUp);
  never.port = 2;
  never.last_healthy = {};
  EXPECT_EQ(t, Transitions{never});

  HostVerdict host;
  host.worst = PortHealth::kHealthy;
  host.counted[static_cast<size_t>(PortHealth::kHealthy)] = 1;
  host.not_counted = 1;
  EXPECT_EQ(model_.host_verdict(), host);
  EXPECT_FALSE(model_.next_deadline().has_value());
}

TEST_F(PortHealthTest, ALinkThatGoesDownIsDownUntilItComesBackUp) {
  at(0);
  up();
  at(5);
  Transitions t = down();
  EXPECT_EQ(t, Transitions{[&] {
              HealthTransition w =
                  want(PortHealth::kDown, PortHealth::kHealthy, HealthReason::kLinkDown);
              w.downs_in_window = 1;
              return w;
            }()});
  EXPECT_EQ(model_.host_verdict().worst, PortHealth::kDown);
  at(7);
  t = up();
  HealthTransition back = want(PortHealth::kHealthy, PortHealth::kDown, HealthReason::kLinkUp);
  back.downs_in_window = 1;
  EXPECT_EQ(t, Transitions{back});

  const PortVerdict v = *model_.verdict("mlx5_0", 1, now());
  EXPECT_EQ(v.health, PortHealth::kHealthy);
  EXPECT_EQ(v.reason, HealthReason::kLinkUp);
  EXPECT_EQ(v.since, instant_at(7));
  EXPECT_EQ(v.downs_in_window, 1u);
  EXPECT_FALSE(model_.next_deadline().has_value());  // one down is no flap: nothing to wait for
}

TEST_F(PortHealthTest, ThreeDownsWithinTheWindowMakeThePortFlapping) {
  // Given the defaults (3 downs within an hour), the third down within the hour is a flap.
  at(0);
  up();
  for (int64_t s : {10, 20}) {
    at(s);
    down();
    at(s + 1);
    up();
  }
  at(30);
  Transitions t = down();
  HealthTransition w =
      want(PortHealth::kFlapping, PortHealth::kHealthy, HealthReason::kFlapsInWindow);
  w.downs_in_window = 3;
  w.link_up = false;
  EXPECT_EQ(t, Transitions{w});
  EXPECT_EQ(model_.host_verdict().worst, PortHealth::kFlapping);
}

TEST_F(PortHealthTest, DownsFartherApartThanTheWindowNeverMakeAFlap) {
  at(0);
  up();
  for (int64_t s : {100, 2000, 3800, 5700}) {  // never 3 within 3600 s
    at(s);
    EXPECT_EQ(down().at(0).health, PortHealth::kDown);
    at(s + 1);
    EXPECT_EQ(up().at(0).health, PortHealth::kHealthy);
  }
}

// Three downs at 10, 20 and 30 s, the link back up at 31 s.
class FlappingPortTest : public PortHealthTest {
 protected:
  void SetUp() override {
    at(0);
    up();
    for (int64_t s : {10, 20, 30}) {
      at(s);
      down();
      at(s + 1);
      up();
    }
    ASSERT_EQ(health_of(), PortHealth::kFlapping);
  }
};

TEST_F(FlappingPortTest, ItBecomesHealthyOnlyAfterTheQuietPeriodWithTheLinkUpWithNoRecord) {
  // The model asks to be woken when the quiet period (600 s from the link's return) ends.
  EXPECT_EQ(model_.next_deadline(), mono_at(31 + 600));
  at(31 + 599);
  EXPECT_TRUE(advance().empty());
  EXPECT_EQ(health_of(), PortHealth::kFlapping);

  at(31 + 600);
  HealthTransition w =
      want(PortHealth::kHealthy, PortHealth::kFlapping, HealthReason::kQuietPeriodElapsed);
  w.cause_seq = 0;  // time did it, not a record
  w.downs_in_window = 3;
  EXPECT_EQ(advance(), Transitions{w});
  EXPECT_FALSE(model_.next_deadline().has_value());  // nothing pending: no timer
}

TEST_F(FlappingPortTest, ADownInsideTheQuietPeriodStartsItAgain) {
  at(300);
  EXPECT_TRUE(down().empty());  // still flapping: no transition
  at(310);
  EXPECT_TRUE(up().empty());
  EXPECT_EQ(model_.next_deadline(), mono_at(310 + 600));
  at(631);  // the first quiet period would have ended here
  EXPECT_TRUE(advance().empty());
  at(910);
  EXPECT_EQ(advance().at(0).reason, HealthReason::kQuietPeriodElapsed);
}

TEST_F(FlappingPortTest, ItStaysFlappingWhileTheLinkIsDownAndAsksForNoTimer) {
  at(40);
  down();
  EXPECT_FALSE(model_.next_deadline().has_value());
  at(5000);
  EXPECT_TRUE(advance().empty());
  EXPECT_EQ(health_of(), PortHealth::kFlapping);
}

TEST_F(FlappingPortTest, ARecordAfterTheQuietPeriodSeesItEndedFirst) {
  // The timer has not fired yet when a record comes: the port was healthy before it.
  at(31 + 700);
  Transitions t = down();
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].health, PortHealth::kHealthy);
  EXPECT_EQ(t[0].reason, HealthReason::kQuietPeriodElapsed);
  // The downs at 10, 20 and 30 s are still within the hour: this one makes a fourth.
  EXPECT_EQ(t[1].health, PortHealth::kFlapping);
  EXPECT_EQ(t[1].downs_in_window, 3u);  // the model keeps the newest flap_downs, no more
}

TEST_F(PortHealthTest, APortErrAlreadyBackUpWhenQueriedCountsAsADown) {
  // PORT_ERR, then PORT_ACTIVE before the daemon queried the port: the port_err record shows
  // the link active. That is a down all the same; three of them are a flap.
  at(0);
  up();
  Transitions t;
  for (int64_t s : {10, 20, 30}) {
    at(s);
    t = feed(port_record(EventKind::kPortErr, "mlx5_0", port(1, PortState::kActive)));
  }
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].health, PortHealth::kFlapping);
  EXPECT_EQ(t[0].previous, PortHealth::kHealthy);
  EXPECT_EQ(model_.next_deadline(), mono_at(30 + 600));  // the link is up: the quiet period runs
}

TEST_F(PortHealthTest, ALinkThatRetrainsAt1xIsDegradedUntilItIsBackAt4x) {
  at(0);
  up(1, 4);
  at(10);
  Transitions t = feed(port_record(EventKind::kUnknown, "mlx5_0", port(1, PortState::kActive, 1)));
  HealthTransition w =
      want(PortHealth::kDegraded, PortHealth::kHealthy, HealthReason::kRateBelowLastHealthy);
  w.rate = {1, LinkSpeed::kHdr};
  EXPECT_EQ(t, Transitions{w});
  at(20);
  t = up(1, 4);
  EXPECT_EQ(t, Transitions{
                   want(PortHealth::kHealthy, PortHealth::kDegraded, HealthReason::kRateRestored)});
}

TEST_F(PortHealthTest, ARetrainAt1xIsNotDegradedWhenThatCheckIsOff) {
  HealthConfig c;
  c.degraded_below_last_healthy = false;
  model_ = PortHealthModel(c);
  up(1, 4);
  EXPECT_TRUE(up(1, 1).empty());
  EXPECT_EQ(health_of(), PortHealth::kHealthy);
}

TEST_F(PortHealthTest, AnExpectedWidthPerDeviceGlobMakesASlowPortDegradedFromTheStart) {
  // mlx5_* ports must run at 4x HDR; mlx4_0 has no expectation.
  HealthConfig c;
  c.expected = {{device_pattern("mlx5_*"), {}, 4, LinkSpeed::kHdr}};
  model_ = PortHealthModel(c);
  Transitions t = up(1, 1);
  HealthTransition w = want(PortHealth::kDegraded, std::nullopt, HealthReason::kRateBelowExpected);
  w.rate = {1, LinkSpeed::kHdr};
  w.last_healthy = {};
  w.expected = {4, LinkSpeed::kHdr};
  EXPECT_EQ(t, Transitions{w});
  EXPECT_EQ(up(1, 1, "mlx4_0").at(0).health, PortHealth::kHealthy);
  // An EDR link is below an HDR expectation even at 4x.
  EXPECT_EQ(feed(port_record(EventKind::kPortActive, "mlx5_1",
                             port(1, PortState::kActive, 4, LinkSpeed::kEdr)))
                .at(0)
                .reason,
            HealthReason::kRateBelowExpected);
  EXPECT_EQ(up(1, 4).at(0).reason, HealthReason::kRateRestored);
}

TEST_F(PortHealthTest, APortExpectedByConfigurationIsCountedDownEvenIfNeverUp) {
  HealthConfig c;
  c.expected = {{device_pattern("mlx5_0"), {1}, 0, LinkSpeed::kUnknown}};  // port 1 only, any rate
  model_ = PortHealthModel(c);
  EXPECT_EQ(down(1).at(0).reason, HealthReason::kLinkDown);
  EXPECT_EQ(down(2).at(0).reason, HealthReason::kNeverUp);
  EXPECT_EQ(model_.host_verdict().worst, PortHealth::kDown);
  EXPECT_EQ(model_.host_verdict().not_counted, 1u);
}

TEST_F(PortHealthTest, AnExpectationNamingANodeGuidAppliesToThatDeviceWhateverItsName) {
  // The expectation names mlx5_0's node GUID, in the 0x form: mlx5_0 at 1x is degraded, and
  // mlx5_1, another device, is not; nor is a device named like the GUID's text.
  HealthConfig c;
  c.expected = {{device_pattern("0x0c42a10300f65e44"), {}, 4, LinkSpeed::kUnknown}};
  model_ = PortHealthModel(c);
  EXPECT_EQ(up(1, 1).at(0).reason, HealthReason::kRateBelowExpected);
  EXPECT_EQ(
      feed(port_record(EventKind::kPortActive, "mlx5_1", port(1, PortState::kActive, 1), kGuid1))
          .at(0)
          .health,
      PortHealth::kHealthy);
  EXPECT_EQ(feed(port_record(EventKind::kPortActive, "0x0c42a10300f65e44",
                             port(1, PortState::kActive, 1), kGuid1))
                .at(0)
                .health,
            PortHealth::kHealthy);
}

TEST_F(PortHealthTest, AReloadJudgesEveryPortAgain) {
  up(1, 1);
  EXPECT_EQ(health_of(), PortHealth::kHealthy);  // first seen at 1x: nothing says otherwise
  HealthConfig c;
  c.expected = {{device_pattern("mlx5_*"), {}, 4, LinkSpeed::kUnknown}};
  Transitions t;
  model_.set_config(c, now(), t);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].reason, HealthReason::kRateBelowExpected);
  EXPECT_EQ(t[0].cause_seq, 0u);
  t.clear();
  model_.set_config(HealthConfig{}, now(), t);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].health, PortHealth::kHealthy);
  EXPECT_EQ(t[0].reason, HealthReason::kConfigChanged);
}

TEST_F(PortHealthTest, OnlyTheNewestDownsAreKeptWhateverTheirNumber) {
  at(0);
  up();
  for (int i = 0; i < 10000; ++i) {
    mono_ += kSecond;
    down();
    up();
  }
  const std::vector<DeviceHealthState> state = model_.export_state();
  ASSERT_EQ(state.size(), 1u);
  EXPECT_EQ(state[0].ports.at(0).downs_mono_us.size(), 3u);
  EXPECT_EQ(state[0].ports.at(0).downs_mono_us.back(), mono_);
}

}  // namespace
}  // namespace rdma_eventd::daemon
