// The daemon's only contact with libudev: a monitor of the "udev" netlink group, filtered in
// the kernel to the two subsystems an RDMA device lives in, "infiniband" (the ib_device:
// add, remove, move on rename) and "infiniband_verbs" (its uverbsN char device). Its fd is
// non-blocking and watched by the loop; what the events mean is decided elsewhere.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

struct udev;
struct udev_monitor;

namespace rdma_eventd::daemon::udev {

struct UdevEvent {
  std::string action;     // "add", "remove", "move", "change", ...
  std::string subsystem;  // "infiniband" or "infiniband_verbs"
  std::string sysname;    // "mlx5_0", "uverbs0"
  std::string devpath;
  std::string devpath_old;  // move only
  uint64_t seqnum = 0;
};

class UdevMonitor {
 public:
  // Whether udev runs here: its control socket exists. Where it does not (most containers)
  // libudev's monitor stays silent, and the daemon rescans on a timer instead.
  static bool udev_running();

  // Creates the monitor, installs the subsystem filter and starts receiving. Throws
  // std::runtime_error naming the failed step.
  explicit UdevMonitor(int receive_buffer_bytes);
  UdevMonitor(const UdevMonitor&) = delete;
  UdevMonitor& operator=(const UdevMonitor&) = delete;

  int fd() const;

  enum class Result {
    kEvent,     // *out is filled
    kEmpty,     // nothing to read now (or a message that was not for us)
    kOverflow,  // the socket's buffer overflowed: events were lost (ENOBUFS)
    kError,     // *error is set
  };
  Result receive(UdevEvent& out, int* error);

 private:
  struct UdevDeleter {
    void operator()(struct udev* u) const noexcept;
  };
  struct MonitorDeleter {
    void operator()(struct udev_monitor* m) const noexcept;
  };
  // The monitor holds a reference to the context; declared first, the context goes last.
  std::unique_ptr<struct udev, UdevDeleter> udev_;
  std::unique_ptr<struct udev_monitor, MonitorDeleter> monitor_;
};

}  // namespace rdma_eventd::daemon::udev
