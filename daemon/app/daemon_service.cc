// The daemon and its service manager: the sockets passed by socket activation,
// READY=1 once devices are open and the socket listens, RELOADING=1/READY=1 around a reload,
// STOPPING=1, the watchdog, and a status line kept current (docs/operations.md).
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "app/daemon.h"
#include "core/service_status.h"
#include "hub/hub.h"
#include "rdma_eventd/protocol.h"
#include "systemd/service_manager.h"

namespace rdma_eventd::daemon {

// The subscriber socket's FileDescriptorName= in rdma-eventd.socket.
constexpr std::string_view kSocketName = "events";
// The report socket's name, when it has one of its own (systemd-socket-activate
// --fdname=events:report, or a .socket unit of its own).
constexpr std::string_view kReportSocketName = "report";

namespace {

// The path a passed Unix socket is bound to; "" when it has none (or is not one).
std::string bound_path(int fd) {
  sockaddr_un addr{};
  socklen_t len = sizeof addr;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0 ||
      addr.sun_family != AF_UNIX || len <= offsetof(sockaddr_un, sun_path)) {
    return "";
  }
  return std::string(addr.sun_path,
                     ::strnlen(addr.sun_path, len - offsetof(sockaddr_un, sun_path)));
}

// rdma-eventd.socket names every socket it listens on "events" (FileDescriptorName= applies to
// all of a unit's sockets): of two, the one at the other's report_socket_path() is the report
// socket.
bool is_report_socket_of(const PassedSocket& p, const std::vector<PassedSocket>& passed) {
  if (p.name == kReportSocketName) return true;
  if (p.name != kSocketName) return false;
  const std::string path = bound_path(p.fd.get());
  return std::any_of(passed.begin(), passed.end(), [&](const PassedSocket& other) {
    return &other != &p && other.name == kSocketName && !path.empty() &&
           path == report_socket_path(bound_path(other.fd.get()));
  });
}

}  // namespace

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
  // --fdname names it "unknown"); and the report socket. Anything else is not ours to serve,
  // and is closed.
  std::vector<bool> report(passed.size());
  for (size_t i = 0; i < passed.size(); ++i)
    report[i] = is_report_socket_of(passed[i], passed);
  for (size_t i = 0; i < passed.size(); ++i) {
    PassedSocket& p = passed[i];
    if (report[i] && !passed_report_socket_) {
      passed_report_socket_ = std::move(p.fd);
      continue;
    }
    if (!report[i] && !passed_socket_ && (p.name == kSocketName || passed.size() == 1)) {
      passed_socket_ = std::move(p.fd);
      continue;
    }
    spdlog::warn("ignoring descriptor {} (\"{}\") passed by the service manager", p.fd.get(),
                 p.name);
  }
  if (passed_report_socket_ && !passed_socket_) {
    // A report socket without the events socket: the daemon would make its own events socket
    // in the service manager's directory. Refused as a wrong .socket unit.
    spdlog::warn("the service manager passed a report socket but no events socket: ignoring it");
    passed_report_socket_.reset();
  }
  if (passed_socket_ && !socket_config().enabled) {
    spdlog::warn(
        "the subscriber socket is disabled (socket.enabled or --no-socket) but the service "
        "manager passed one: not serving it; disable rdma-eventd.socket too");
    passed_socket_.reset();
    passed_report_socket_.reset();
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
