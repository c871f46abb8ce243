// The service manager's end of sd_notify(3), for tests: a datagram socket that a program run
// with NOTIFY_SOCKET=path() sends its READY=1, STATUS=..., WATCHDOG=1, RELOADING=1 and
// STOPPING=1 messages to, read back one datagram at a time with deadlines.
//
//   NotifyReceiver n;
//   Process d = sim.spawn({bin("rdma-eventd"), "-f"}, n.spawn_options());
//   auto ready = n.require([](const Notification& m) { return m.has("READY", "1"); }, 30s);
//   EXPECT_EQ(ready.value("STATUS"), "2 devices, 3 ports up, 0 down, 0 subscribers");
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "process.h"
#include "temp_dir.h"

namespace rdma_eventd::systest {

// One datagram: newline-separated VAR=value assignments, in order.
struct Notification {
  std::string raw;
  std::vector<std::pair<std::string, std::string>> vars;

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
  rdmatest::SpawnOptions spawn_options(rdmatest::SpawnOptions base = {},
                                       const std::map<std::string, std::string>& extra = {}) const;

  // The next datagram; nullopt on timeout.
  std::optional<Notification> next(rdmatest::Duration timeout);
  // Reads datagrams until one matches; every datagram read on the way is in received(). Throws
  // HarnessError naming `what` and listing what came, on timeout.
  Notification require(const std::function<bool(const Notification&)>& match,
                       rdmatest::Duration timeout, const std::string& what);
  // Every datagram read so far, in order.
  const std::vector<Notification>& received() const { return received_; }
  std::string describe() const;

 private:
  rdmatest::TempDir dir_{"rdma-notify"};
  std::string path_;
  int fd_ = -1;
  std::vector<Notification> received_;
};

}  // namespace rdma_eventd::systest
