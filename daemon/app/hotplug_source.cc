#include "app/hotplug_source.h"

#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/utsname.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>

#include "core/rdma_netlink_decode.h"
#include "core/removal_notice.h"
#include "udev/udev_monitor.h"

namespace rdma_eventd::daemon {

namespace rn = rdma_netlink;

namespace {

// The kernel dropped messages of `monitor`: whatever they said, the device list says it now.
// Counted in `times`; logged at warning the first time, then at debug.
void log_lost_events(std::string_view monitor, uint64_t& times) {
  ++times;
  spdlog::log(times == 1 ? spdlog::level::warn : spdlog::level::debug,
              "hot-plug: {} overflowed and lost events ({} time{} so far); resynchronizing from "
              "the device list",
              monitor, times, times == 1 ? "" : "s");
}

}  // namespace

HotplugSource::HotplugSource(EventLoop& loop, OnChange on_change, std::string netlink_stand_in,
                             std::string kernel_release)
    : loop_(loop),
      on_change_(std::move(on_change)),
      netlink_stand_in_(std::move(netlink_stand_in)),
      kernel_release_(std::move(kernel_release)),
      rescan_(loop, [this] {
        ++stats_.rescans;
        on_change_("periodic rescan");  // may have closed the last device that needed it
        if (rescan_needed() && !rescan_.armed()) rescan_.arm(kFallbackRescan);
      }) {}

HotplugSource::~HotplugSource() {
  watch_.reset();
  netlink_watch_.reset();
}

void HotplugSource::start() {
  if (udev::UdevMonitor::udev_running()) {
    start_udev();
    return;
  }
  const std::string why_not = start_netlink();
  if (!why_not.empty()) spdlog::info("hot-plug: {}", why_not);
  fall_back("udev is not running here (no /run/udev/control)");
}

void HotplugSource::start_udev() {
  try {
    monitor_ = std::make_unique<udev::UdevMonitor>(kUdevReceiveBuffer);
  } catch (const std::exception& e) {
    fall_back(e.what());
    return;
  }
  watch_ = std::make_unique<IoWatch>(loop_, monitor_->fd(), Priority::kControl,
                                     [this](bool, bool) { on_udev_readable(); });
  watch_->watch(true, false);
  stats_.udev = true;
  spdlog::info("hot-plug: following udev events of infiniband and infiniband_verbs devices");
}

void HotplugSource::fall_back(const std::string& why) {
  watch_.reset();
  monitor_.reset();
  stats_.udev = false;
  if (stats_.rdma_netlink && !renames_announced_) {
    spdlog::info(
        "hot-plug: {}; following the kernel's RDMA netlink monitor, and rescanning for RDMA "
        "devices every {} s: this kernel ({}) announces no rename (Linux 6.13 and later do)",
        why, kFallbackRescan.count(), kernel_release_);
  } else if (stats_.rdma_netlink) {
    spdlog::info(
        "hot-plug: {}; following the kernel's RDMA netlink monitor, and rescanning for RDMA "
        "devices every {} s only while a device is open whose removal it cannot announce in "
        "time (one whose driver waits for its users to close it: rxe, siw)",
        why, kFallbackRescan.count());
  } else {
    spdlog::info("hot-plug: {}; rescanning for RDMA devices every {} s instead", why,
                 kFallbackRescan.count());
  }
  update_rescan();
}

void HotplugSource::set_unannounced(std::vector<std::pair<std::string, std::string>> devices) {
  if (devices == unannounced_) return;
  if (!stats_.udev && stats_.rdma_netlink) {
    // A line for each device that joins, one when the last has gone.
    for (const auto& [name, why] : devices) {
      if (std::find(unannounced_.begin(), unannounced_.end(), std::pair(name, why)) !=
          unannounced_.end())
        continue;
      spdlog::info(
          "hot-plug: rescanning every {} s while {} is open: the kernel may announce its "
          "removal only once its users have closed it ({})",
          kFallbackRescan.count(), name, why);
    }
    if (devices.empty() && renames_announced_) {
      spdlog::info(
          "hot-plug: no rescan: the kernel announces the removal of every open RDMA device");
    }
  }
  unannounced_ = std::move(devices);
  update_rescan();
}

bool HotplugSource::rescan_needed() const {
  if (stats_.udev) return false;
  return !stats_.rdma_netlink || !renames_announced_ || !unannounced_.empty();
}

void HotplugSource::update_rescan() {
  const bool needed = rescan_needed();
  if (needed && !rescan_.armed()) rescan_.arm(kFallbackRescan);
  if (!needed) rescan_.cancel();
  stats_.rescanning = needed;
  // The devices it runs for: only beside the monitor (with udev none, without the monitor all).
  stats_.rescan_for.clear();
  if (stats_.udev || !stats_.rdma_netlink) return;
  for (const auto& [name, why] : unannounced_)
    stats_.rescan_for.push_back(name);
}

std::string HotplugSource::start_netlink() {
  const std::string where =
      netlink_stand_in_.empty() ? "the kernel" : "the stand-in at " + netlink_stand_in_;
  if (const int err = netlink_.open(rn::kProtocol, netlink_stand_in_)) {
    // EPROTONOSUPPORT: no RDMA core loaded (no RDMA device yet), or a kernel without it.
    return "no RDMA netlink socket (" + std::string(std::strerror(err)) + ")";
  }
  // Joined before the question, so that nothing announced after the answer is missed.
  if (const int err = netlink_.join(rn::kNotifyGroup)) {
    netlink_.close();
    return "cannot join the RDMA netlink notify group (" + std::string(std::strerror(err)) + ")";
  }
  constexpr uint32_t kSeq = 1;
  if (const int err = netlink_.send(rn::system_request(kSeq))) {
    netlink_.close();
    return "cannot ask " + where + " for its RDMA system attributes (" + std::strerror(err) + ")";
  }
  buf_.resize(kNetlinkBuffer);
  // The answer comes after any notification already queued (news the first resync takes).
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(kNetlinkAnswerWaitMs);
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd p{netlink_.fd(), POLLIN, 0};
    if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) != 1) {
      netlink_.close();
      return where + " did not answer the RDMA system query";
    }
    size_t size = 0;
    bool from_kernel = false;
    if (const int err = netlink_.receive(buf_, &size, &from_kernel)) {
      if (err == EAGAIN || err == ENOBUFS) continue;
      netlink_.close();
      return "cannot read the answer to the RDMA system query (" + std::string(std::strerror(err)) +
             ")";
    }
    if (!from_kernel) continue;
    std::vector<rn::Message> messages;
    rn::decode(std::span(buf_.data(), size), messages);
    for (const rn::Message& m : messages) {
      // Notifications have seq 0; only this socket gets the answer (its port id, which a
      // stand-in does not tell, is the kernel's business).
      if (m.seq != kSeq) continue;
      if (m.kind == rn::MessageKind::kError && m.error != 0) {
        netlink_.close();
        return where + " refused the RDMA system query (" + std::strerror(m.error) + ")";
      }
      if (m.kind != rn::MessageKind::kSystem) continue;
      if (!m.monitor_mode) {
        netlink_.close();
        return "this kernel has no RDMA netlink monitor (Linux 6.12 and later have one)";
      }
      netlink_watch_ = std::make_unique<IoWatch>(loop_, netlink_.fd(), Priority::kControl,
                                                 [this](bool, bool) { on_netlink_readable(); });
      netlink_watch_->watch(true, false);
      stats_.rdma_netlink = true;
      if (kernel_release_.empty()) {
        utsname u{};
        if (uname(&u) == 0) kernel_release_ = u.release;
      }
      renames_announced_ = kernel_announces_renames(kernel_release_);
      return {};
    }
  }
}

void HotplugSource::netlink_failed(const std::string& why) {
  netlink_watch_.reset();
  netlink_.close();
  stats_.rdma_netlink = false;
  spdlog::warn("hot-plug: {}; rescanning for RDMA devices every {} s from now on", why,
               kFallbackRescan.count());
  update_rescan();
  on_change_("the RDMA netlink monitor failed");  // what it may have missed
}

void HotplugSource::on_netlink_readable() {
  std::string why;  // empty: nothing for us
  bool lost = false;
  for (int i = 0; i < kNetlinkMessagesPerWakeup; ++i) {
    size_t size = 0;
    bool from_kernel = false;
    const int err = netlink_.receive(buf_, &size, &from_kernel);
    if (err == EAGAIN) break;
    if (err == ENOBUFS) {
      log_lost_events("the RDMA netlink monitor's socket", stats_.netlink_overruns);
      lost = true;
      continue;
    }
    if (err != 0) {
      // Reading it again would fail again, at every wakeup. Not here: this is its callback.
      netlink_watch_->watch(false, false);
      const std::string what = err == ECONNRESET ? "the stand-in went away" : std::strerror(err);
      loop_.defer(
          [this, what] { netlink_failed("reading the RDMA netlink monitor failed: " + what); });
      break;
    }
    if (!from_kernel) {
      if (!logged_foreign_)
        spdlog::warn("hot-plug: ignored an RDMA netlink message that was not the kernel's");
      logged_foreign_ = true;
      continue;
    }
    std::vector<rn::Message> messages;
    rn::decode(std::span(buf_.data(), size), messages);
    for (const rn::Message& m : messages) {
      if (m.kind == rn::MessageKind::kMalformed) {
        spdlog::log(logged_malformed_ ? spdlog::level::debug : spdlog::level::warn,
                    "hot-plug: ignored a malformed RDMA netlink message: {}", m.problem);
        logged_malformed_ = true;
        continue;
      }
      if (m.kind != rn::MessageKind::kMonitor) continue;
      ++stats_.netlink_events;
      spdlog::debug("rdma netlink: {}", rn::describe(m.notice));
      // A netdev's own rename changes nothing the daemon lists.
      if (m.notice.event == static_cast<uint8_t>(rn::EventType::kNetdevRename)) continue;
      why = "rdma netlink " + rn::describe(m.notice);
    }
  }
  // One resync for the wakeup; after a loss, what the messages read with it said is not all.
  if (lost) why = "RDMA netlink events lost";
  if (!why.empty()) on_change_(why);
}

void HotplugSource::on_udev_readable() {
  std::string why;  // empty: nothing for us
  bool lost = false;
  for (int i = 0; i < kUdevMessagesPerWakeup; ++i) {
    udev::UdevEvent ev;
    int err = 0;
    const auto r = monitor_->receive(ev, &err);
    if (r == udev::UdevMonitor::Result::kEmpty) break;
    if (r == udev::UdevMonitor::Result::kOverflow) {
      log_lost_events("the udev monitor", stats_.overflows);
      lost = true;
      continue;
    }
    if (r == udev::UdevMonitor::Result::kError) {
      spdlog::error("hot-plug: reading the udev monitor failed: {}", std::strerror(err));
      // Reading it again would fail again, at every wakeup: rescan on a timer instead. Not
      // here: this is the monitor's own callback.
      watch_->watch(false, false);
      loop_.defer([this] { fall_back("the udev monitor failed"); });
      lost = true;
      break;
    }
    ++stats_.udev_events;
    spdlog::debug("udev: {} {} {} (seq {})", ev.action, ev.subsystem, ev.sysname, ev.seqnum);
    why = "udev " + ev.action + " " + ev.sysname;
  }
  if (lost) why = "udev events lost";
  if (!why.empty()) on_change_(why);
}

}  // namespace rdma_eventd::daemon
