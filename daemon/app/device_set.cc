// DeviceSet: the device list, opening and closing, retries. Reading events is in
// device_events.cc.
#include "app/device_set.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <iterator>
#include <optional>

#include "app/watched_device.h"
#include "core/removal_notice.h"

namespace rdma_eventd::daemon {

DeviceSet::DeviceSet(EventLoop& loop, RecordStamper& stamper,
                     std::unique_ptr<DeviceCatalog> catalog, const Clock& clock, Publish publish)
    : loop_(loop),
      stamper_(stamper),
      clock_(clock),
      publish_(std::move(publish)),
      catalog_(std::move(catalog)),
      retry_(loop, [this] { resync(Mode::kChange, "retrying devices that failed to open"); }) {
  batch_.reserve(kMaxBatch);
}

DeviceSet::~DeviceSet() = default;

void DeviceSet::set_filter(const DeviceFilter& filter) {
  lifecycle_.set_selector(
      [filter](const DeviceEntry& e) { return filter.selects(e.name, e.node_guid); });
}

void DeviceSet::resync(Mode mode, std::string_view why) {
  ++stats_.resyncs;
  spdlog::debug("devices: resynchronizing ({})", why);
  const Instant now = clock_.now();
  const int err = catalog_->scan();
  ResyncStep step = lifecycle_.resync(Listing{err, catalog_->devices()}, why);
  log(step.notes);
  if (!step.listed) return;  // the known devices stay as they are

  for (const DeviceEntry& e : step.renamed)
    devices_.at(e.index)->device->rename(e);
  // Closed at once: this is another watch's callback.
  for (int index : step.close)
    devices_.erase(index);
  std::vector<Record> records = std::move(step.records);
  for (const DeviceEntry& e : step.open)
    open_device(e, mode, now, records);

  if (!records.empty()) {
    stamp(records, now);
    publish_(records);
  }
  schedule_retry(now);
  if (on_change_) on_change_();
}

void DeviceSet::open_device(const DeviceEntry& entry, Mode mode, Instant now,
                            std::vector<Record>& out) {
  int err = 0;
  std::unique_ptr<OpenDevice> device = catalog_->open(entry, &err);
  if (!device) {
    log(lifecycle_.open_failed(entry, err, now).notes);
    return;
  }
  auto dev = std::make_unique<WatchedDevice>();
  DeviceView view;
  view.name = entry.name;
  view.node_guid = entry.node_guid;
  const auto failures = load_view(*device, device->num_ports(), view);
  dev->device = std::move(device);
  log_query_failures(*dev, failures);
  WatchedDevice* raw = dev.get();
  dev->watch = std::make_unique<IoWatch>(loop_, raw->device->async_fd(), Priority::kSources,
                                         [this, raw](bool, bool) { on_readable(*raw); });
  dev->watch->watch(!paused_, false);
  watch_devx(*dev);
  const uint32_t ports = raw->device->num_ports();
  spdlog::info("{}: watching (node GUID {}, {} port{}, async fd {})", entry.name,
               format_guid(entry.node_guid), ports, ports == 1 ? "" : "s", raw->device->async_fd());
  OpenStep step = lifecycle_.opened(entry, std::move(view), mode, now);
  log(step.notes);
  std::move(step.records.begin(), step.records.end(), std::back_inserter(out));
  devices_[entry.index] = std::move(dev);
}

void DeviceSet::schedule_retry(Instant now) {
  retry_.cancel();
  const std::optional<int64_t> next = lifecycle_.next_retry_us();
  if (!next) return;  // nothing to wait for: no wakeups
  retry_.arm(std::chrono::microseconds(std::max<int64_t>(0, *next - now.mono_us)));
}

void DeviceSet::close_later(int index, std::string why) {
  auto it = devices_.find(index);
  if (it == devices_.end() || it->second->close_queued) return;
  it->second->close_queued = true;
  it->second->watch->watch(false, false);  // no more callbacks for it
  if (it->second->devx_watch) it->second->devx_watch->watch(false, false);
  lifecycle_.closing(index);
  loop_.defer([this, index, why = std::move(why)] {
    auto it2 = devices_.find(index);
    if (it2 == devices_.end()) return;
    spdlog::info("{}: closing: {}", it2->second->device->entry().name, why);
    devices_.erase(it2);
    lifecycle_.closed(index);
    if (on_change_) on_change_();
  });
}

void DeviceSet::pause_reading(bool paused) {
  if (paused == paused_) return;
  paused_ = paused;
  for (auto& [index, d] : devices_) {
    if (d->close_queued) continue;
    d->watch->watch(!paused, false);
    // A DEVX channel stopped for good (stop_devx) stays stopped: only reopening the device
    // makes a new one.
    if (d->devx_watch && d->devx.status.state == DevxState::kActive) {
      d->devx_watch->watch(!paused, false);
    }
  }
}

void DeviceSet::stamp(std::vector<Record>& records, Instant now) {
  for (Record& r : records)
    stamper_.stamp(r, now.wall_us);
}

void DeviceSet::log(const std::vector<LogNote>& notes) {
  // Indexed by LogNote::Level.
  static constexpr spdlog::level::level_enum kLevels[] = {spdlog::level::debug, spdlog::level::info,
                                                          spdlog::level::warn, spdlog::level::err};
  for (const LogNote& n : notes)
    spdlog::log(kLevels[static_cast<size_t>(n.level)], "{}", n.text);
}

std::vector<std::pair<std::string, std::string>> DeviceSet::unannounced_removals() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [index, d] : devices_) {
    const DeviceEntry& e = d->device->entry();
    if (!d->close_queued && !removal_announced(e.parent_driver))
      out.emplace_back(e.name, unannounced_because(e.parent_driver));
  }
  return out;
}

}  // namespace rdma_eventd::daemon
