#include "app/hotplug_source.h"

#include <spdlog/spdlog.h>

#include <cstring>
#include <stdexcept>

#include "udev/udev_monitor.h"

namespace rdma_eventd::daemon {

HotplugSource::HotplugSource(EventLoop& loop, OnChange on_change)
    : loop_(loop), on_change_(std::move(on_change)), rescan_(loop, [this] {
        ++stats_.rescans;
        on_change_("periodic rescan");
        rescan_.arm(kFallbackRescan);
      }) {}

HotplugSource::~HotplugSource() {
  watch_.reset();
}

void HotplugSource::start() {
  if (!udev::UdevMonitor::udev_running()) {
    fall_back("udev is not running here (no /run/udev/control)");
    return;
  }
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
  spdlog::info("hot-plug: {}; rescanning for RDMA devices every {} s instead", why,
               kFallbackRescan.count());
  rescan_.arm(kFallbackRescan);
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
      // The kernel dropped messages: whatever they said, the device list says it now.
      ++stats_.overflows;
      spdlog::log(stats_.overflows == 1 ? spdlog::level::warn : spdlog::level::debug,
                  "hot-plug: the udev monitor overflowed and lost events ({} time{} so far); "
                  "resynchronizing from the device list",
                  stats_.overflows, stats_.overflows == 1 ? "" : "s");
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
