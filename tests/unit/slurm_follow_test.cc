// rdma-eventd-slurm's follow mode (slurm/follow.h) over the one daemon follower, with a fake
// clock, a fake daemon and a fake Slurm: the scontrol runs over hours of driven time, through
// outages of slurmctld and of the daemon, an admin's drain racing ours, a Comment= on the node
// and a dry run.
#include <gtest/gtest.h>

#include <map>

#include "follow.h"
#include "follower_fakes.h"
#include "scontrol.h"
#include "slurm_fakes.h"

namespace slurm_follow_test {

using namespace std::chrono_literals;
using namespace follower_fakes;
using namespace slurm_fakes;
using rdma_eventd::DaemonFollower;
using rdma_eventd::HealthReply;
using rdma_eventd_slurm::CommandResult;
using rdma_eventd_slurm::CommandRunner;
using rdma_eventd_slurm::Config;
using rdma_eventd_slurm::SlurmFollowPolicy;

const char* const kDrainFlap = "rdma-eventd: mlx5_0/1 flapping (3 downs/1h)";

struct SlurmFixture {
  explicit SlurmFixture(bool dry_run = false, unsigned splay_s = 0)
      : config(config_with(splay_s, state.path)),
        policy(config, dry_run, slurm, log_to(lines), time, 7) {
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
  // The splay is 0 but in its own tests: the schedules below are counted exactly.
  static Config config_with(unsigned splay_s, const std::string& state_directory) {
    Config c;
    c.state_directory = state_directory;
    c.node_name = "testnode";
    c.socket = "/run/rdma-eventd/events.sock";
    c.drain_splay_s = splay_s;
    return c;
  }
  // The partition: this node and nine others, `drained` of them by rdma-eventd.
  void partition_of_ten(int drained) {
    slurm.others.clear();
    for (int i = 1; i <= 9; ++i) {
      slurm.others["n" + std::to_string(i)] =
          i <= drained ? "rdma-eventd: mlx5_0/1 down" : std::string("none");
    }
  }
  StateDir state;
  Config config;
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

TEST(SlurmFollow, ASlowerPortKeptInServiceDoesNotHoldOurDrainOnceTheFlapIsOver) {
  // mlx5_0/1 flaps and drains the node; mlx5_1/1 is degraded meanwhile for a reason that does
  // not drain (rate_below_expected). Once mlx5_0/1 is healthy, our drain is over: resumed, not
  // kept under a reason naming a healthy port.
  SlurmFixture f;
  f.verdict("mlx5_0", "flapping");
  f.run(1s);
  EXPECT_EQ(f.slurm.reason, kDrainFlap);
  f.link_verdict("mlx5_1", "degraded", "rate_below_expected");
  f.run(1s);
  EXPECT_EQ(f.slurm.reason, kDrainFlap) << "the degraded port drains nothing";
  f.verdict("mlx5_0", "healthy");
  f.run(1s);
  EXPECT_EQ(f.slurm.state + "|" + f.slurm.reason, "IDLE|");
  EXPECT_EQ(f.logged("resumed testnode: every port it was drained for is healthy, and no other "
                     "port's verdict drains"),
            1);
  f.run(1h);
  EXPECT_EQ(f.slurm.updates, 2) << "the drain and the resume; nothing after";
}

TEST(SlurmFollow, AnOperatorsResumeOfAGoneAdapterStandsUntilAnotherPortGoesBad) {
  // The operator runs the node without a dead adapter: their resume is not undone at the next
  // reconcile, nor in the hour after; another port going bad drains the node again, for both.
  SlurmFixture f;
  f.verdict("mlx5_1", "gone");
  f.run(1s);
  EXPECT_EQ(f.slurm.reason, "rdma-eventd: mlx5_1/1 gone");
  f.slurm.state = "IDLE";  // scontrol update nodename=testnode state=resume, by hand
  f.slurm.reason.clear();
  f.run(1h);
  EXPECT_EQ(f.slurm.state, "IDLE");
  EXPECT_EQ(f.slurm.updates, 1) << "our drain only";
  EXPECT_EQ(f.logged("left in service: an operator resumed it while it was drained for "
                     "mlx5_1/1; it is drained again if another port goes bad"),
            1);
  f.verdict("mlx5_0", "flapping");
  f.run(1s);
  EXPECT_EQ(f.slurm.reason, "rdma-eventd: mlx5_1/1 gone, mlx5_0/1 flapping (3 downs/1h)");
  // Every port healthy again: what the operator accepted is over, and forgotten.
  f.verdict("mlx5_0", "healthy");
  f.verdict("mlx5_1", "healthy");
  f.run(1s);
  EXPECT_EQ(f.slurm.state, "IDLE");
  f.verdict("mlx5_1", "gone");
  f.run(1s);
  EXPECT_EQ(f.slurm.reason, "rdma-eventd: mlx5_1/1 gone") << "a new failure drains";
}

TEST(SlurmFollow, TheDrainLimitHoldsBackADrainUntilFewerNodesAreDrainedByUs) {
  // A partition of ten nodes, one already drained by rdma-eventd elsewhere: the default limit
  // (10%, one node) is reached, so this node's flap is held back, said once, and nothing runs.
  // Once the other node is resumed, the next reconcile drains this one.
  SlurmFixture f;
  f.partition_of_ten(1);
  f.run(1s);
  f.verdict("mlx5_0", "flapping");
  f.run(10min);
  EXPECT_EQ(f.slurm.updates, 0);
  EXPECT_EQ(f.slurm.state, "IDLE");
  const std::string held =
      "held back by the drain limit: 1 of the 10 nodes of partition debug are drained by "
      "rdma-eventd already, and drain_limit 10% allows 1; the node is drained once fewer are: " +
      std::string(kDrainFlap);
  EXPECT_EQ(f.logged(held), 1) << "said once, not at every reconcile";
  EXPECT_EQ(f.slurm.last_sinfo, (std::vector<std::string>{"--noheader", "--Node", "--format=%N|%E",
                                                          "--partition=debug"}));
  EXPECT_EQ(f.slurm.sinfos, 10) << "one per reconcile that would drain (1, 61 ... 541 s)";
  f.slurm.others["n1"] = "none";  // its follower resumed it
  f.run(60s);
  EXPECT_EQ(f.slurm.reason, kDrainFlap);
  EXPECT_EQ(f.slurm.updates, 1);
  EXPECT_EQ(f.logged("drained testnode: " + std::string(kDrainFlap)), 1);
}

TEST(SlurmFollow, DrainsOfOthersAndOurOwnUpdatesAreNotHeldBack) {
  // An admin's drains do not count, nor does a drain of ours whose ports change: only a new
  // drain of ours is limited.
  SlurmFixture f;
  f.partition_of_ten(0);
  f.slurm.others["n1"] = "admin: PSU";
  f.slurm.others["n2"] = "admin: PSU";
  f.verdict("mlx5_0", "flapping");
  f.run(1s);
  EXPECT_EQ(f.slurm.reason, kDrainFlap);
  f.partition_of_ten(9);  // the rest of the partition drained by us meanwhile
  f.verdict("mlx5_1", "fatal");
  f.run(1s);
  EXPECT_EQ(f.slurm.reason, "rdma-eventd: mlx5_1/1 fatal, mlx5_0/1 flapping (3 downs/1h)");
  EXPECT_EQ(f.slurm.updates, 2);
  EXPECT_EQ(f.slurm.sinfos, 1) << "the update of our own reason asks nothing";
}

TEST(SlurmFollow, WithTheLimitOffNoSinfoRuns) {
  SlurmFixture f;
  f.config.drain_limit = {rdma_eventd_slurm::DrainLimit::kOff, 0};
  f.partition_of_ten(9);
  f.verdict("mlx5_0", "flapping");
  f.run(1s);
  EXPECT_EQ(f.slurm.reason, kDrainFlap);
  EXPECT_EQ(f.slurm.sinfos, 0);
}

TEST(SlurmFollow, ASinfoThatFailsHoldsTheDrainAndIsRetried) {
  // Never a drain without the count: the failure is said once and retried with the backoff.
  SlurmFixture f;
  f.slurm.sinfo_up = false;
  f.verdict("mlx5_0", "flapping");
  f.run(10min);
  EXPECT_EQ(f.slurm.updates, 0);
  EXPECT_EQ(f.logged("'sinfo --noheader --Node --format='%N|%E' --partition=debug' failed (exit "
                     "1): slurm_load_partitions: Unable to contact slurm controller (connect "
                     "failure); the drain waits for it (drain_limit); retrying"),
            1);
  f.slurm.sinfo_up = true;
  f.run(60s);
  EXPECT_EQ(f.slurm.reason, kDrainFlap);
  EXPECT_EQ(f.logged("Slurm answers again"), 1);
}

TEST(SlurmFollow, ANewDrainWaitsARandomSplayThenLandsWithoutAnotherRecord) {
  // drain_splay_s 30: the flap is drained within 30 s, not at once, and the follower wakes for
  // it by itself (no record, no refresh in between).
  SlurmFixture f(/*dry_run=*/false, /*splay_s=*/30);
  f.run(1s);
  f.verdict("mlx5_0", "flapping");
  f.run(100ms);
  EXPECT_EQ(f.slurm.updates, 0);
  EXPECT_EQ(f.slurm.sinfos, 0) << "counted when the splay ends, not before";
  const auto wait = f.follower.next_deadline() - f.time.t;
  EXPECT_GT(wait, 0s);
  EXPECT_LE(wait, 30s);
  f.run(std::chrono::duration_cast<std::chrono::milliseconds>(wait) + 1ms);
  EXPECT_EQ(f.slurm.reason, kDrainFlap);
  EXPECT_EQ(f.slurm.sinfos, 1);
  EXPECT_EQ(f.slurm.updates, 1);
  // The port recovers and fails again: a new drain, a new splay.
  f.verdict("mlx5_0", "healthy");
  f.run(1s);
  EXPECT_EQ(f.slurm.state, "IDLE");
  f.verdict("mlx5_0", "flapping");
  f.run(100ms);
  EXPECT_EQ(f.slurm.updates, 2) << "the resume only";
  f.run(30s);
  EXPECT_EQ(f.slurm.updates, 3);
}

TEST(SlurmFollow, ADryRunSaysWhatTheLimitHoldsBack) {
  SlurmFixture f(/*dry_run=*/true);
  f.partition_of_ten(1);
  f.verdict("mlx5_0", "flapping");
  testing::internal::CaptureStdout();
  f.run(1h);
  EXPECT_EQ(testing::internal::GetCapturedStdout(),
            "# held back by the drain limit: 1 of the 10 nodes of partition debug are drained by "
            "rdma-eventd already, and drain_limit 10% allows 1; the node is drained once fewer "
            "are: " +
                std::string(kDrainFlap) + "\n");
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
