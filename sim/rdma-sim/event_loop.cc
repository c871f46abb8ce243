#include "event_loop.h"

#include <sys/epoll.h>

#include <cerrno>
#include <system_error>

namespace rdmasim {

IoWatch::IoWatch(EventLoop* loop, int fd, uint32_t events, std::function<void(uint32_t)> cb)
    : loop_(loop), fd_(fd), events_(events), token_(loop->add(fd, events, std::move(cb))) {}

IoWatch::~IoWatch() {
  reset();
}

IoWatch::IoWatch(IoWatch&& other) noexcept
    : loop_(std::exchange(other.loop_, nullptr)),
      fd_(std::exchange(other.fd_, -1)),
      events_(other.events_),
      token_(other.token_) {}

IoWatch& IoWatch::operator=(IoWatch&& other) noexcept {
  if (this != &other) {
    reset();
    loop_ = std::exchange(other.loop_, nullptr);
    fd_ = std::exchange(other.fd_, -1);
    events_ = other.events_;
    token_ = other.token_;
  }
  return *this;
}

void IoWatch::set_events(uint32_t events) {
  if (!loop_ || events == events_) return;
  events_ = events;
  loop_->modify(fd_, token_, events);
}

void IoWatch::reset() {
  if (loop_) loop_->remove(fd_, token_);
  loop_ = nullptr;
}

EventLoop::EventLoop() : epfd_(epoll_create1(EPOLL_CLOEXEC)) {
  if (!epfd_) throw std::system_error(errno, std::generic_category(), "epoll_create1");
}

uint64_t EventLoop::add(int fd, uint32_t events, std::function<void(uint32_t)> cb) {
  const uint64_t token = next_token_++;
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = token;
  if (epoll_ctl(epfd_.get(), EPOLL_CTL_ADD, fd, &ev) != 0)
    throw std::system_error(errno, std::generic_category(), "epoll_ctl add");
  callbacks_.emplace(token, std::make_shared<std::function<void(uint32_t)>>(std::move(cb)));
  return token;
}

void EventLoop::modify(int fd, uint64_t token, uint32_t events) {
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = token;
  if (epoll_ctl(epfd_.get(), EPOLL_CTL_MOD, fd, &ev) != 0)
    throw std::system_error(errno, std::generic_category(), "epoll_ctl mod");
}

void EventLoop::remove(int fd, uint64_t token) {
  // The fd may already be closed by its owner (closing removes it from epoll); that is fine.
  epoll_ctl(epfd_.get(), EPOLL_CTL_DEL, fd, nullptr);
  callbacks_.erase(token);
}

void EventLoop::run_once(int timeout_ms) {
  epoll_event events[64];
  const int n = epoll_wait(epfd_.get(), events, 64, timeout_ms);
  if (n < 0) {
    if (errno == EINTR) return;
    throw std::system_error(errno, std::generic_category(), "epoll_wait");
  }
  for (int i = 0; i < n; ++i) {
    auto it = callbacks_.find(events[i].data.u64);
    if (it == callbacks_.end()) continue;  // removed by an earlier callback of this round
    auto cb = it->second;                  // keeps the callback alive while it runs
    (*cb)(events[i].events);
  }
}

}  // namespace rdmasim
