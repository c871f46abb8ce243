// DeviceSet: a device's DEVX event channel (mlx5 vendor events): its watch, reading it in
// batches, the records, and its state for the status reply.
#include <spdlog/spdlog.h>

#include <array>
#include <cassert>
#include <cstring>

#include "app/device_set.h"
#include "app/watched_device.h"
#include "core/devx_decode.h"

namespace rdma_eventd::daemon {

// Called when a device is opened: one log line says whether its vendor events are read, and
// why not when they are not.
void DeviceSet::watch_devx(WatchedDevice& dev) {
  OpenDevice& device = *dev.device;
  dev.devx.status = device.devx_status();
  const std::string& name = device.entry().name;
  const int fd = device.devx_fd();
  if (fd < 0) {
    spdlog::info("{}: no vendor events (DEVX {}): {}", name, devx_state_name(dev.devx.status.state),
                 dev.devx.status.reason);
    return;
  }
  WatchedDevice* raw = &dev;
  dev.devx_watch = std::make_unique<IoWatch>(loop_, fd, Priority::kSources,
                                             [this, raw](bool, bool) { on_devx_readable(*raw); });
  dev.devx_watch->watch(!paused_, false);
  spdlog::info("{}: reading vendor events {} (DEVX event channel fd {})", name,
               devx::event_names(dev.devx.status.events), fd);
}

// The channel ends for good: no more callbacks, the status says why, and resuming after a pause
// (pause_reading) leaves it stopped. The watch stays until the device closes: this runs inside its
// callback. The device itself goes on (its async events are read as before) until its own events
// close it; reopening it opens a new channel.
void DeviceSet::stop_devx(WatchedDevice& dev, DevxState state, std::string reason) {
  dev.devx_watch->watch(false, false);
  spdlog::warn("{}: vendor events stopped: {}", dev.device->entry().name, reason);
  dev.devx.status.state = state;
  dev.devx.status.reason = std::move(reason);
}

void DeviceSet::on_devx_readable(WatchedDevice& dev) {
  const int index = dev.device->entry().index;
  DeviceView* view = lifecycle_.view(index);
  assert(view);  // open and watched: the lifecycle knows it
  std::vector<Record> records;
  std::vector<QueryFailure> failures;
  alignas(8) std::array<uint8_t, devx::kReadSize> buf{};
  size_t events = 0;
  bool any = false;
  while (events < kMaxBatch) {
    int error = 0;
    const auto r = dev.device->read_devx(buf, &error);
    if (r == OpenDevice::DevxRead::kEmpty) {
      // Readable with nothing to read: the kernel destroyed the channel (the device is going
      // away; its DEVICE_FATAL closes it). Watching it further would spin.
      if (!any) stop_devx(dev, DevxState::kClosed, "the event channel was destroyed");
      break;
    }
    any = true;
    if (r == OpenDevice::DevxRead::kError) {
      stop_devx(dev, DevxState::kClosed,
                std::string("reading the event channel failed: ") + std::strerror(error));
      break;
    }
    if (r == OpenDevice::DevxRead::kOverflow) {
      ++dev.devx.events_lost;
      auto lost = devx::events_lost_records(*view, *dev.device, &failures);
      std::move(lost.begin(), lost.end(), std::back_inserter(records));
      continue;
    }
    ++events;
    ++dev.devx.events_read;
    const auto eqe = std::span<const uint8_t>(buf).subspan(devx::kCookieSize);
    records.push_back(devx::vendor_record(*view, devx::decode_event(eqe)));
  }
  log_query_failures(dev, failures);
  if (records.empty()) return;
  ++stats_.batches;
  stamp(records, clock_.now());
  publish_(records);
}

const DeviceEntry* DeviceSet::watched_entry(std::string_view name) const {
  for (const auto& [index, d] : devices_) {
    if (d->device->entry().name == name && !d->close_queued) return &d->device->entry();
  }
  return nullptr;
}

std::string DeviceSet::ibdev_path(std::string_view name) const {
  const DeviceEntry* e = watched_entry(name);
  return e ? e->ibdev_path : std::string();
}

std::string DeviceSet::parent_driver(std::string_view name) const {
  const DeviceEntry* e = watched_entry(name);
  return e ? e->parent_driver : std::string();
}

std::map<std::string, DevxReport> DeviceSet::devx_reports() const {
  std::map<std::string, DevxReport> out;
  for (const auto& [index, d] : devices_)
    out[d->device->entry().name] = d->devx;
  return out;
}

}  // namespace rdma_eventd::daemon
