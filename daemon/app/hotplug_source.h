// What tells the daemon that RDMA devices may have come, gone or been renamed.
//
// Where udev runs: a udev monitor on the "infiniband" and "infiniband_verbs" subsystems, its
// fd watched by the loop. udev is followed even where the kernel has an RDMA netlink monitor:
// its "add" of a uverbs node comes once its rules have made the node usable (the daemon runs
// unprivileged and opens it by its mode), and its "remove" of the node is the one early sign
// that a device is going whose driver cannot disassociate its users (rxe, siw): the kernel
// unregisters such a device, and announces it, only once every user has closed it.
//
// Where udev does not run (containers without /run/udev/control) and the kernel has it (Linux
// 6.12 and later: the monitor-mode attribute of the RDMA system query), the RDMA netlink
// monitor: NETLINK_RDMA's notify group, which announces every device that registers or
// unregisters, every port netdev that attaches or detaches, and (from 6.13) every rename, at
// once. A rescan every kFallbackRescan runs beside it only where the kernel announces no
// rename (6.12), or while the daemon has a device open whose removal nothing announces without
// udev (the case above; core/removal_notice.h); it runs alone where the kernel has no monitor.
//
// Every event, and every overflow of either socket (ENOBUFS: events were lost), is a reason to
// resynchronize: one resync per wakeup, whatever it read.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "loop/event_loop.h"
#include "netlink/netlink_socket.h"

namespace rdma_eventd::daemon {

namespace udev {
class UdevMonitor;
}

struct HotplugStats {
  bool rdma_netlink = false;      // the kernel's RDMA netlink monitor is followed (no udev)
  bool udev = false;              // the udev monitor runs
  uint64_t udev_events = 0;       // events received (infiniband, infiniband_verbs)
  uint64_t overflows = 0;         // times the udev monitor's socket overflowed (ENOBUFS)
  uint64_t rescans = 0;           // fallback rescans
  uint64_t netlink_events = 0;    // RDMA netlink monitor messages
  uint64_t netlink_overruns = 0;  // times its socket overflowed (ENOBUFS)
  bool rescanning = false;        // the rescan timer runs
  // With the RDMA netlink monitor: the open devices the rescan runs for (their removal is not
  // announced), by name.
  std::vector<std::string> rescan_for;
  // "udev", "rdma_netlink" (with the rescan) or "rescan": what tells of hot-plug.
  std::string_view source() const {
    return udev ? "udev" : rdma_netlink ? "rdma_netlink" : "rescan";
  }
};

class HotplugSource {
 public:
  using OnChange = std::function<void(std::string_view why)>;

  // `netlink_stand_in`: a seqpacket socket speaking NETLINK_RDMA's messages (rdma-sim's), ""
  // for the kernel's own; `kernel_release`: the release of the kernel it models, "" for the
  // running kernel's.
  HotplugSource(EventLoop& loop, OnChange on_change, std::string netlink_stand_in = {},
                std::string kernel_release = {});
  ~HotplugSource();
  HotplugSource(const HotplugSource&) = delete;
  HotplugSource& operator=(const HotplugSource&) = delete;

  // Starts the udev monitor; where udev does not run, the RDMA netlink monitor when the kernel
  // has it (a short wait for its answer to the system query, at start only), else the
  // rescan timer. Logs which.
  void start();
  // The open devices whose removal the kernel does not announce to their users, each with why
  // (DeviceSet::unannounced_removals()): beside the RDMA netlink monitor, the rescan runs while
  // there is one. Logged when the rescan starts or stops for them.
  void set_unannounced(std::vector<std::pair<std::string, std::string>> devices);
  const HotplugStats& stats() const { return stats_; }

 private:
  // Returns why the monitor cannot be used, "" when it is.
  std::string start_netlink();
  void start_udev();
  void on_netlink_readable();
  void on_udev_readable();
  void netlink_failed(const std::string& why);
  void fall_back(const std::string& why);
  bool rescan_needed() const;
  // Arms or cancels the rescan as rescan_needed() says.
  void update_rescan();

  EventLoop& loop_;
  OnChange on_change_;
  std::string netlink_stand_in_;
  std::string kernel_release_;
  bool renames_announced_ = false;  // by the monitor followed
  netlink::NetlinkSocket netlink_;
  std::unique_ptr<IoWatch> netlink_watch_;  // after its socket: unregistered before it closes
  std::vector<uint8_t> buf_;
  bool logged_foreign_ = false;
  bool logged_malformed_ = false;
  std::unique_ptr<udev::UdevMonitor> monitor_;
  std::unique_ptr<IoWatch> watch_;  // declared after the monitor: unregistered before it closes
  Timer rescan_;
  std::vector<std::pair<std::string, std::string>> unannounced_;
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
// Where udev does not run.
inline constexpr auto kFallbackRescan = std::chrono::seconds(5);

}  // namespace rdma_eventd::daemon
