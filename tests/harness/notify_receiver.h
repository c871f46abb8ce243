// The service manager's end of sd_notify(3), for tests: a datagram socket that a program run
// with NOTIFY_SOCKET=path() sends its READY=1, STATUS=..., WATCHDOG=1, RELOADING=1 and
// STOPPING=1 messages to, read back one datagram at a time with deadlines.
//
//   NotifyReceiver n;
//   Process d = sim.spawn({bin("rdma-eventd"), "-f"}, n.spawn_options());
//   auto ready = n.require([](const Notification& m) { return m.has("READY", "1"); }, 30s);
//   EXPECT_EQ(ready.value("STATUS"), "2 devices, 3 ports up, 0 down, 0 subscribers");
//
// A thread takes the datagrams off the socket as they come, whether or not the test is
// reading: sd_notify blocks the sender once the receiver's queue holds net.unix.max_dgram_qlen
// datagrams (10 by default), and a daemon whose status changes often would stall on it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "process.h"
#include "rdma_eventd/internal/unique_fd.h"
#include "temp_dir.h"

namespace rdmatest {

// One datagram: newline-separated VAR=value assignments, in order.
struct Notification {
  std::string raw;
  std::vector<std::pair<std::string, std::string>> vars;
  pid_t pid = 0;  // the sender, as the kernel says (SCM_CREDENTIALS)

  bool has(const std::string& name, const std::string& value) const;
  // The value of `name`, or "" when it is not set.
  std::string value(const std::string& name) const;
};

class NotifyReceiver {
 public:
  NotifyReceiver();
  ~NotifyReceiver();
  NotifyReceiver(const NotifyReceiver&) = delete;
  NotifyReceiver& operator=(const NotifyReceiver&) = delete;

  const std::string& path() const { return path_; }
  // base plus NOTIFY_SOCKET=path(), and `extra` (WATCHDOG_USEC, say).
  SpawnOptions spawn_options(SpawnOptions base = {},
                             const std::map<std::string, std::string>& extra = {}) const;

  // The next datagram not read yet, waiting up to `timeout` for one; nullopt on timeout. With a
  // timeout of 0 it still sees every datagram sent before the call.
  std::optional<Notification> next(Duration timeout);
  // Reads datagrams until one matches; every datagram read on the way is in received(). Throws
  // HarnessError naming `what` and listing what came, on timeout.
  Notification require(const std::function<bool(const Notification&)>& match, Duration timeout,
                       const std::string& what);
  // Every datagram read so far (by next() and require()), in order.
  std::vector<Notification> received() const;
  std::string describe() const;

 private:
  void take_waiting();  // moves what the socket holds to arrived_; with mu_ held
  void run();           // the reader thread

  TempDir dir_{"rdma-notify"};
  std::string path_;
  rdma_eventd::internal::UniqueFd fd_;
  rdma_eventd::internal::UniqueFd stop_;  // an eventfd that ends the reader thread
  mutable std::mutex mu_;
  std::condition_variable arrived_cv_;
  std::deque<Notification> arrived_;    // not read yet
  std::vector<Notification> received_;  // read
  std::thread reader_;
};

}  // namespace rdmatest
