// The daemon and its service manager: the subscriber socket passed by socket activation,
// READY=1 once devices are open and the socket listens, RELOADING=1/READY=1 around a reload,
// STOPPING=1, the watchdog, and a status line kept current (docs/operations.md).
#include <spdlog/spdlog.h>

#include <utility>

#include "app/daemon.h"
#include "core/service_status.h"
#include "hub/hub.h"
#include "systemd/service_manager.h"

namespace rdma_eventd::daemon {

// The subscriber socket's FileDescriptorName= in rdma-eventd.socket.
constexpr std::string_view kSocketName = "events";

void Daemon::setup_service() {
  service_ = std::make_unique<ServiceManager>(loop_, [](const std::string& reason) {
    spdlog::warn("cannot notify the service manager: {}", reason);
  });
  if (const auto interval = service_->watchdog_interval()) {
    spdlog::info("watchdog: {} ms, pinged every {} ms from the event loop",
                 interval->count() / 1000, interval->count() / 2000);
  }
  std::vector<PassedSocket> passed = ServiceManager::take_passed_sockets();
  // The one named "events", or the only one when there is one (systemd-socket-activate without
  // --fdname names it "unknown"). Anything else is not ours to serve, and is closed.
  for (PassedSocket& p : passed) {
    if (!passed_socket_ && (p.name == kSocketName || passed.size() == 1)) {
      passed_socket_ = std::move(p.fd);
      continue;
    }
    spdlog::warn("ignoring descriptor {} (\"{}\") passed by the service manager", p.fd.get(),
                 p.name);
  }
  if (passed_socket_ && !socket_config().enabled) {
    spdlog::warn(
        "the subscriber socket is disabled (socket.enabled or --no-socket) but the service "
        "manager passed one: not serving it; disable rdma-eventd.socket too");
    passed_socket_.reset();
  }
}

std::string Daemon::service_status() const {
  return service_status_text(
      device_views(), hub_ ? std::optional<uint64_t>(hub_->subscriber_count()) : std::nullopt);
}

void Daemon::update_service_status() {
  if (service_ && service_->supervised()) service_->status(service_status());
}

}  // namespace rdma_eventd::daemon
