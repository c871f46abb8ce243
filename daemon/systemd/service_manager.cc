#include "systemd/service_manager.h"

#include <systemd/sd-daemon.h>

#include <cstdlib>
#include <cstring>
#include <utility>

#include "core/clock.h"

namespace rdma_eventd::daemon {

ServiceManager::ServiceManager(EventLoop& loop, FailureHandler on_failure)
    : loop_(loop), on_failure_(std::move(on_failure)) {
  // secure_getenv, as sd_notify itself reads it: a set-uid caller's environment is not trusted.
  const char* socket = ::secure_getenv("NOTIFY_SOCKET");
  supervised_ = socket != nullptr && *socket != '\0';
  uint64_t usec = 0;
  // > 0 only when WATCHDOG_USEC is set and WATCHDOG_PID, if set, names this process.
  if (supervised_ && sd_watchdog_enabled(0, &usec) > 0 && usec > 0) {
    watchdog_usec_ = std::chrono::microseconds(usec);
    watchdog_ = std::make_unique<PeriodicTimer>(loop_, [this] { ping(); });
    watchdog_->start(*watchdog_usec_ / 2);
  }
}

std::vector<PassedSocket> ServiceManager::take_passed_sockets() {
  char** names = nullptr;
  const int n = sd_listen_fds_with_names(1, &names);
  std::vector<PassedSocket> out;
  for (int i = 0; i < n; ++i) {
    out.push_back({internal::UniqueFd(SD_LISTEN_FDS_START + i), names && names[i] ? names[i] : ""});
  }
  if (names) {
    for (char** p = names; *p; ++p)
      std::free(*p);
    std::free(names);
  }
  return out;
}

void ServiceManager::ready(const std::string& status) {
  ready_ = true;
  last_status_ = status;
  send("READY=1\nSTATUS=" + status);
}

void ServiceManager::reloading() {
  send("RELOADING=1\nMONOTONIC_USEC=" + std::to_string(monotonic_us()));
}

void ServiceManager::stopping() {
  if (watchdog_) watchdog_->stop();
  send("STOPPING=1");
}

void ServiceManager::status(const std::string& text) {
  // Before READY=1 the status is still being made; READY=1 carries it.
  if (!ready_ || text == last_status_) return;
  last_status_ = text;
  send("STATUS=" + text);
}

void ServiceManager::ping() {
  send("WATCHDOG=1");
}

void ServiceManager::send(const std::string& state) {
  if (!supervised_) return;
  const int rc = sd_notify(0, state.c_str());
  if (rc >= 0) {
    failing_ = false;
    return;
  }
  if (!failing_ && on_failure_) on_failure_(std::strerror(-rc));
  failing_ = true;
}

}  // namespace rdma_eventd::daemon
