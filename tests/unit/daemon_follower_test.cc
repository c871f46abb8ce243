// DaemonFollower (lib/internal/client/follower.h) driven by a fake clock and a fake daemon through
// hours of quiet, outages of the daemon and of what the policy acts on, restarts and storms: how
// often it wakes and acts is counted, since a follower that spins burns a core on every node.
#include <gtest/gtest.h>

#include "follower_fakes.h"

namespace daemon_follower_test {

using namespace std::chrono_literals;
using namespace follower_fakes;
using rdma_eventd::DaemonFollower;
using rdma_eventd::FollowerEvent;
using rdma_eventd::FollowerOptions;
using rdma_eventd::FollowerPolicy;
using rdma_eventd::Message;

// Acts by counting; fails while `failing` (as an unreachable scontrol would).
struct CountingPolicy final : FollowerPolicy {
  Outcome act(const std::vector<Message>* replies, std::string* failure) override {
    ++acts;
    if (!replies) ++acts_without_daemon;
    if (stop) return Outcome::kStop;
    if (failing) {
      *failure = "scontrol: Unable to contact slurm controller";
      return Outcome::kRetry;
    }
    return Outcome::kDone;
  }
  void on_event(const FollowerEvent& e) override { events.push_back(e); }
  std::chrono::milliseconds act_again_in() const override { return again_in; }
  int told(FollowerEvent::Kind kind) const {
    return static_cast<int>(
        std::count_if(events.begin(), events.end(), [&](const auto& e) { return e.kind == kind; }));
  }
  bool failing = false;
  bool stop = false;
  std::chrono::milliseconds again_in{0};
  int acts = 0;
  int acts_without_daemon = 0;
  std::vector<FollowerEvent> events;
};

FollowerOptions slurm_like_options() {
  FollowerOptions o;
  o.subscription.events.push_back(rdma_eventd::EventKind::kPortHealth);
  o.queries = {rdma_eventd::Op::kHealth};
  o.initial_backoff = 500ms;
  o.max_backoff = 60s;
  o.refresh_interval = 60s;
  return o;
}

struct Fixture {
  explicit Fixture(FollowerOptions options = slurm_like_options())
      : follower(time, connector, policy, std::move(options)) {}
  FakeTime time;
  FakeDaemon daemon;
  FakeConnector connector{daemon};
  CountingPolicy policy;
  DaemonFollower follower;
  void run(std::chrono::milliseconds span) { drive(follower, time, daemon, span); }
};

TEST(DaemonFollower, AQuietHourIsOneActPerRefreshAndNothingElse) {
  // Given a daemon with nothing to say, the follower acts at start and once per refresh
  // interval: 60 wakeups in an hour, each an act with the daemon's replies.
  Fixture f;
  f.run(1h);
  EXPECT_EQ(f.follower.counts().wakeups, 60u);
  EXPECT_EQ(f.policy.acts, 60);
  EXPECT_EQ(f.policy.acts_without_daemon, 0);
  EXPECT_EQ(f.daemon.connects, 1);
  EXPECT_EQ(f.daemon.queries, 60);
  EXPECT_EQ(f.follower.next_deadline(), f.time.t + 0s) << "the next refresh is due now";
}

TEST(DaemonFollower, WithoutRefreshAQuietHourWakesOnce) {
  FollowerOptions o = slurm_like_options();
  o.refresh_interval = 0ms;
  Fixture f(o);
  f.run(1h);
  EXPECT_EQ(f.follower.counts().wakeups, 1u);
  EXPECT_EQ(f.policy.acts, 1);
  EXPECT_EQ(f.follower.next_deadline(), rdma_eventd::SteadyTimePoint::max());
}

TEST(DaemonFollower, AnHourWithThePolicyFailingBacksOffInsteadOfSpinning) {
  // Given Slurm away for an hour, the follower retries after 0.5, 1, 2, ... 32, then every 60 s:
  // 66 acts, not a million; the failure is told once, its end once.
  Fixture f;
  f.policy.failing = true;
  f.run(1h);
  // At 0, 0.5, 1.5, 3.5, 7.5, 15.5, 31.5, 63.5 s, then every 60 s: 123.5 ... 3543.5 s.
  EXPECT_EQ(f.policy.acts, 8 + 58);
  EXPECT_EQ(f.follower.counts().wakeups, 66u);
  EXPECT_EQ(f.follower.counts().act_failures, 66u);
  EXPECT_EQ(f.policy.told(FollowerEvent::kActFailing), 1);
  EXPECT_GT(f.follower.next_deadline(), f.time.t - 60s);
  f.policy.failing = false;
  f.run(60s);
  EXPECT_EQ(f.policy.told(FollowerEvent::kActRecovered), 1);
  const int acts = f.policy.acts;
  f.run(1h);  // back to one act a minute
  EXPECT_EQ(f.policy.acts - acts, 60);
}

TEST(DaemonFollower, AnHourWithoutTheDaemonIsToldOnceAndActedOnOncePerRefresh) {
  // Given a daemon that is away from the start, the follower tells it once, acts on its absence
  // (no replies) at once and at every refresh, and tries to connect with backoff.
  Fixture f;
  f.daemon.up = false;
  f.run(1h);
  EXPECT_EQ(f.policy.told(FollowerEvent::kDaemonAway), 1);
  EXPECT_EQ(f.policy.acts, 60);
  EXPECT_EQ(f.policy.acts_without_daemon, 60);
  // Connects at 0, 0.5, 1.5, ... 31.5, 63.5 s, then every 60 s (66 tries); acts at every
  // minute: 125 wakeups, the two at 0 s being one.
  EXPECT_EQ(f.follower.counts().connect_failures, 66u);
  EXPECT_EQ(f.follower.counts().wakeups, 125u);
  f.daemon.up = true;
  f.run(60s);  // the refresh at 3600 s acts without it; the try at 3603.5 s connects
  EXPECT_TRUE(f.follower.connected());
  EXPECT_EQ(f.policy.told(FollowerEvent::kConnected), 1);
  EXPECT_EQ(f.policy.acts_without_daemon, 61);
  EXPECT_EQ(f.daemon.queries, 1);
}

TEST(DaemonFollower, ADaemonRestartIsOneReconnectionAndOneAct) {
  Fixture f;
  f.run(10s);
  ASSERT_EQ(f.policy.acts, 1);
  f.daemon.restart("stream-2");
  f.run(10s);
  EXPECT_EQ(f.policy.told(FollowerEvent::kConnectionLost), 1);
  EXPECT_EQ(f.daemon.connects, 2);
  EXPECT_EQ(f.policy.acts, 2);
  EXPECT_EQ(f.policy.acts_without_daemon, 0) << "a restart is not an outage";
  ASSERT_EQ(f.policy.told(FollowerEvent::kConnected), 2);
  EXPECT_TRUE(f.policy.events.back().restarted);
  EXPECT_EQ(f.policy.events.back().text, "stream-2");
}

TEST(DaemonFollower, AStormOfLinesIsOneAct) {
  Fixture f;
  f.run(1s);
  for (int i = 0; i < 100; ++i)
    f.daemon.send_lost();
  f.run(1s);
  EXPECT_EQ(f.policy.acts, 2);
  EXPECT_EQ(f.daemon.queries, 2);
}

TEST(DaemonFollower, ALineWhileThePolicyFailsWaitsForTheBackoff) {
  // A record that arrives during a Slurm outage does not cut the backoff short.
  Fixture f;
  f.policy.failing = true;
  f.run(40s);  // acts at 0, 0.5, 1.5, 3.5, 7.5, 15.5, 31.5; the next at 63.5 s
  ASSERT_EQ(f.policy.acts, 7);
  f.daemon.send_lost();
  f.run(20s);
  EXPECT_EQ(f.policy.acts, 7);
  EXPECT_EQ(f.follower.counts().wakeups, 8u) << "one wakeup to read the line";
  f.run(5s);
  EXPECT_EQ(f.policy.acts, 8);
}

TEST(DaemonFollower, ARefusedSubscriptionBacksOff) {
  Fixture f;
  f.daemon.refuse_subscription = true;
  f.run(1h);
  EXPECT_EQ(f.policy.told(FollowerEvent::kDaemonAway), 1);
  EXPECT_EQ(f.follower.counts().connect_failures, 66u);
  EXPECT_EQ(f.follower.counts().wakeups, 125u);
}

TEST(DaemonFollower, ARateLimitedQueryIsRetriedOnTheSameConnection) {
  Fixture f;
  f.daemon.rate_limit_queries = true;
  f.run(2s);  // asks at 0, 0.5, 1.5 s
  EXPECT_EQ(f.daemon.queries, 3);
  EXPECT_EQ(f.policy.acts, 0) << "the policy never saw an incomplete set of replies";
  EXPECT_EQ(f.policy.told(FollowerEvent::kActFailing), 1);
  f.daemon.rate_limit_queries = false;
  f.run(3s);
  EXPECT_EQ(f.daemon.connects, 1);
  EXPECT_EQ(f.policy.acts, 1);
}

TEST(DaemonFollower, MinActIntervalSpacesActsUnderATrickle) {
  FollowerOptions o = slurm_like_options();
  o.refresh_interval = 0ms;
  o.min_act_interval = 100ms;
  Fixture f(o);
  for (int i = 0; i < 100; ++i) {  // a line every 10 ms for a second
    f.daemon.send_lost();
    f.run(10ms);
  }
  EXPECT_EQ(f.policy.acts, 10) << "at 0, 0.1, ... 0.9 s";
}

TEST(DaemonFollower, APolicyThatAsksToActAgainSoonIsActedOnThenAndOnlyThen) {
  // A drain waiting out its splay: the policy asks for an act 7 s after each of its acts. Then
  // the follower acts at 0, 7, 14 ... s, exactly, and when it stops asking, at the refresh.
  Fixture f;
  f.policy.again_in = 7s;
  f.follower.wake();
  EXPECT_EQ(f.follower.next_deadline(), f.time.t + 7s);
  f.run(20s);
  EXPECT_EQ(f.policy.acts, 3) << "at 0, 7 and 14 s";
  f.policy.again_in = 0s;
  f.run(7s);  // the act at 21 s asks nothing more
  EXPECT_EQ(f.policy.acts, 4);
  EXPECT_EQ(f.follower.next_deadline(), f.time.t - 6s + 60s) << "the refresh, 60 s after it";
  f.run(1h);
  EXPECT_EQ(f.policy.acts, 4 + 60);
}

TEST(DaemonFollower, APolicyThatStopsEndsTheFollowing) {
  // A textfile that cannot be written: the follower stops waking, and run_follower returns.
  Fixture f;
  f.policy.stop = true;
  f.run(1h);
  EXPECT_TRUE(f.follower.stopped());
  EXPECT_EQ(f.policy.acts, 1);
  EXPECT_FALSE(f.follower.connected());
  EXPECT_EQ(f.follower.next_deadline(), rdma_eventd::SteadyTimePoint::max());
  EXPECT_EQ(rdma_eventd::run_follower(f.follower, f.time, -1), rdma_eventd::kFollowerStopped);
}

// The waits of a follower whose policy keeps failing, from one act to the next, in seconds.
std::vector<double> retry_waits(FollowerOptions o, int n) {
  Fixture f(std::move(o));
  f.policy.failing = true;
  f.follower.wake();  // the act at the start fails
  std::vector<double> waits;
  for (int i = 0; i < n; ++i) {
    const auto next = f.follower.next_deadline();
    waits.push_back(std::chrono::duration<double>(next - f.time.t).count());
    f.time.t = next;
    f.follower.wake();
  }
  return waits;
}

TEST(DaemonFollower, WithJitterEachRetryWaitsUpToHalfAgainButNeverOverTheCap) {
  // Given followers whose controller went away at the same moment (a cluster's, jitter 0.5):
  // each retry waits the backoff's 0.5, 1, 2 ... s lengthened by up to half, never over the
  // 60 s cap, and two followers do not retry in step.
  FollowerOptions o = slurm_like_options();
  o.jitter = 0.5;
  o.jitter_seed = 1;
  const std::vector<double> a = retry_waits(o, 12);
  o.jitter_seed = 2;
  const std::vector<double> b = retry_waits(o, 12);
  const double backoff[] = {0.5, 1, 2, 4, 8, 16, 32, 60, 60, 60, 60, 60};
  int lengthened = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    SCOPED_TRACE("retry " + std::to_string(i));
    const double cap = std::min(backoff[i] * 1.5, 60.0);
    EXPECT_GE(a[i], backoff[i]);
    EXPECT_LE(a[i], cap);
    EXPECT_GE(b[i], backoff[i]);
    EXPECT_LE(b[i], cap);
    if (a[i] > backoff[i]) ++lengthened;
  }
  EXPECT_GE(lengthened, 5) << "the waits below the cap are lengthened";
  EXPECT_NE(a, b) << "two followers retry at times of their own";
  o.jitter = 0;
  EXPECT_EQ(retry_waits(o, 12), std::vector<double>(std::begin(backoff), std::end(backoff)));
}

TEST(DaemonFollower, WithJitterAQuietHourRefreshesEvery60To90Seconds) {
  FollowerOptions o = slurm_like_options();
  o.jitter = 0.5;
  o.jitter_seed = 3;
  Fixture f(o);
  f.run(1h);
  // 3600 s of refreshes between 60 and 90 s apart, the act at the start included.
  EXPECT_GE(f.policy.acts, 3600 / 90 + 1);
  EXPECT_LT(f.policy.acts, 60) << "some refreshes were lengthened";
  EXPECT_EQ(f.follower.counts().wakeups, static_cast<uint64_t>(f.policy.acts)) << "and no more";
}

}  // namespace daemon_follower_test
