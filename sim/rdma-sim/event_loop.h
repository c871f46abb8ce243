// A small single-threaded epoll loop. Each watch is an object that owns its registration (never
// the fd) and is removed from epoll when destroyed. Callbacks may destroy other watches; a watch
// destroyed during a dispatch round is not called afterwards in that round.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>

#include "unique_fd.h"

namespace rdmasim {

class EventLoop;

class IoWatch {
 public:
  IoWatch() = default;
  IoWatch(EventLoop* loop, int fd, uint32_t events, std::function<void(uint32_t)> cb);
  ~IoWatch();
  IoWatch(IoWatch&& other) noexcept;
  IoWatch& operator=(IoWatch&& other) noexcept;
  IoWatch(const IoWatch&) = delete;
  IoWatch& operator=(const IoWatch&) = delete;

  void set_events(uint32_t events);
  uint32_t events() const { return events_; }
  explicit operator bool() const { return loop_ != nullptr; }

 private:
  void reset();
  EventLoop* loop_ = nullptr;
  int fd_ = -1;
  uint32_t events_ = 0;
  uint64_t token_ = 0;
};

class EventLoop {
 public:
  EventLoop();
  // Waits up to timeout_ms (-1: forever) and dispatches what is ready.
  void run_once(int timeout_ms);

 private:
  friend class IoWatch;
  uint64_t add(int fd, uint32_t events, std::function<void(uint32_t)> cb);
  void modify(int fd, uint64_t token, uint32_t events);
  void remove(int fd, uint64_t token);

  UniqueFd epfd_;
  uint64_t next_token_ = 1;
  std::unordered_map<uint64_t, std::shared_ptr<std::function<void(uint32_t)>>> callbacks_;
};

}  // namespace rdmasim
