// rdma-eventd-slurm's follow mode (slurm/follow.h) over the one daemon follower, with a fake
// clock, a fake daemon and a fake Slurm: the scontrol runs over hours of driven time, through
// outages of slurmctld and of the daemon, an admin's drain racing ours, a Comment= on the node
// and a dry run.
#include <gtest/gtest.h>

#include "follow.h"
#include "follower_fakes.h"
#include "scontrol.h"

namespace slurm_follow_test {

using namespace std::chrono_literals;
using namespace follower_fakes;
using rdma_eventd::DaemonFollower;
using rdma_eventd::HealthReply;
using rdma_eventd_slurm::CommandResult;
using rdma_eventd_slurm::CommandRunner;
using rdma_eventd_slurm::Config;
using rdma_eventd_slurm::SlurmFollowPolicy;

const char* const kDrainFlap = "rdma-eventd: mlx5_0/1 flapping (3 downs/1h)";

// slurmctld as scontrol sees it: one node, up or away; counts the runs.
class FakeSlurm final : public CommandRunner {
 public:
  CommandResult run(const std::string&, const std::vector<std::string>& args,
                    std::chrono::milliseconds) override {
    CommandResult r;
    r.kind = CommandResult::kExited;
    if (!up) {
      r.exit_code = 1;
      r.output = "slurm_load_node error: Unable to contact slurm controller (connect failure)\n";
      ++failed_runs;
      return r;
    }
    r.exit_code = 0;
    if (args.at(0) == "show") {
      ++shows;
      r.output = "NodeName=testnode Arch=x86_64 State=" + state +
                 (reason.empty() ? "" : " Reason=" + reason + " [root@2026-11-28T10:26:43]") +
                 comment + "\n";
      // What an admin does between two of our calls.
      if (after_show) std::exchange(after_show, nullptr)(*this);
      return r;
    }
    ++updates;
    if (args.at(2) == "state=resume") {
      state = "IDLE";
      reason.clear();
    } else {
      drain(args.at(3).substr(7));
    }
    return r;
  }
  // What `scontrol update state=drain reason=WHY` does, by the test's hand.
  void drain(std::string why) {
    state = "IDLE+DRAIN";
    reason = std::move(why);
  }
  bool up = true;
  std::string state = "IDLE";
  std::string reason;
  std::string comment;
  std::function<void(FakeSlurm&)> after_show;
  int shows = 0;
  int updates = 0;
  int failed_runs = 0;
};

HealthReply::Port port(const char* device, const char* health, bool counted = true) {
  HealthReply::Port p;
  p.device = device;
  p.port = 1;
  p.health = health;
  p.reason = "x";
  p.counted = counted;
  if (p.health == "flapping") {
    p.downs_in_window = 3;
    p.window_s = 3600;
  }
  return p;
}

struct SlurmFixture {
  explicit SlurmFixture(bool dry_run = false) : policy(config, dry_run, slurm, log_to(lines)) {
    daemon.health.enabled = true;
    daemon.health.ports = {port("mlx5_0", "healthy"), port("mlx5_1", "healthy")};
  }
  static SlurmFollowPolicy::Log log_to(std::vector<std::string>& lines) {
    return [&lines](const std::string& line) { lines.push_back(line); };
  }
  // A verdict changes in the daemon, which publishes a port_health record.
  void verdict(const char* device, const char* health, bool counted = true) {
    for (HealthReply::Port& p : daemon.health.ports) {
      if (p.device == device) p = port(device, health, counted);
    }
    daemon.send_lost();  // any line that wakes the follower does
  }
  // The port's error counters make its link bad (or clean again, with reason
  // "clean_period_elapsed"): a change of verdict, and a port_health record.
  void link_verdict(const char* device, const char* health, const char* reason) {
    for (HealthReply::Port& p : daemon.health.ports) {
      if (p.device != device) continue;
      p = port(device, health);
      p.reason = reason;
    }
    daemon.send_lost();
  }
  // slurmctld goes away, then mlx5_0/1 starts flapping.
  void slurmctld_away_during_a_flap() {
    slurm.up = false;
    verdict("mlx5_0", "flapping");
  }
  int logged(const std::string& text) const {
    return static_cast<int>(std::count(lines.begin(), lines.end(), text));
  }
  Config config = [] {
    Config c;
    c.node_name = "testnode";
    c.socket = "/run/rdma-eventd/events.sock";
    return c;
  }();
  FakeTime time;
  FakeDaemon daemon;
  FakeConnector connector{daemon};
  FakeSlurm slurm;
  std::vector<std::string> lines;
  SlurmFollowPolicy policy;
  // The schedules below are counted exactly: without the jitter (its own test is
  // DaemonFollower.WithJitter...).
  static rdma_eventd::FollowerOptions exact(rdma_eventd::FollowerOptions o) {
    o.jitter = 0;
    return o;
  }
  DaemonFollower follower{time, connector, policy,
                          exact(rdma_eventd_slurm::follower_options(config))};
  void run(std::chrono::milliseconds span) { drive(follower, time, daemon, span); }
};

TEST(SlurmFollow, AQuietHourIsOneShowAMinuteAndNoUpdate) {
  SlurmFixture f;
  f.run(1h);
  EXPECT_EQ(f.slurm.shows, 60);
  EXPECT_EQ(f.slurm.updates, 0);
  EXPECT_EQ(f.follower.counts().wakeups, 60u);
  EXPECT_EQ(f.logged("healthy, and no drain of ours to resume"), 1) << "said once, not 60 times";
}

TEST(SlurmFollow, SlurmctldAwayForAnHourWhileAPortFlapsThenBack) {
  // A controller maintenance window: the follower retries with backoff (0.5 s doubling to the
  // 60 s reconcile interval), says so once, and drains once slurmctld is back.
  SlurmFixture f;
  f.run(10s);
  f.slurmctld_away_during_a_flap();
  f.run(1h);
  // At 10, 10.5, 11.5, 13.5, 17.5, 25.5, 41.5, 73.5 s, then every 60 s until 3610 s.
  EXPECT_EQ(f.slurm.failed_runs, 8 + 58);
  EXPECT_LE(f.follower.counts().wakeups, 1u + 8 + 58);
  EXPECT_EQ(f.logged("'scontrol show node -o testnode' failed (exit 1): slurm_load_node error: "
                     "Unable to contact slurm controller (connect failure); retrying"),
            1);
  f.slurm.up = true;
  f.run(60s);
  EXPECT_EQ(f.slurm.reason, kDrainFlap);
  EXPECT_EQ(f.slurm.updates, 1);
  EXPECT_EQ(f.logged("Slurm answers again"), 1);
}

TEST(SlurmFollow, AFlapThatEndsWhileSlurmctldIsAwayDrainsNothing) {
  SlurmFixture f;
  f.run(10s);
  f.slurmctld_away_during_a_flap();
  f.run(10min);
  f.verdict("mlx5_0", "healthy");
  f.run(10min);
  f.slurm.up = true;
  f.run(2min);
  EXPECT_EQ(f.slurm.updates, 0);
  EXPECT_EQ(f.slurm.state, "IDLE");
}

TEST(SlurmFollow, AnAdapterRemovedAndForgottenKeepsTheNodeDrained) {
  SlurmFixture f;
  f.run(1s);
  f.verdict("mlx5_0", "gone");
  f.run(1s);
  ASSERT_EQ(f.slurm.reason, "rdma-eventd: mlx5_0/1 gone");
  // forget_gone_after_s later the daemon no longer lists the port at all.
  f.daemon.health.ports.erase(f.daemon.health.ports.begin());
  f.daemon.send_lost();
  f.run(1h);
  EXPECT_EQ(f.slurm.state, "IDLE+DRAIN");
  EXPECT_EQ(f.slurm.reason, "rdma-eventd: mlx5_0/1 missing");
  EXPECT_EQ(f.slurm.updates, 2) << "drained, then the reason rewritten once";
  // The adapter back and healthy: resumed.
  f.daemon.health.ports.insert(f.daemon.health.ports.begin(), port("mlx5_0", "healthy"));
  f.daemon.send_lost();
  f.run(1s);
  EXPECT_EQ(f.slurm.state, "IDLE");
}

TEST(SlurmFollow, ARebootWithADeadPortKeepsTheNodeDrained) {
  // Our drain from before the reboot; the daemon's state is gone and the port reads never up.
  SlurmFixture f;
  f.slurm.drain("rdma-eventd: mlx5_0/1 down");
  f.daemon.health.ports[0] = port("mlx5_0", "down", /*counted=*/false);
  f.run(1h);
  EXPECT_EQ(f.slurm.state + " " + f.slurm.reason, "IDLE+DRAIN rdma-eventd: mlx5_0/1 down");
  EXPECT_EQ(f.slurm.updates, 0);
}

TEST(SlurmFollow, AnAdminsDrainBetweenOurReadAndOurUpdateIsKept) {
  SlurmFixture f;
  f.run(1s);
  f.slurm.after_show = [](FakeSlurm& s) { s.drain("admin: cable swap"); };
  f.verdict("mlx5_0", "flapping");
  f.run(1h);
  EXPECT_EQ(f.slurm.reason, "admin: cable swap");
  EXPECT_EQ(f.slurm.updates, 0);
  // The same race on the way back: ours is about to be resumed when the admin drains.
  SlurmFixture g;
  g.slurm.drain(kDrainFlap);
  g.slurm.after_show = [](FakeSlurm& s) { s.reason = "admin: keep it out"; };
  g.run(1s);
  EXPECT_EQ(g.slurm.state + " " + g.slurm.reason, "IDLE+DRAIN admin: keep it out");
  EXPECT_EQ(g.slurm.updates, 0);
}

TEST(SlurmFollow, ACommentOnTheNodeDoesNotRewriteTheReasonAtEveryReconcile) {
  SlurmFixture f;
  f.slurm.comment = " Comment=moved to rack 7 Extra=x";
  f.verdict("mlx5_0", "flapping");
  f.run(1h);
  EXPECT_EQ(f.slurm.reason, kDrainFlap);
  EXPECT_EQ(f.slurm.updates, 1);
}

TEST(SlurmFollow, ADryRunPrintsACommandOnceNotAtEveryReconcile) {
  SlurmFixture f(/*dry_run=*/true);
  f.verdict("mlx5_0", "flapping");
  testing::internal::CaptureStdout();
  f.run(1h);
  EXPECT_EQ(
      testing::internal::GetCapturedStdout(),
      "scontrol update nodename=testnode state=drain reason='" + std::string(kDrainFlap) + "'\n");
  EXPECT_EQ(f.slurm.updates, 0);
}

TEST(SlurmFollow, BitErrorsDrainWhenDrainOnNamesThemAndTheCleanLinkResumes) {
  SlurmFixture f;
  f.config.drain_on.insert("bit_errors");
  f.run(1s);
  f.link_verdict("mlx5_0", "degraded", "bit_errors");
  f.run(1h);
  EXPECT_EQ(f.slurm.state + " " + f.slurm.reason,
            "IDLE+DRAIN rdma-eventd: mlx5_0/1 degraded (bit_errors)");
  EXPECT_EQ(f.slurm.updates, 1);
  f.link_verdict("mlx5_0", "healthy", "clean_period_elapsed");
  f.run(1s);
  EXPECT_EQ(f.slurm.state + " " + f.slurm.reason, "IDLE ");
  EXPECT_EQ(f.slurm.updates, 2);
}

TEST(SlurmFollow, BitErrorsDrainNothingByDefault) {
  SlurmFixture f;
  f.run(1s);
  f.link_verdict("mlx5_0", "degraded", "bit_errors");
  f.run(1h);
  EXPECT_EQ(f.slurm.state, "IDLE");
  EXPECT_EQ(f.slurm.updates, 0);
  EXPECT_EQ(f.logged("no port has a verdict that drains: the node is left as it is"), 1);
}

TEST(SlurmFollow, AnUnknownNodeIsRetriedWithBackoffNotInALoop) {
  SlurmFixture f;
  f.config.node_name = "othernode";
  f.run(1h);
  EXPECT_EQ(f.slurm.shows, 8 + 58);
  EXPECT_EQ(f.slurm.updates, 0);
}

TEST(SlurmFollow, RetriesWaitAtMostTheReconcileIntervalAndNeverOverAMinute) {
  // A drain must land within a minute of slurmctld's return, whatever the interval.
  Config c;
  c.reconcile_interval_s = 86400;
  EXPECT_EQ(rdma_eventd_slurm::follower_options(c).max_backoff, 60s);
  EXPECT_EQ(rdma_eventd_slurm::follower_options(c).refresh_interval, 86400s);
  c.reconcile_interval_s = 2;
  EXPECT_EQ(rdma_eventd_slurm::follower_options(c).max_backoff, 2s);
  EXPECT_EQ(rdma_eventd_slurm::follower_options(c).initial_backoff, 500ms);
  EXPECT_EQ(rdma_eventd_slurm::follower_options(c).jitter, 0.5) << "a cluster's followers spread";
}

}  // namespace slurm_follow_test
