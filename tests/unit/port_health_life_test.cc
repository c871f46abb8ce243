// Port health through the devices' life (fatal, removed, added again, renamed), errors counted
// against a port, the host's verdict, what is forgotten, and the state kept across a restart.
#include "port_health_fixture.h"

namespace rdma_eventd::daemon {
namespace {

class DeviceLifeTest : public PortHealthTest {
 protected:
  // mlx5_0 with two ports up.
  void SetUp() override {
    at(0);
    up(1);
    up(2);
  }

  Record with_ports(Record r) {
    r.ports = {port(1, PortState::kActive), port(2, PortState::kActive)};
    return r;
  }

  Transitions port_state(uint32_t n, const std::string& device, const std::string& guid,
                         PortState state = PortState::kActive) {
    return feed(port_record(EventKind::kPortState, device, port(n, state), guid));
  }
};

TEST_F(DeviceLifeTest, AFatalDeviceIsFatalUntilItRecoversAndItsPortsAreSeenAgain) {
  at(10);
  Transitions t = feed(with_ports(record(EventKind::kDeviceFatal, "mlx5_0", kGuid0)));
  HealthTransition w = want(PortHealth::kFatal, PortHealth::kHealthy, HealthReason::kDeviceFatal);
  HealthTransition w2 = w;
  w2.port = 2;
  EXPECT_EQ(t, (Transitions{w, w2}));
  EXPECT_EQ(model_.host_verdict().worst, PortHealth::kFatal);

  at(20);
  EXPECT_TRUE(feed(record(EventKind::kDeviceRecovered, "mlx5_0", kGuid0)).empty());
  EXPECT_EQ(health_of(1), PortHealth::kFatal);  // until its port_state says how it is
  t = port_state(1, "mlx5_0", kGuid0);
  EXPECT_EQ(t, Transitions{
                   want(PortHealth::kHealthy, PortHealth::kFatal, HealthReason::kDeviceRecovered)});
  // A port that comes back down is down, and the fatal error was not a flap.
  t = port_state(2, "mlx5_0", kGuid0, PortState::kDown);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].health, PortHealth::kDown);
  EXPECT_EQ(t[0].reason, HealthReason::kLinkDown);
  EXPECT_EQ(t[0].downs_in_window, 0u);
}

TEST_F(DeviceLifeTest, ARemovedDeviceIsGoneAndTakesItsHistoryBackWhenAddedAgain) {
  // mlx5_0 port 1 flaps, then the device is unbound and comes back as mlx5_2 (a driver reset
  // re-registers it with another index, same node GUID): still flapping, not a fresh start.
  for (int64_t s : {10, 20, 30}) {
    at(s);
    down();
    at(s + 1);
    up();
  }
  at(40);
  Transitions t = feed(with_ports(record(EventKind::kDeviceRemoved, "mlx5_0", kGuid0)));
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].health, PortHealth::kGone);
  EXPECT_EQ(t[0].previous, PortHealth::kFlapping);
  EXPECT_EQ(t[0].reason, HealthReason::kDeviceRemoved);
  EXPECT_EQ(t[1].previous, PortHealth::kHealthy);
  EXPECT_EQ(model_.next_deadline(), mono_at(40 + 3600));  // when gone ports are forgotten

  at(50);
  EXPECT_TRUE(feed(record(EventKind::kDeviceAdded, "mlx5_2", kGuid0)).empty());
  t = port_state(1, "mlx5_2", kGuid0);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].device, "mlx5_2");
  EXPECT_EQ(t[0].health, PortHealth::kFlapping);
  EXPECT_EQ(t[0].previous, PortHealth::kGone);
  EXPECT_EQ(t[0].downs_in_window, 3u);
  t = port_state(2, "mlx5_2", kGuid0);
  EXPECT_EQ(t.at(0).reason, HealthReason::kDeviceAdded);
  EXPECT_FALSE(model_.verdict("mlx5_0", 1, now()).has_value());
  // The quiet period counts from the port's return.
  EXPECT_EQ(model_.next_deadline(), mono_at(50 + 600));
}

TEST_F(DeviceLifeTest, ANewDeviceUnderAKnownNameStartsFresh) {
  down(1);
  feed(with_ports(record(EventKind::kDeviceRemoved, "mlx5_0", kGuid0)));
  feed(record(EventKind::kDeviceAdded, "mlx5_0", kGuid1));  // another adapter in the slot
  Transitions t = port_state(1, "mlx5_0", kGuid1);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].previous, std::nullopt);
  EXPECT_EQ(t[0].reason, HealthReason::kFirstSeen);
  EXPECT_EQ(t[0].node_guid, kGuid1);
  EXPECT_EQ(t[0].downs_in_window, 0u);
  EXPECT_FALSE(model_.verdict("mlx5_0", 2, now()).has_value());
}

TEST_F(DeviceLifeTest, GonePortsAreForgottenAfterTheBoundWithNoRecord) {
  at(100);
  feed(with_ports(record(EventKind::kDeviceRemoved, "mlx5_0", kGuid0)));
  at(100 + 3599);
  advance();
  EXPECT_EQ(model_.verdicts(now()).size(), 2u);
  at(100 + 3600);
  EXPECT_TRUE(advance().empty());
  EXPECT_TRUE(model_.verdicts(now()).empty());
  EXPECT_EQ(model_.host_verdict(), HostVerdict{});
  EXPECT_FALSE(model_.next_deadline().has_value());
}

TEST_F(PortHealthTest, AtMostSoManyGonePortsAreKeptTheOldestGoFirst) {
  const size_t devices = PortHealthModel::kMaxGonePorts + 10;
  for (size_t i = 0; i < devices; ++i) {
    const std::string name = "dev" + std::to_string(i);
    mono_ += kSecond;
    up(1, 4, name);
    Record r = record(EventKind::kDeviceRemoved, name, "");
    r.ports = {port(1, PortState::kActive)};
    feed(r);
  }
  EXPECT_EQ(model_.verdicts(now()).size(), PortHealthModel::kMaxGonePorts);
  EXPECT_FALSE(model_.verdict("dev9", 1, now()).has_value());
  EXPECT_TRUE(model_.verdict("dev10", 1, now()).has_value());
}

TEST_F(DeviceLifeTest, ARenameCarriesThePortsStateToTheNewName) {
  at(5);
  down(1);
  const PortVerdict before = *model_.verdict("mlx5_0", 1, now());
  Record r = record(EventKind::kDeviceRenamed, "ibp65s0", kGuid0);
  r.old_name = "mlx5_0";
  EXPECT_TRUE(feed(r).empty());
  EXPECT_FALSE(model_.verdict("mlx5_0", 1, now()).has_value());
  PortVerdict after = *model_.verdict("ibp65s0", 1, now());
  EXPECT_EQ(after.device, "ibp65s0");
  after.device = "mlx5_0";
  EXPECT_EQ(after, before);
  at(6);
  EXPECT_EQ(up(1, 4, "ibp65s0").at(0).reason, HealthReason::kLinkUp);
}

TEST_F(PortHealthTest, TheHostVerdictIsTheWorstOfItsPortsInTheDocumentedOrder) {
  EXPECT_LT(PortHealth::kHealthy, PortHealth::kDegraded);
  EXPECT_LT(PortHealth::kDegraded, PortHealth::kDown);
  EXPECT_LT(PortHealth::kDown, PortHealth::kFlapping);
  EXPECT_LT(PortHealth::kFlapping, PortHealth::kGone);
  EXPECT_LT(PortHealth::kGone, PortHealth::kFatal);
  EXPECT_EQ(model_.host_verdict().worst, std::nullopt);  // no port: nothing to say
  up(1, 4, "a");
  up(1, 4, "b");
  up(1, 1, "b");  // degraded
  HostVerdict host = model_.host_verdict();
  EXPECT_EQ(host.worst, PortHealth::kDegraded);
  EXPECT_EQ(host.counted[0] + host.counted[1], 2u);
  down(1, "c");  // never up: not counted
  EXPECT_EQ(model_.host_verdict().worst, PortHealth::kDegraded);
  up(1, 4, "c");
  down(1, "c");
  EXPECT_EQ(model_.host_verdict().worst, PortHealth::kDown);
}

TEST_F(PortHealthTest, ErrorsCountedAgainstAPortHaveTheirOwnReasonAndQuietPeriod) {
  at(0);
  up();
  Transitions t;
  EXPECT_FALSE(model_.count_errors("mlx5_9", 1, ErrorSource::kApplication, 1, now(), t));
  EXPECT_TRUE(model_.count_errors("mlx5_0", 1, ErrorSource::kApplication, 9, now(), t));
  EXPECT_TRUE(t.empty());  // 9 of 10 within a minute
  at(30);
  EXPECT_TRUE(model_.count_errors("mlx5_0", 1, ErrorSource::kApplication, 1, now(), t));
  HealthTransition w =
      want(PortHealth::kDegraded, PortHealth::kHealthy, HealthReason::kApplicationErrors);
  w.cause_seq = 0;
  w.errors_in_window = 10;
  EXPECT_EQ(t, Transitions{w});
  EXPECT_EQ(model_.next_deadline(), mono_at(30 + 600));
  at(630);
  HealthTransition back =
      want(PortHealth::kHealthy, PortHealth::kDegraded, HealthReason::kQuietPeriodElapsed);
  back.cause_seq = 0;
  EXPECT_EQ(advance(), Transitions{back});
  // One vendor module error is enough for the module source.
  t.clear();
  model_.count_errors("mlx5_0", 1, ErrorSource::kModule, 1, now(), t);
  EXPECT_EQ(t.at(0).reason, HealthReason::kModuleErrors);
}

class AppReportTest : public PortHealthTest {
 protected:
  explicit AppReportTest(HealthConfig config = HealthConfig{})
      : PortHealthTest(std::move(config)) {}

  // An application's report (app_report) of a QP of `device` at `port` (0: it named none).
  Record app_report(uint32_t port, const std::string& device = "mlx5_0") {
    Record r = record(EventKind::kAppReport, device, kGuid0);
    r.port = port;
    r.event_type = 1;  // IBV_EVENT_QP_FATAL
    r.object = "qp";
    r.object_id = 4660;
    return r;
  }
};

TEST_F(AppReportTest, ApplicationReportsAreApplicationErrorsOfTheReportedPort) {
  at(0);
  up(1);
  up(2);
  for (int i = 0; i < 9; ++i)
    EXPECT_TRUE(feed(app_report(1)).empty()) << "report " << i + 1;
  at(59);
  const Transitions t = feed(app_report(1));  // the 10th within a minute
  HealthTransition w =
      want(PortHealth::kDegraded, PortHealth::kHealthy, HealthReason::kApplicationErrors);
  w.errors_in_window = 10;
  EXPECT_EQ(t, Transitions{w});  // cause_seq: the 10th report's seq
  EXPECT_EQ(health_of(2), PortHealth::kHealthy);
  // A report of a port or device the model does not know counts for nothing.
  EXPECT_TRUE(feed(app_report(3)).empty());
  EXPECT_TRUE(feed(app_report(1, "mlx5_9")).empty());
}

TEST_F(AppReportTest, AReportThatNamesNoPortCountsOnlyOnADeviceWithOnePort) {
  at(0);
  up(1);
  up(2);
  up(1, 4, "mlx5_1");
  for (int i = 0; i < 10; ++i) {
    EXPECT_TRUE(feed(app_report(0)).empty());  // two ports: which one is not known
  }
  EXPECT_EQ(health_of(1), PortHealth::kHealthy);
  EXPECT_EQ(health_of(2), PortHealth::kHealthy);
  Transitions t;
  for (int i = 0; i < 10; ++i) {
    t = feed(app_report(0, "mlx5_1"));
  }
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].device, "mlx5_1");
  EXPECT_EQ(t[0].port, 1u);
  EXPECT_EQ(t[0].reason, HealthReason::kApplicationErrors);
}

class UncountedReportsTest : public AppReportTest {
 protected:
  static HealthConfig uncounted() {
    HealthConfig c;
    c.errors[static_cast<size_t>(ErrorSource::kApplication)].counted = false;
    return c;
  }
  UncountedReportsTest() : AppReportTest(uncounted()) {}
};

TEST_F(UncountedReportsTest, ReportsThatDoNotCountLeaveThePortHealthy) {
  at(0);
  up(1);
  for (int i = 0; i < 20; ++i)
    EXPECT_TRUE(feed(app_report(1)).empty());
  EXPECT_EQ(health_of(1), PortHealth::kHealthy);
}

// module_error records (DEVX vendor events) are the module source: one makes its port degraded.
TEST_F(PortHealthTest, AModuleErrorIsAModuleErrorOfItsPort) {
  at(0);
  up(1);
  up(2);
  Record unplugged = record(EventKind::kModuleUnplugged, "mlx5_0", kGuid0);
  unplugged.port = 2;
  EXPECT_TRUE(feed(unplugged).empty());
  Record unmapped = record(EventKind::kModuleError, "mlx5_0", kGuid0);  // port 0: not mapped
  EXPECT_TRUE(feed(unmapped).empty());
  EXPECT_EQ(health_of(1), PortHealth::kHealthy);
  Record error = unmapped;
  error.port = 2;
  const Transitions t = feed(error);
  HealthTransition w =
      want(PortHealth::kDegraded, PortHealth::kHealthy, HealthReason::kModuleErrors);
  w.port = 2;
  w.errors_in_window = 1;
  EXPECT_EQ(t, Transitions{w});
  EXPECT_EQ(health_of(1), PortHealth::kHealthy);
}

TEST_F(PortHealthTest, AnIdleModelNeverAsksForATimer) {
  up(1);
  down(2);
  up(1, 4, "mlx5_1");
  EXPECT_FALSE(model_.next_deadline().has_value());
}

TEST_F(PortHealthTest, ARestartKeepsTheVerdictsAndDoesNotMakeABadPortLookHealthy) {
  // Port 1 flaps and is up; port 2 is up. The state is kept, the daemon restarts at 100 s.
  at(0);
  up(1);
  up(2);
  for (int64_t s : {10, 20, 30}) {
    at(s);
    down(1);
    at(s + 1);
    up(1);
  }
  const std::vector<DeviceHealthState> kept = model_.export_state();
  const std::vector<PortVerdict> verdicts = model_.verdicts(now());
  PortHealthModel restarted{HealthConfig{}};
  at(100);
  restarted.restore(kept, now());
  EXPECT_EQ(restarted.verdicts(instant_at(31)), verdicts);
  // Nobody watched the link during the restart: the quiet period starts again now.
  EXPECT_EQ(restarted.next_deadline(), mono_at(100 + 600));
  // Port 2 went down while the daemon was not running: down, and counted as a down.
  Transitions t;
  restarted.observe_port("mlx5_0", kGuid0, port(2, PortState::kDown), now(), t);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].health, PortHealth::kDown);
  EXPECT_EQ(t[0].previous, PortHealth::kHealthy);
  EXPECT_EQ(t[0].downs_in_window, 1u);
}

TEST_F(PortHealthTest, AfterARestartDevicesNoLongerPresentAreMissing) {
  up(1, 4, "mlx5_0");
  up(1, 4, "mlx5_1");
  PortHealthModel restarted{HealthConfig{}};
  restarted.restore(model_.export_state(), now());
  Transitions t;
  restarted.mark_missing({"mlx5_0"}, now(), t);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].device, "mlx5_1");
  EXPECT_EQ(t[0].health, PortHealth::kGone);
  EXPECT_EQ(t[0].reason, HealthReason::kDeviceMissing);
}

}  // namespace
}  // namespace rdma_eventd::daemon
