#include "loop/event_loop.h"

#include <event2/event.h>
#include <pthread.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace rdma_eventd::daemon {

void EventDeleter::operator()(event* e) const noexcept {
  event_del(e);
  event_free(e);
}

void EventBaseDeleter::operator()(event_base* b) const noexcept {
  event_base_free(b);
}

namespace {

void set_priority(event* ev, Priority p) {
  if (event_priority_set(ev, static_cast<int>(p)) != 0) {
    throw std::runtime_error("libevent: cannot set an event's priority");
  }
}

}  // namespace

EventLoop::EventLoop() {
  const std::unique_ptr<event_config, decltype(&event_config_free)> cfg(event_config_new(),
                                                                        &event_config_free);
  if (!cfg) throw std::runtime_error("libevent: cannot allocate a configuration");
  // Only epoll: select and poll scale with the number of fds on every wakeup.
  event_config_avoid_method(cfg.get(), "select");
  event_config_avoid_method(cfg.get(), "poll");
  // One device callback per loop iteration: after each batch of events the loop polls again,
  // so subscribers whose sockets drained meanwhile are written to before the next batch is
  // read, rather than after every ready device has had its turn.
  if (event_config_set_max_dispatch_interval(cfg.get(), nullptr, 1,
                                             static_cast<int>(Priority::kSources)) != 0) {
    throw std::runtime_error("libevent: cannot limit the callbacks per iteration");
  }
  base_.reset(event_base_new_with_config(cfg.get()));
  if (!base_) throw std::runtime_error("libevent: cannot create an epoll event loop");
  if (event_base_priority_init(base_.get(), static_cast<int>(Priority::kSources) + 1) != 0) {
    throw std::runtime_error("libevent: cannot set up event priorities");
  }
  defer_event_.reset(event_new(base_.get(), -1, 0, &EventLoop::on_deferred, this));
  if (!defer_event_) throw std::runtime_error("libevent: cannot allocate an event");
  set_priority(defer_event_.get(), Priority::kControl);
}

EventLoop::~EventLoop() = default;

int EventLoop::run() {
  const int rc = event_base_loop(base_.get(), EVLOOP_NO_EXIT_ON_EMPTY);
  if (failure_) std::rethrow_exception(std::exchange(failure_, nullptr));
  return rc < 0 ? -1 : 0;
}

void EventLoop::fail(std::exception_ptr e) noexcept {
  if (!failure_) failure_ = e;
  event_base_loopbreak(base_.get());
}

void EventLoop::stop() {
  event_base_loopbreak(base_.get());
}

void EventLoop::defer(std::function<void()> fn) {
  deferred_.push_back(std::move(fn));
  if (deferred_.size() == 1) event_active(defer_event_.get(), EV_TIMEOUT, 0);
}

void EventLoop::on_deferred(int, short, void* self) {
  auto* loop = static_cast<EventLoop*>(self);
  // Only what was queued before this run: work deferred by these calls waits for the next
  // iteration, so other watches get their turn.
  std::deque<std::function<void()>> batch;
  batch.swap(loop->deferred_);
  for (auto& fn : batch)
    loop->guarded(fn);
}

std::string EventLoop::backend() const {
  return event_base_get_method(base_.get());
}

IoWatch::IoWatch(EventLoop& loop, int fd, Priority priority, Callback cb)
    : loop_(loop), fd_(fd), priority_(priority), cb_(std::move(cb)) {}

void IoWatch::watch(bool read, bool write) {
  if (read == read_ && write == write_) return;
  read_ = read;
  write_ = write;
  // One event for the watch's life: a change of interest re-assigns it (subscribers switch
  // write interest on and off all the time; a new event each time would cost an allocation).
  if (ev_) event_del(ev_.get());
  if (!read && !write) return;
  const short what = EV_PERSIST | (read ? EV_READ : 0) | (write ? EV_WRITE : 0);
  bool ok;
  if (ev_) {
    ok = event_assign(ev_.get(), loop_.base(), fd_, what, &IoWatch::on_event, this) == 0;
  } else {
    ev_.reset(event_new(loop_.base(), fd_, what, &IoWatch::on_event, this));
    ok = ev_ != nullptr;
  }
  if (ok) set_priority(ev_.get(), priority_);
  if (!ok || event_add(ev_.get(), nullptr) != 0) {
    throw std::runtime_error("libevent: cannot watch fd " + std::to_string(fd_));
  }
}

void IoWatch::on_event(int, short what, void* self) {
  auto* w = static_cast<IoWatch*>(self);
  w->loop_.guarded([&] { w->cb_((what & EV_READ) != 0, (what & EV_WRITE) != 0); });
}

SignalWatch::SignalWatch(EventLoop& loop, int signo, std::function<void()> cb)
    : cb_(std::move(cb)) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, signo);
  const int rc = pthread_sigmask(SIG_BLOCK, &set, nullptr);
  if (rc != 0) {
    throw std::runtime_error("cannot block signal " + std::to_string(signo) + ": " +
                             std::strerror(rc));
  }
  fd_.reset(signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC));
  if (!fd_) {
    throw std::runtime_error("signalfd for signal " + std::to_string(signo) + ": " +
                             std::strerror(errno));
  }
  watch_ = std::make_unique<IoWatch>(loop, fd_.get(), Priority::kControl,
                                     [this](bool, bool) { on_readable(); });
  watch_->watch(true, false);
}

void SignalWatch::on_readable() {
  signalfd_siginfo info[4];
  bool taken = false;
  for (;;) {
    const ssize_t n = ::read(fd_.get(), info, sizeof info);
    if (n > 0) {
      taken = true;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    break;  // EAGAIN: all taken
  }
  if (taken) cb_();
}

PeriodicTimer::PeriodicTimer(EventLoop& loop, std::function<void()> cb) : cb_(std::move(cb)) {
  fd_.reset(timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC));
  if (!fd_) throw std::runtime_error(std::string("timerfd: ") + std::strerror(errno));
  watch_ = std::make_unique<IoWatch>(loop, fd_.get(), Priority::kControl,
                                     [this](bool, bool) { on_readable(); });
  watch_->watch(true, false);
}

void PeriodicTimer::start(std::chrono::microseconds period) {
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(period.count() / 1000000);
  ts.tv_nsec = static_cast<long>(period.count() % 1000000) * 1000;
  const itimerspec spec{ts, ts};  // every period, the first one period from now
  if (timerfd_settime(fd_.get(), 0, &spec, nullptr) != 0)
    throw std::runtime_error(std::string("timerfd_settime: ") + std::strerror(errno));
}

void PeriodicTimer::stop() {
  // Setting a timerfd also clears the expiries it holds: one not yet read is not run.
  const itimerspec none{};
  timerfd_settime(fd_.get(), 0, &none, nullptr);  // cannot fail for a valid fd and zero
}

void PeriodicTimer::on_readable() {
  uint64_t expired = 0;
  ssize_t n;
  while ((n = ::read(fd_.get(), &expired, sizeof expired)) < 0 && errno == EINTR) {
  }
  // Nothing read: stopped since the fd was found readable.
  if (n == static_cast<ssize_t>(sizeof expired)) cb_();
}

Timer::Timer(EventLoop& loop, std::function<void()> cb, Priority priority)
    : loop_(loop), cb_(std::move(cb)) {
  ev_.reset(evtimer_new(loop.base(), &Timer::on_timeout, this));
  if (!ev_) throw std::runtime_error("libevent: cannot allocate a timer");
  set_priority(ev_.get(), priority);
}

void Timer::arm(std::chrono::microseconds after) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(after.count() / 1000000);
  tv.tv_usec = static_cast<suseconds_t>(after.count() % 1000000);
  if (evtimer_add(ev_.get(), &tv) != 0) throw std::runtime_error("libevent: cannot arm a timer");
}

void Timer::cancel() {
  evtimer_del(ev_.get());
}

bool Timer::armed() const {
  return evtimer_pending(ev_.get(), nullptr) != 0;
}

void Timer::on_timeout(int, short, void* self) {
  auto* t = static_cast<Timer*>(self);
  t->loop_.guarded(t->cb_);
}

}  // namespace rdma_eventd::daemon
