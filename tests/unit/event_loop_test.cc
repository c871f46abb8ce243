#include "loop/event_loop.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace rdma_eventd::daemon {
namespace {

struct Pipe {
  Pipe() { EXPECT_EQ(pipe(fds), 0); }
  ~Pipe() {
    close(fds[0]);
    close(fds[1]);
  }
  int fds[2];
};

TEST(EventLoop, UsesEpoll) {
  EventLoop loop;
  EXPECT_EQ(loop.backend(), "epoll");
}

TEST(IoWatch, AReadablePipeRunsTheCallbackUntilDrained) {
  // Given one byte in a pipe, the watch fires; the callback drains it and stops the loop.
  EventLoop loop;
  Pipe p;
  int calls = 0;
  IoWatch w(loop, p.fds[0], Priority::kSources, [&](bool readable, bool writable) {
    ++calls;
    EXPECT_TRUE(readable);
    EXPECT_FALSE(writable);
    char c;
    ASSERT_EQ(read(p.fds[0], &c, 1), 1);
    loop.stop();
  });
  w.watch(true, false);
  ASSERT_EQ(write(p.fds[1], "x", 1), 1);
  EXPECT_EQ(loop.run(), 0);
  EXPECT_EQ(calls, 1);
}

TEST(IoWatch, APausedWatchDoesNotFire) {
  EventLoop loop;
  Pipe p;
  bool fired = false;
  IoWatch w(loop, p.fds[0], Priority::kSources, [&](bool, bool) { fired = true; });
  w.watch(true, false);
  w.watch(false, false);
  ASSERT_EQ(write(p.fds[1], "x", 1), 1);
  loop.defer([&] { loop.defer([&] { loop.stop(); }); });
  loop.run();
  EXPECT_FALSE(fired);
}

TEST(IoWatch, InterestCanChangeBackAndForth) {
  // Given a pipe's write end (always writable), the watch fires for writing only while it asks
  // for it, and for reading never (nothing to read on a write end).
  EventLoop loop;
  Pipe p;
  int writable = 0;
  IoWatch w(loop, p.fds[1], Priority::kSubscribers, [&](bool, bool wr) {
    if (wr) ++writable;
    w.watch(false, false);  // from its own callback: paused, not destroyed
    if (writable < 3) {
      loop.defer([&] {
        w.watch(true, false);
        w.watch(false, true);
      });
    } else {
      loop.stop();
    }
  });
  w.watch(false, true);
  loop.run();
  EXPECT_EQ(writable, 3);
}

TEST(EventLoop, DeferredWorkRunsAfterTheCallbackInOrder) {
  EventLoop loop;
  std::vector<int> order;
  loop.defer([&] {
    order.push_back(1);
    loop.defer([&] {
      order.push_back(3);
      loop.stop();
    });
  });
  loop.defer([&] { order.push_back(2); });
  loop.run();
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
}

TEST(EventLoop, AWatchCanBeDestroyedByDeferredWorkFromItsOwnCallback) {
  EventLoop loop;
  Pipe p;
  std::unique_ptr<IoWatch> w;
  w = std::make_unique<IoWatch>(loop, p.fds[0], Priority::kSources, [&](bool, bool) {
    loop.defer([&] {
      w.reset();
      loop.stop();
    });
  });
  w->watch(true, false);
  ASSERT_EQ(write(p.fds[1], "x", 1), 1);
  loop.run();
  EXPECT_EQ(w, nullptr);
}

TEST(IoWatch, ReadySubscribersGoBeforeReadySourcesUntilTheyAreDone) {
  // Given a ready source and a ready subscriber whose callback stays ready for three turns,
  // the source runs only once the subscriber has nothing more to do.
  EventLoop loop;
  Pipe source, subscriber;
  std::vector<std::string> order;
  int subscriber_turns = 0;
  IoWatch src(loop, source.fds[0], Priority::kSources, [&](bool, bool) {
    order.push_back("source");
    loop.stop();
  });
  IoWatch sub(loop, subscriber.fds[0], Priority::kSubscribers, [&](bool, bool) {
    order.push_back("subscriber");
    if (++subscriber_turns == 3) {
      char c;
      ASSERT_EQ(read(subscriber.fds[0], &c, 1), 1);
    }
  });
  src.watch(true, false);
  sub.watch(true, false);
  ASSERT_EQ(write(source.fds[1], "x", 1), 1);
  ASSERT_EQ(write(subscriber.fds[1], "x", 1), 1);
  loop.run();
  EXPECT_EQ(order, (std::vector<std::string>{"subscriber", "subscriber", "subscriber", "source"}));
}

TEST(IoWatch, OneSourceRunsPerTurnSoSubscribersGetTheirsInBetween) {
  // Given two ready sources, each of whose batches makes a subscriber ready (as a batch of
  // records queues output), the subscriber runs between the two batches, not after both.
  EventLoop loop;
  Pipe a, b, subscriber;
  std::vector<std::string> order;
  auto source = [&](Pipe& p, const char* name) {
    return [&, name](bool, bool) {
      char c;
      ASSERT_EQ(read(p.fds[0], &c, 1), 1);
      order.push_back(name);
      ASSERT_EQ(write(subscriber.fds[1], "x", 1), 1);
      if (order.size() == 4) loop.stop();
    };
  };
  IoWatch wa(loop, a.fds[0], Priority::kSources, source(a, "a"));
  IoWatch wb(loop, b.fds[0], Priority::kSources, source(b, "b"));
  IoWatch sub(loop, subscriber.fds[0], Priority::kSubscribers, [&](bool, bool) {
    char c;
    ASSERT_EQ(read(subscriber.fds[0], &c, 1), 1);
    order.push_back("subscriber");
    if (order.size() == 4) loop.stop();
  });
  wa.watch(true, false);
  wb.watch(true, false);
  sub.watch(true, false);
  ASSERT_EQ(write(a.fds[1], "x", 1), 1);
  ASSERT_EQ(write(b.fds[1], "x", 1), 1);
  loop.run();
  ASSERT_EQ(order.size(), 4u);
  EXPECT_EQ(order[1], "subscriber");
  EXPECT_EQ(order[3], "subscriber");
  EXPECT_EQ(std::set<std::string>({order[0], order[2]}), std::set<std::string>({"a", "b"}));
}

TEST(EventLoop, AnExceptionInACallbackStopsTheLoopAndReachesRun) {
  EventLoop loop;
  loop.defer([] { throw std::runtime_error("boom"); });
  EXPECT_THROW(loop.run(), std::runtime_error);
}

TEST(SignalWatch, ASignalRunsItsCallback) {
  EventLoop loop;
  int got = 0;
  SignalWatch s(loop, SIGUSR2, [&] {
    ++got;
    loop.stop();
  });
  loop.defer([] { raise(SIGUSR2); });
  loop.run();
  EXPECT_EQ(got, 1);
}

TEST(SignalWatch, ASignalSentBeforeTheLoopRunsIsTakenOnceItDoes) {
  // Two signals before the loop runs: they wait, blocked, and the callback runs once for both.
  EventLoop loop;
  int got = 0;
  SignalWatch s(loop, SIGUSR2, [&] { ++got; });
  ASSERT_EQ(raise(SIGUSR2), 0);
  ASSERT_EQ(raise(SIGUSR2), 0);
  loop.defer([&] { loop.defer([&] { loop.stop(); }); });
  loop.run();
  EXPECT_EQ(got, 1);
}

TEST(SignalWatch, ASignalAfterItsWatchIsGoneStaysPendingAndEndsNothing) {
  {
    EventLoop loop;
    SignalWatch s(loop, SIGUSR2, [] {});
  }
  ASSERT_EQ(raise(SIGUSR2), 0);  // SIGUSR2's default action would end this test process
  sigset_t pending;
  ASSERT_EQ(sigpending(&pending), 0);
  EXPECT_EQ(sigismember(&pending, SIGUSR2), 1);
  sigset_t usr2;
  sigemptyset(&usr2);
  sigaddset(&usr2, SIGUSR2);
  const timespec now{};
  EXPECT_EQ(sigtimedwait(&usr2, nullptr, &now), SIGUSR2);  // taken back: nothing left pending
}

TEST(Timer, FiresOnceWhenArmedAndNotWhenCancelled) {
  EventLoop loop;
  int fired = 0;
  Timer cancelled(loop, [&] { ++fired; });
  Timer stopper(loop, [&] { loop.stop(); });
  cancelled.arm(std::chrono::microseconds(1000));
  EXPECT_TRUE(cancelled.armed());
  cancelled.cancel();
  EXPECT_FALSE(cancelled.armed());
  stopper.arm(std::chrono::microseconds(2000));
  loop.run();
  EXPECT_EQ(fired, 0);
}

TEST(PeriodicTimer, FiresEveryPeriodUntilStopped) {
  EventLoop loop;
  int fired = 0;
  Timer stopper(loop, [&] { loop.stop(); });
  PeriodicTimer ticks(loop, [&] {
    if (++fired == 3) {
      ticks.stop();
      stopper.arm(std::chrono::milliseconds(20));  // time for 20 more periods, were it running
    }
  });
  ticks.start(std::chrono::milliseconds(1));
  loop.run();
  EXPECT_EQ(fired, 3);
}

TEST(PeriodicTimer, PeriodsMissedWhileTheLoopWasBusyRunTheCallbackOnce) {
  // The first run keeps the loop busy for ten periods; the next turn finds them all expired
  // and runs the callback once, not ten times.
  EventLoop loop;
  int fired = 0;
  PeriodicTimer ticks(loop, [&] {
    if (++fired == 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      return;
    }
    ticks.stop();
    loop.stop();
  });
  ticks.start(std::chrono::milliseconds(1));
  loop.run();
  EXPECT_EQ(fired, 2);
}

TEST(PeriodicTimer, AnExpiryNotYetRunIsDroppedWhenStopped) {
  EventLoop loop;
  int fired = 0;
  PeriodicTimer ticks(loop, [&] { ++fired; });
  Timer stopper(loop, [&] { loop.stop(); });
  ticks.start(std::chrono::milliseconds(1));
  std::this_thread::sleep_for(std::chrono::milliseconds(3));  // expired, the loop not turning
  ticks.stop();
  stopper.arm(std::chrono::milliseconds(10));
  loop.run();
  EXPECT_EQ(fired, 0);
}

TEST(PeriodicTimer, RestartedItRunsAgain) {
  EventLoop loop;
  int fired = 0;
  PeriodicTimer ticks(loop, [&] {
    ++fired;
    ticks.stop();
    if (fired == 2) loop.stop();
  });
  ticks.start(std::chrono::milliseconds(1));
  Timer restart(loop, [&] { ticks.start(std::chrono::milliseconds(1)); });
  restart.arm(std::chrono::milliseconds(10));
  loop.run();
  EXPECT_EQ(fired, 2);
}

}  // namespace
}  // namespace rdma_eventd::daemon
