// The daemon's side of the service manager protocol (systemd, sd_notify(3), sd_listen_fds(3),
// sd_watchdog_enabled(3)): readiness, reloads, stopping and a status line, the watchdog, and the
// sockets handed over by socket activation.
//
// Outside a service manager (NOTIFY_SOCKET unset) every notification is a no-op and no watchdog
// timer exists. With WatchdogSec= set, WATCHDOG=1 is sent by a timer on the daemon's own event
// loop at half the interval: the pings stop when the loop stops turning, so a hung loop is what
// the service manager sees, not a live helper thread.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "loop/event_loop.h"
#include "rdma_eventd/internal/unique_fd.h"

namespace rdma_eventd::daemon {

// A descriptor passed by the service manager (LISTEN_FDS), with its FileDescriptorName=.
struct PassedSocket {
  internal::UniqueFd fd;
  std::string name;
};

class ServiceManager {
 public:
  // Called with the reason when a notification cannot be sent, once per run of failures: a
  // service manager that went away would otherwise be reported on every ping and status change.
  using FailureHandler = std::function<void(const std::string& reason)>;

  // Starts the watchdog's pings on `loop` when the service manager asked for them.
  ServiceManager(EventLoop& loop, FailureHandler on_failure);
  ServiceManager(const ServiceManager&) = delete;
  ServiceManager& operator=(const ServiceManager&) = delete;
  ServiceManager(ServiceManager&&) = delete;
  ServiceManager& operator=(ServiceManager&&) = delete;

  // The sockets passed to this process by socket activation, once: the LISTEN_* variables are
  // removed so nothing started later inherits them. Empty when not socket-activated.
  static std::vector<PassedSocket> take_passed_sockets();

  // Whether a service manager listens (NOTIFY_SOCKET is set).
  bool supervised() const { return supervised_; }
  // The interval WATCHDOG=1 pings are due in, when WatchdogSec= is set for this process.
  std::optional<std::chrono::microseconds> watchdog_interval() const { return watchdog_usec_; }

  // READY=1 with a status line: startup is complete, or a reload is done.
  void ready(const std::string& status);
  // RELOADING=1 (with MONOTONIC_USEC, as systemd's notify-reload protocol wants).
  void reloading();
  // STOPPING=1.
  void stopping();
  // STATUS=, sent only when it differs from the last one sent, and only after READY=1.
  void status(const std::string& text);

 private:
  void send(const std::string& state);
  void ping();

  EventLoop& loop_;
  FailureHandler on_failure_;
  bool supervised_ = false;
  std::optional<std::chrono::microseconds> watchdog_usec_;
  std::unique_ptr<PeriodicTimer> watchdog_;
  std::string last_status_;
  bool ready_ = false;
  bool failing_ = false;  // the last notification failed (reported already)
};

}  // namespace rdma_eventd::daemon
