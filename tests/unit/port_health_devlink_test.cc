// Port health and devlink health reporters (core/port_health's on_devlink): a fatal reporter in
// error makes its device's ports fatal until it recovers (one verdict with DEVICE_FATAL); a
// firmware or queue reporter in error holds the port degraded with its own reason and counts
// errors against their threshold; a reporter with no role changes nothing.
#include <gtest/gtest.h>

#include "port_health_fixture.h"

namespace rdma_eventd::daemon {
namespace {

class PortHealthDevlinkTest : public PortHealthTest {
 protected:
  Transitions reporter(const std::string& name, const std::string& change, uint32_t port = 0,
                       uint64_t new_errors = 1, const std::string& device = "mlx5_0") {
    Record r = record(EventKind::kDevlinkHealth, device, kGuid0);
    r.port = port;
    DevlinkHealthEvent e;
    e.handle = "pci/0000:08:00.0";
    e.reporter = name;
    e.change = change;
    e.state = change == "recovered" ? "healthy" : change == "removed" ? "removed" : "error";
    e.new_errors = change == "found_in_error" || change == "removed" ? 0
                   : change == "recovered"                           ? recovered_errors_
                                                                     : new_errors;
    e.auto_recover = auto_recover_;
    r.devlink = e;
    return feed(r);
  }
  // Port 1 of mlx5_0 up at 0 s, then reporter `name`'s first error at `s` seconds: one verdict.
  void first_error_at(const std::string& name, int64_t s) {
    at(0);
    up();
    at(s);
    EXPECT_EQ(reporter(name, "error").size(), 1u);
  }
  Transitions removed_record(EventKind kind) {
    Record r = record(kind, "mlx5_0", kGuid0);
    r.ports = {port(1, PortState::kActive)};
    return feed(r);
  }
  // `t` is one verdict of mlx5_0's port 1: `health` for `reason`.
  static void expect_one(const Transitions& t, PortHealth health, HealthReason reason) {
    ASSERT_EQ(t.size(), 1u);
    EXPECT_EQ(t[0].health, health);
    EXPECT_EQ(t[0].reason, reason);
  }
  std::optional<HealthReason> reason_of() const {
    auto v = model_.verdict("mlx5_0", 1, now());
    return v ? std::optional(v->reason) : std::nullopt;
  }
  bool auto_recover_ = true;
  uint64_t recovered_errors_ = 0;  // a recovery's new_errors: a report lost before it
};

TEST_F(PortHealthDevlinkTest, AFatalReporterMakesEveryPortFatalUntilItRecovers) {
  at(0);
  up(1);
  up(2);
  at(5);
  const Transitions fatal = reporter("fw_fatal", "error");
  ASSERT_EQ(fatal.size(), 2u);
  HealthTransition p1 = want(PortHealth::kFatal, PortHealth::kHealthy, HealthReason::kDeviceFatal);
  p1.link_up = true;  // the reporter says nothing of the link
  EXPECT_EQ(fatal[0], p1);
  EXPECT_EQ(fatal[1].port, 2u);
  EXPECT_EQ(fatal[1].health, PortHealth::kFatal);
  // Another report while it is not recovered: still fatal, no new verdict.
  at(6);
  EXPECT_EQ(reporter("fw_fatal", "error_again"), Transitions{});
  at(7);
  const Transitions back = reporter("fw_fatal", "recovered");
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0],
            want(PortHealth::kHealthy, PortHealth::kFatal, HealthReason::kDevlinkRecovered));
  EXPECT_EQ(health_of(2), PortHealth::kHealthy);
}

TEST_F(PortHealthDevlinkTest, DeviceFatalAndTheFatalReporterAreOneVerdict) {
  at(0);
  up();
  at(1);
  Record fatal = record(EventKind::kDeviceFatal, "mlx5_0", kGuid0);
  fatal.ports = {port(1, PortState::kActive)};
  EXPECT_EQ(feed(fatal).size(), 1u);
  at(2);
  EXPECT_EQ(reporter("fw_fatal", "error"), Transitions{}) << "already fatal: no second verdict";
  // The device is reopened (its ports come back) while the reporter is still in error: fatal.
  at(3);
  EXPECT_EQ(up(), Transitions{});
  EXPECT_EQ(health_of(), PortHealth::kFatal);
  at(4);
  const Transitions back = reporter("fw_fatal", "recovered");
  EXPECT_EQ(back, Transitions{want(PortHealth::kHealthy, PortHealth::kFatal,
                                   HealthReason::kDevlinkRecovered)});
}

TEST_F(PortHealthDevlinkTest, AReporterFoundInErrorAtStartIsFatalToo) {
  at(0);
  up();
  EXPECT_EQ(reporter("fw_fatal", "found_in_error").size(), 1u);
  EXPECT_EQ(health_of(), PortHealth::kFatal);
}

TEST_F(PortHealthDevlinkTest, AStuckReporterHoldsThePortDegradedPastItsQuietPeriod) {
  at(0);
  up();
  at(10);
  const Transitions first = reporter("fw", "error");
  HealthTransition degraded =
      want(PortHealth::kDegraded, PortHealth::kHealthy, HealthReason::kFirmwareErrors);
  degraded.errors_in_window = 1;
  EXPECT_EQ(first, Transitions{degraded});
  // Another report while it was not recovered: its recovery failed, it is stuck.
  at(20);
  EXPECT_EQ(reporter("fw", "error_again"), Transitions{});
  // The threshold's quiet period (3600 s) passes: still degraded.
  at(20 + 4000);
  EXPECT_EQ(advance(), Transitions{});
  EXPECT_EQ(health_of(), PortHealth::kDegraded);
  // It recovers: healthy at once.
  at(20 + 4001);
  const Transitions back = reporter("fw", "recovered");
  EXPECT_EQ(back, Transitions{want(PortHealth::kHealthy, PortHealth::kDegraded,
                                   HealthReason::kDevlinkRecovered)});
}

TEST_F(PortHealthDevlinkTest, AReporterThatCannotRecoverIsJudgedByItsThresholdOnly) {
  // mlx5's fw reporter has no recovery: after its first report it stays in error for good.
  auto_recover_ = false;
  first_error_at("fw", 10);
  at(20);
  EXPECT_EQ(reporter("fw", "error_again"), Transitions{});
  at(20 + 3600);
  const Transitions t = advance();
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].health, PortHealth::kHealthy);
  EXPECT_EQ(t[0].reason, HealthReason::kQuietPeriodElapsed);
  // Found in error at a restart: counts nothing, holds nothing.
  at(20 + 3700);
  EXPECT_EQ(reporter("fw", "found_in_error"), Transitions{});
}

TEST_F(PortHealthDevlinkTest, ARecoveredFirmwareErrorStillCountsUntilItsQuietPeriodEnds) {
  first_error_at("fw", 10);
  at(11);
  // Recovered within the quiet period: the error window still holds the port degraded.
  EXPECT_EQ(reporter("fw", "recovered"), Transitions{});
  EXPECT_EQ(health_of(), PortHealth::kDegraded);
  at(10 + 3600);
  HealthTransition healthy =
      want(PortHealth::kHealthy, PortHealth::kDegraded, HealthReason::kQuietPeriodElapsed);
  healthy.cause_seq = 0;
  EXPECT_EQ(advance(), Transitions{healthy});
}

TEST_F(PortHealthDevlinkTest, QueueErrorsCountAgainstTheirPortOnlyOverTheirThreshold) {
  at(0);
  up(1);
  up(2);
  at(1);
  // tx on port 2, recovered each time: 3 within 600 s make it degraded; port 1 is untouched.
  EXPECT_EQ(reporter("tx", "error", 2), Transitions{});
  EXPECT_EQ(reporter("tx", "recovered", 2), Transitions{});
  EXPECT_EQ(reporter("tx", "error", 2), Transitions{});
  EXPECT_EQ(reporter("tx", "recovered", 2), Transitions{});
  // The third report says it counted two (notifications lost in between): over the threshold.
  const Transitions t = reporter("tx", "error", 2, 2);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].port, 2u);
  EXPECT_EQ(t[0].health, PortHealth::kDegraded);
  EXPECT_EQ(t[0].reason, HealthReason::kQueueErrors);
  EXPECT_EQ(health_of(1), PortHealth::kHealthy);
}

TEST_F(PortHealthDevlinkTest, AReporterWithoutARoleOrOfAnUnknownDeviceChangesNothing) {
  at(0);
  up();
  EXPECT_EQ(reporter("vnic", "error"), Transitions{});
  EXPECT_EQ(reporter("fw_fatal", "error", 0, 1, "mlx5_9"), Transitions{});
  EXPECT_EQ(health_of(), PortHealth::kHealthy);
}

class PortHealthDevlinkRolesTest : public PortHealthTest {
 protected:
  static HealthConfig config() {
    HealthConfig c;
    c.devlink_roles = {{"dummy", DevlinkRole::kFatal}, {"fw_fatal", DevlinkRole::kNone}};
    return c;
  }
  PortHealthDevlinkRolesTest() : PortHealthTest(config()) {}
};

TEST_F(PortHealthDevlinkRolesTest, TheConfiguredRolesReplaceTheDefaults) {
  at(0);
  up();
  Record r = record(EventKind::kDevlinkHealth, "mlx5_0", kGuid0);
  r.devlink = DevlinkHealthEvent{.reporter = "fw_fatal", .state = "error", .change = "error"};
  EXPECT_EQ(feed(r), Transitions{});
  r.seq = ++seq_;
  r.devlink->reporter = "dummy";
  EXPECT_EQ(feed(r).size(), 1u);
  EXPECT_EQ(health_of(), PortHealth::kFatal);
}

// A reload turns devlink health off: no recovery will ever be heard of, so what the reporters
// held goes, and the ports are judged again for config_changed; a port they did not judge is
// left alone.
TEST_F(PortHealthDevlinkTest, TurnedOffWhatTheReportersHeldIsForgotten) {
  at(0);
  up(1);
  up(2);
  up(1, 4, "mlx5_1");
  at(5);
  EXPECT_EQ(reporter("fw_fatal", "error").size(), 2u);
  at(6);
  EXPECT_EQ(reporter("fw", "error", 0, 1, "mlx5_1").size(), 1u);
  at(7);
  Transitions out;
  model_.forget_devlink(now(), out);
  ASSERT_EQ(out.size(), 3u);
  HealthTransition released =
      want(PortHealth::kHealthy, PortHealth::kFatal, HealthReason::kConfigChanged);
  released.cause_seq = 0;  // no record caused it
  EXPECT_EQ(out[0], released);
  EXPECT_EQ(out[1].port, 2u);
  EXPECT_EQ(out[1].health, PortHealth::kHealthy);
  EXPECT_EQ(out[2].device, "mlx5_1");
  EXPECT_EQ(out[2].health, PortHealth::kHealthy);
  EXPECT_EQ(out[2].reason, HealthReason::kConfigChanged);
  EXPECT_EQ(out[2].errors_in_window, 0u);
  // Nothing is left to release: a second time changes nothing.
  Transitions again;
  model_.forget_devlink(now(), again);
  EXPECT_EQ(again, Transitions{});
}

// mlx5's fw_fatal recovery unregisters the RDMA device and registers it again inside the
// recovery, before the reporter's HEALTHY notification: that notification reaches the port while
// its device is away (the daemon maps it through the closed device), and the port comes back
// healthy, not fatal for good.
TEST_F(PortHealthDevlinkTest, ARecoveryNotifiedWhileTheDeviceIsAwayEndsHealthyWhenItIsBack) {
  first_error_at("fw_fatal", 5);
  at(6);
  removed_record(EventKind::kDeviceFatal);
  removed_record(EventKind::kDeviceRemoved);
  at(7);
  reporter("fw_fatal", "recovered");
  EXPECT_EQ(health_of(), PortHealth::kGone);
  at(8);
  const Transitions back = up();
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].health, PortHealth::kHealthy);
}

// A driver reload destroys its reporters with their devlink instance, with no notification:
// what the reporter held goes with it.
TEST_F(PortHealthDevlinkTest, AReporterGoneWithItsInstanceReleasesWhatItHeld) {
  first_error_at("fw_fatal", 5);
  at(6);
  expect_one(reporter("fw_fatal", "removed"), PortHealth::kHealthy,
             HealthReason::kDevlinkReporterGone);
  EXPECT_EQ(health_of(), PortHealth::kHealthy);
}

// A second fatal within the grace period of the last recovery: the kernel refuses the recovery
// and mlx5 unloads the driver. The device's removal then is that, not a hot-unplug.
TEST_F(PortHealthDevlinkTest, ARecoveryRefusedWithinTheGracePeriodStaysFatalWhenTheDeviceGoes) {
  at(0);
  up();
  at(5);
  reporter("fw_fatal", "error");
  reporter("fw_fatal", "recovered");
  EXPECT_EQ(health_of(), PortHealth::kHealthy);
  at(10);
  const Transitions refused = reporter("fw_fatal", "recovery_refused");
  HealthTransition fatal =
      want(PortHealth::kFatal, PortHealth::kHealthy, HealthReason::kRecoveryRefused);
  fatal.link_up = true;
  EXPECT_EQ(refused, Transitions{fatal});
  at(11);
  EXPECT_EQ(removed_record(EventKind::kDeviceRemoved), Transitions{}) << "no second verdict";
  EXPECT_EQ(health_of(), PortHealth::kFatal);
  EXPECT_EQ(reason_of(), HealthReason::kRecoveryRefused);
}

// A report and its recovery both lost in an overrun come back as a recovery whose error count
// grew: those errors count against the threshold all the same.
TEST_F(PortHealthDevlinkTest, ErrorsOfAReportLostInAnOverrunStillCount) {
  at(0);
  up();
  at(1);
  EXPECT_EQ(reporter("tx", "error", 1), Transitions{});
  EXPECT_EQ(reporter("tx", "recovered", 1), Transitions{});
  recovered_errors_ = 2;  // two reports lost, seen as one recovery
  expect_one(reporter("tx", "recovered", 1), PortHealth::kDegraded, HealthReason::kQueueErrors);
}

// After a complete read of the reporters (at start, after an overrun, at each device change), a
// hold that no reporter in error confirms is released; one that is confirmed stays.
TEST_F(PortHealthDevlinkTest, AHoldThatAFreshReadDoesNotConfirmIsReleased) {
  first_error_at("fw_fatal", 5);
  at(6);
  Transitions out;
  model_.confirm_devlink({{"mlx5_0", 0, "fw_fatal", true}}, now(), out);
  EXPECT_EQ(out, Transitions{});
  EXPECT_EQ(health_of(), PortHealth::kFatal);
  // Another device's reporter, or one without a role, confirms nothing.
  model_.confirm_devlink({{"mlx5_1", 0, "fw_fatal", true}, {"mlx5_0", 0, "vnic", true}}, now(),
                         out);
  expect_one(out, PortHealth::kHealthy, HealthReason::kDevlinkRecovered);
}

// A report while the fatal reporter is still in error is refused as well (the kernel tries no
// recovery while in error; mlx5 unloads the driver): the device's removal then keeps it fatal.
TEST_F(PortHealthDevlinkTest, AReportWhileInErrorIsRefusedTooAndTheRemovalKeepsItFatal) {
  first_error_at("fw_fatal", 5);
  at(6);
  EXPECT_EQ(reporter("fw_fatal", "error_again"), Transitions{});
  at(7);
  EXPECT_EQ(removed_record(EventKind::kDeviceRemoved), Transitions{});
  EXPECT_EQ(health_of(), PortHealth::kFatal);
  EXPECT_EQ(reason_of(), HealthReason::kRecoveryRefused);
}

}  // namespace
}  // namespace rdma_eventd::daemon
