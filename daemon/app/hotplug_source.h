// What tells the daemon that RDMA devices may have come, gone or been renamed.
//
// Where the kernel has it (Linux 6.12 and later: the monitor-mode attribute of the RDMA system
// query), the RDMA netlink monitor: NETLINK_RDMA's notify group, one more watch of the loop,
// which announces every device that registers or unregisters, every port netdev that attaches
// or detaches, and (from 6.13) every rename. It needs no udev, so hot-plug works in a
// container. udev, where it runs too, is then read for renames only (6.12 does not announce
// them), and a rename the kernel announced is not taken again from udev.
//
// Elsewhere, a udev monitor on the "infiniband" and "infiniband_verbs" subsystems; where udev
// does not run either (containers without /run/udev/control on older kernels), a rescan every
// kFallbackRescan. Every event, and every overflow of either socket (ENOBUFS: events were
// lost), is a reason to resynchronize: one resync per wakeup, whatever it read.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "loop/event_loop.h"
#include "netlink/netlink_socket.h"

namespace rdma_eventd::daemon {

namespace udev {
class UdevMonitor;
}

struct HotplugStats {
  bool rdma_netlink = false;      // the kernel's RDMA netlink monitor drives hot-plug
  bool udev = false;              // the udev monitor runs (for renames only when rdma_netlink)
  uint64_t udev_events = 0;       // events received (infiniband, infiniband_verbs)
  uint64_t udev_skipped = 0;      // of those, left to the RDMA netlink monitor
  uint64_t overflows = 0;         // times the udev monitor's socket overflowed (ENOBUFS)
  uint64_t rescans = 0;           // fallback rescans
  uint64_t netlink_events = 0;    // RDMA netlink monitor messages
  uint64_t netlink_overruns = 0;  // times its socket overflowed (ENOBUFS)
  // "rdma_netlink", "udev" or "rescan": what drives hot-plug.
  std::string_view source() const {
    return rdma_netlink ? "rdma_netlink" : udev ? "udev" : "rescan";
  }
};

class HotplugSource {
 public:
  using OnChange = std::function<void(std::string_view why)>;

  // `netlink_stand_in`: a seqpacket socket speaking NETLINK_RDMA's messages (rdma-sim's), ""
  // for the kernel's own.
  HotplugSource(EventLoop& loop, OnChange on_change, std::string netlink_stand_in = {});
  ~HotplugSource();
  HotplugSource(const HotplugSource&) = delete;
  HotplugSource& operator=(const HotplugSource&) = delete;

  // Asks the kernel whether it has the RDMA netlink monitor (a short wait for its answer, at
  // start only), then starts the udev monitor, or the fallback timer where neither runs.
  // Logs which.
  void start();
  const HotplugStats& stats() const { return stats_; }

 private:
  // Returns why the monitor cannot be used, "" when it is.
  std::string start_netlink();
  void start_udev(bool renames_only);
  void on_netlink_readable();
  void on_udev_readable();
  void netlink_failed(const std::string& why);
  void fall_back(const std::string& why);

  EventLoop& loop_;
  OnChange on_change_;
  std::string netlink_stand_in_;
  netlink::NetlinkSocket netlink_;
  std::unique_ptr<IoWatch> netlink_watch_;  // after its socket: unregistered before it closes
  std::vector<uint8_t> buf_;
  // Names the kernel announced as new names, oldest first: udev's "move" for one of them is
  // the same rename, already taken.
  std::deque<std::string> renamed_;
  bool logged_foreign_ = false;
  bool logged_malformed_ = false;
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
// RDMA netlink datagrams read per wakeup (each about 60 bytes), and the buffer for one.
inline constexpr int kNetlinkMessagesPerWakeup = 256;
inline constexpr size_t kNetlinkBuffer = 8192;
// How long start() waits for the kernel's answer to the system query (it answers while the
// query is sent; a stand-in within milliseconds).
inline constexpr int kNetlinkAnswerWaitMs = 1000;
// Renames remembered to recognize udev's report of them.
inline constexpr size_t kRenamesRemembered = 64;
// Where neither udev nor the kernel's monitor runs.
inline constexpr auto kFallbackRescan = std::chrono::seconds(5);

}  // namespace rdma_eventd::daemon
