// The daemon's one event loop, and the watches that live on it. The only code that knows
// libevent: everything else sees these classes.
//
// Every watch owns its registration (never an fd it is given: SignalWatch owns the signalfd it
// makes), is neither copyable nor movable, and unregisters in its destructor. A callback must not
// destroy its own watch: it asks the loop to run the destruction later with EventLoop::defer().
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <string>

#include "rdma_eventd/internal/unique_fd.h"

struct event;
struct event_base;

namespace rdma_eventd::daemon {

struct EventDeleter {
  void operator()(event* e) const noexcept;
};
using EventPtr = std::unique_ptr<event, EventDeleter>;

struct EventBaseDeleter {
  void operator()(event_base* b) const noexcept;
};
using EventBasePtr = std::unique_ptr<event_base, EventBaseDeleter>;

// Who goes first when several watches are ready at once. A loop iteration runs only the ready
// callbacks of the most urgent priority that has any; the others wait for the next iteration.
// Subscribers' output goes before device events, so under a storm the daemon delivers what it
// has already made before it reads (and makes) more: a subscriber that reads as fast as the
// daemon writes never falls behind, while one that does not read never holds anything up. Of
// the device events, one device's batch runs per iteration: the subscribers' turn comes after
// each batch.
enum class Priority : uint8_t {
  kControl = 0,      // signals, deferred work, timers, the udev monitor, the journal's wakeups
  kSubscribers = 1,  // the subscriber socket: accepts, requests, output
  kSources = 2,      // device event queues
};

class EventLoop {
 public:
  // Creates an epoll-backed loop; throws std::runtime_error when epoll is not available.
  EventLoop();
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;
  EventLoop(EventLoop&&) = delete;
  EventLoop& operator=(EventLoop&&) = delete;

  // Runs until stop(). Returns 0, or -1 when libevent failed. An exception escaping a callback
  // stops the loop and is rethrown here: none may unwind through libevent's C frames.
  int run();
  void stop();

  // Runs fn, turning an escaping exception into a stopped loop (used by every trampoline).
  template <typename Fn>
  void guarded(Fn&& fn) noexcept {
    try {
      fn();
    } catch (...) {
      fail(std::current_exception());
    }
  }

  // Runs fn on the loop after the current callback has returned, in submission order.
  void defer(std::function<void()> fn);

  std::string backend() const;  // "epoll"
  event_base* base() const { return base_.get(); }

 private:
  static void on_deferred(int, short, void* self);
  void fail(std::exception_ptr e) noexcept;

  // Declared first, so destroyed last: every event of the loop is freed before its base.
  EventBasePtr base_;
  std::exception_ptr failure_;
  EventPtr defer_event_;
  std::deque<std::function<void()>> deferred_;
};

// A persistent watch on a file descriptor. Callbacks get the readiness: readable, writable.
class IoWatch {
 public:
  using Callback = std::function<void(bool readable, bool writable)>;

  IoWatch(EventLoop& loop, int fd, Priority priority, Callback cb);
  IoWatch(const IoWatch&) = delete;
  IoWatch& operator=(const IoWatch&) = delete;
  IoWatch(IoWatch&&) = delete;  // libevent holds its address
  IoWatch& operator=(IoWatch&&) = delete;

  // Which readiness to wait for; (false, false) pauses the watch.
  void watch(bool read, bool write);
  int fd() const { return fd_; }

 private:
  static void on_event(int fd, short what, void* self);

  EventLoop& loop_;
  int fd_;
  Priority priority_;
  Callback cb_;
  EventPtr ev_;
  bool read_ = false;
  bool write_ = false;
};

// A signal, read on the loop from a signalfd. The signal is blocked in the thread that makes
// the watch (threads started afterwards inherit that), so it stays pending until the loop
// reads it: no handler runs at an arbitrary point, and a signal sent before the loop runs is
// taken when it does. Signals that come together run the callback once. The signal stays
// blocked after the watch is gone: one that comes while the daemon winds down does not end it
// half-way.
class SignalWatch {
 public:
  SignalWatch(EventLoop& loop, int signo, std::function<void()> cb);
  SignalWatch(const SignalWatch&) = delete;
  SignalWatch& operator=(const SignalWatch&) = delete;
  SignalWatch(SignalWatch&&) = delete;
  SignalWatch& operator=(SignalWatch&&) = delete;

 private:
  void on_readable();
  internal::UniqueFd fd_;  // the signalfd; declared before the watch, so it is closed after it
  std::function<void()> cb_;
  std::unique_ptr<IoWatch> watch_;
};

// A timer that fires every period from its start, from a timerfd the loop watches. Its wakeups
// come when they are due and not otherwise: libevent's timers read the coarse monotonic clock
// (a tick of up to 4 ms), so the loop can wake at a timer's due time, read a time a tick behind
// it, and sleep once more before it runs the timer, a wakeup for nothing. A period missed while
// the loop was busy runs the callback once. Nothing runs (no wakeup) while it is stopped.
class PeriodicTimer {
 public:
  // Throws std::runtime_error when no timerfd can be made.
  PeriodicTimer(EventLoop& loop, std::function<void()> cb);
  PeriodicTimer(const PeriodicTimer&) = delete;
  PeriodicTimer& operator=(const PeriodicTimer&) = delete;
  PeriodicTimer(PeriodicTimer&&) = delete;
  PeriodicTimer& operator=(PeriodicTimer&&) = delete;

  // (Re)starts it: the first run is one period from now. Throws std::runtime_error when the
  // timerfd refuses the period.
  void start(std::chrono::microseconds period);
  // Stops it; an expiry not yet run is dropped.
  void stop();

 private:
  void on_readable();
  internal::UniqueFd fd_;  // the timerfd; declared before the watch, so it is closed after it
  std::function<void()> cb_;
  std::unique_ptr<IoWatch> watch_;
};

// A one-shot timer; nothing runs (no wakeup) while it is not armed.
class Timer {
 public:
  // `priority`: a timer whose work may wait behind device events (a sweep of many ports)
  // takes kSources; by default timers are control work.
  Timer(EventLoop& loop, std::function<void()> cb, Priority priority = Priority::kControl);
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;
  Timer(Timer&&) = delete;  // libevent holds its address
  Timer& operator=(Timer&&) = delete;

  // (Re)starts the countdown. Throws std::runtime_error when libevent cannot add the timer.
  void arm(std::chrono::microseconds after);
  void cancel();
  bool armed() const;

 private:
  static void on_timeout(int, short, void* self);
  EventLoop& loop_;
  std::function<void()> cb_;
  EventPtr ev_;
};

}  // namespace rdma_eventd::daemon
