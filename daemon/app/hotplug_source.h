// What tells the daemon that RDMA devices may have come, gone or been renamed.
//
// Where udev runs: a udev monitor on the "infiniband" and "infiniband_verbs" subsystems, its
// fd watched by the loop; every event, and every overflow of its socket (ENOBUFS: events were
// lost), is a reason to resynchronize. Where udev does not run (containers without
// /run/udev/control), a rescan every kFallbackRescan instead. The RDMA netlink monitor of newer
// kernels (RDMA_NLDEV_CMD_MONITOR, Linux 6.13) is not used: udev carries the same news on
// every kernel the daemon supports.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "loop/event_loop.h"

namespace rdma_eventd::daemon {

namespace udev {
class UdevMonitor;
}

struct HotplugStats {
  bool udev = false;         // false: the fallback rescan timer
  uint64_t udev_events = 0;  // events received (infiniband, infiniband_verbs)
  uint64_t overflows = 0;    // times the monitor's socket overflowed (ENOBUFS)
  uint64_t rescans = 0;      // fallback rescans
};

class HotplugSource {
 public:
  using OnChange = std::function<void(std::string_view why)>;

  HotplugSource(EventLoop& loop, OnChange on_change);
  ~HotplugSource();
  HotplugSource(const HotplugSource&) = delete;
  HotplugSource& operator=(const HotplugSource&) = delete;

  // Starts the udev monitor, or the fallback timer when udev does not run or the monitor
  // cannot start. Logs which.
  void start();
  const HotplugStats& stats() const { return stats_; }

 private:
  void on_udev_readable();
  void fall_back(const std::string& why);

  EventLoop& loop_;
  OnChange on_change_;
  std::unique_ptr<udev::UdevMonitor> monitor_;
  std::unique_ptr<IoWatch> watch_;  // declared after the monitor: unregistered before it closes
  Timer rescan_;
  HotplugStats stats_;
};

// The udev monitor's socket buffer (the kernel doubles it for its bookkeeping): a udev message
// takes about 1 KiB of it, so this holds hundreds of device events, far more than a host's
// devices make even when every driver reloads at once. Beyond that, an overflow resyncs.
inline constexpr int kUdevReceiveBuffer = 256 * 1024;
// Udev messages read per wakeup before the resync they cause.
inline constexpr int kUdevMessagesPerWakeup = 256;
// Where udev does not run.
inline constexpr auto kFallbackRescan = std::chrono::seconds(5);

}  // namespace rdma_eventd::daemon
