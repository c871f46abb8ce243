#include "udev/udev_monitor.h"

#include <libudev.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace rdma_eventd::daemon::udev {
namespace {

std::string text_of(const char* s) {
  return s ? std::string(s) : std::string();
}

[[noreturn]] void fail(const std::string& what, int err) {
  throw std::runtime_error("udev monitor: " + what + ": " + std::strerror(err));
}

}  // namespace

bool UdevMonitor::udev_running() {
  // The same test libudev makes before it subscribes to the "udev" group.
  return ::access("/run/udev/control", F_OK) == 0;
}

void UdevMonitor::UdevDeleter::operator()(struct udev* u) const noexcept {
  udev_unref(u);
}

void UdevMonitor::MonitorDeleter::operator()(struct udev_monitor* m) const noexcept {
  udev_monitor_unref(m);
}

UdevMonitor::UdevMonitor(int receive_buffer_bytes) {
  udev_.reset(udev_new());
  if (!udev_) fail("udev_new", errno ? errno : ENOMEM);
  monitor_.reset(udev_monitor_new_from_netlink(udev_.get(), "udev"));
  if (!monitor_) fail("cannot create the netlink monitor", errno ? errno : ENOMEM);
  for (const char* subsystem : {"infiniband", "infiniband_verbs"}) {
    if (int r = udev_monitor_filter_add_match_subsystem_devtype(monitor_.get(), subsystem, nullptr);
        r < 0) {
      fail(std::string("cannot filter on subsystem ") + subsystem, -r);
    }
  }
  // Needs CAP_NET_ADMIN (SO_RCVBUFFORCE); without it the default buffer stays, and an overflow
  // is still detected and resynchronized.
  (void)udev_monitor_set_receive_buffer_size(monitor_.get(), receive_buffer_bytes);
  if (int r = udev_monitor_enable_receiving(monitor_.get()); r < 0) {
    fail("cannot start receiving", -r);
  }
}

int UdevMonitor::fd() const {
  return udev_monitor_get_fd(monitor_.get());
}

UdevMonitor::Result UdevMonitor::receive(UdevEvent& out, int* error) {
  errno = 0;
  udev_device* d = udev_monitor_receive_device(monitor_.get());
  if (!d) {
    // libudev says EAGAIN also for a message it dropped (wrong sender, not our subsystem)
    // while more may be queued: the loop's level-triggered watch calls again if so.
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == 0) {
      return Result::kEmpty;
    }
    if (errno == ENOBUFS) return Result::kOverflow;
    *error = errno;
    return Result::kError;
  }
  out.action = text_of(udev_device_get_action(d));
  out.subsystem = text_of(udev_device_get_subsystem(d));
  out.sysname = text_of(udev_device_get_sysname(d));
  out.devpath = text_of(udev_device_get_devpath(d));
  out.devpath_old = text_of(udev_device_get_property_value(d, "DEVPATH_OLD"));
  out.seqnum = udev_device_get_seqnum(d);
  udev_device_unref(d);
  return Result::kEvent;
}

}  // namespace rdma_eventd::daemon::udev
