// DeviceSet: the device list, opening and closing, retries. Reading events and the records the
// set makes itself are in device_events.cc.
#include "app/device_set.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>

#include "app/watched_device.h"
#include "core/clock.h"

namespace rdma_eventd::daemon {

DeviceSet::DeviceSet(EventLoop& loop, RecordStamper& stamper, Publish publish)
    : loop_(loop),
      stamper_(stamper),
      publish_(std::move(publish)),
      retry_(loop, [this] { resync(Mode::kChange, "retrying devices that failed to open"); }) {
  batch_.reserve(kMaxBatch);
}

DeviceSet::~DeviceSet() = default;

void DeviceSet::resync(Mode mode, std::string_view why) {
  ++stats_.resyncs;
  spdlog::debug("devices: resynchronizing ({})", why);
  if (const int err = catalog_.scan(); err != 0) {
    // A failed list leaves the known devices alone, as libibverbs does.
    log_scan_error(err);
    return;
  }
  std::vector<Record> records;
  const int64_t now = realtime_us();

  // Watched devices first: gone, renamed, or no longer selected. A device that is gone is
  // closed at once: a driver that cannot disassociate its users holds its removal until every
  // one of them has closed the device.
  for (auto it = devices_.begin(); it != devices_.end();) {
    WatchedDevice& d = *it->second;
    if (d.closing) {
      ++it;
      continue;
    }
    const verbs::DeviceEntry* e = listed(it->first);
    if (!e) {
      spdlog::info("{}: removed ({}); closing it", d.view.name, why);
      Record r = device_record(EventKind::kDeviceRemoved, d.view);
      for (const auto& pv : d.view.ports)
        r.ports.push_back(pv.info);
      emit(records, std::move(r), now);
      it = devices_.erase(it);
      continue;
    }
    if (e->name != d.context->entry().name) {
      Record r = device_record(EventKind::kDeviceRenamed, d.view);
      r.old_name = d.view.name;
      r.device = e->name;
      spdlog::info("{}: renamed to {}", d.view.name, e->name);
      d.context->rename(*e);
      d.view.name = e->name;
      emit(records, std::move(r), now);
    }
    if (!filter_.selects(e->name, e->node_guid)) {
      spdlog::info("{}: excluded by the configuration now, closing it", e->name);
      it = devices_.erase(it);
      continue;
    }
    ++it;
  }

  // A device that is down after a fatal error and leaves the list: its removal is news once.
  for (DownDevice& down : down_) {
    if (down.removal_published || listed(down.index)) continue;
    down.removal_published = true;
    spdlog::info("{}: removed while down after its fatal error", down.name);
    Record r = device_record(EventKind::kDeviceRemoved, down.view);
    for (const auto& pv : down.view.ports)
      r.ports.push_back(pv.info);
    emit(records, std::move(r), now);
  }

  // Retries only for devices still listed.
  std::erase_if(pending_, [this](const auto& p) { return listed(p.first) == nullptr; });

  size_t selected = 0;
  for (const auto& e : catalog_.devices()) {
    if (!filter_.selects(e.name, e.node_guid)) {
      spdlog::debug("{}: left alone (not selected by devices.include/exclude)", e.name);
      continue;
    }
    ++selected;
    // A device still closing after its fatal error is reopened by the retry, once it is gone.
    if (!devices_.contains(e.index)) open_device(e, mode, records);
  }

  if (selected == 0 && devices_.empty()) {
    const int code = catalog_.devices().empty() ? 0 : -2;
    if (code != last_scan_error_) {
      spdlog::warn(code == 0 ? "no RDMA devices found; waiting for devices (SIGUSR1 rescans)"
                             : "no RDMA device is selected by the configuration; waiting");
      last_scan_error_ = code;
    }
  } else {
    last_scan_error_ = -1;
  }
  if (!records.empty()) publish_(records);
  schedule_retry();
  if (on_change_) on_change_();
}

void DeviceSet::log_scan_error(int err) {
  if (err == last_scan_error_) return;
  last_scan_error_ = err;
  if (err == ENOSYS) {
    spdlog::warn("no RDMA support in the kernel (ENOSYS); waiting for devices (SIGUSR1 rescans)");
  } else {
    spdlog::error("cannot list RDMA devices: {}; waiting (SIGUSR1 rescans)", std::strerror(err));
  }
}

const verbs::DeviceEntry* DeviceSet::listed(int index) const {
  for (const auto& e : catalog_.devices()) {
    if (e.index == index) return &e;
  }
  return nullptr;
}

DeviceSet::DownDevice* DeviceSet::find_down(const verbs::DeviceEntry& entry) {
  // The kernel gives a re-registered device a new index; its node GUID stays.
  for (DownDevice& d : down_) {
    if (entry.node_guid != 0 ? d.node_guid == entry.node_guid : d.name == entry.name) return &d;
  }
  return nullptr;
}

void DeviceSet::open_device(const verbs::DeviceEntry& entry, Mode mode, std::vector<Record>& out) {
  int err = 0;
  auto ctx = catalog_.open(entry, &err);
  if (!ctx) {
    note_open_failure(entry, err);
    return;
  }
  auto dev = std::make_unique<WatchedDevice>();
  dev->view.name = entry.name;
  dev->view.node_guid = entry.node_guid;
  const auto failures = load_view(*ctx, ctx->num_ports(), dev->view);
  dev->context = std::move(ctx);
  log_query_failures(*dev, failures);
  WatchedDevice* raw = dev.get();
  dev->watch = std::make_unique<IoWatch>(loop_, dev->context->async_fd(), Priority::kSources,
                                         [this, raw](bool, bool) { on_readable(*raw); });
  dev->watch->watch(!paused_, false);
  if (auto p = pending_.find(entry.index); p != pending_.end()) {
    if (p->second.attempts > 0) {
      spdlog::info("{}: opened after {} failed attempt{}", entry.name, p->second.attempts,
                   p->second.attempts == 1 ? "" : "s");
    }
    pending_.erase(p);
  }
  spdlog::info("{}: watching (node GUID {}, {} port{}, async fd {})", entry.name,
               format_guid(entry.node_guid), dev->context->num_ports(),
               dev->context->num_ports() == 1 ? "" : "s", dev->context->async_fd());

  const int64_t now = realtime_us();
  const DeviceView& view = dev->view;
  if (DownDevice* down = find_down(entry)) {
    Record r = device_record(EventKind::kDeviceRecovered, view);
    r.down_since_us = down->since_us;
    r.fatal_seq = down->fatal_seq;
    r.downtime_ms = static_cast<uint64_t>(std::max<int64_t>(0, now - down->since_us) / 1000);
    spdlog::info("{}: recovered after {} ms down", entry.name, r.downtime_ms);
    emit(out, std::move(r), now);
    emit_port_states(out, view, &down->view, now);
    down_.erase(down_.begin() + (down - &down_.front()));
  } else if (mode == Mode::kChange) {
    emit(out, device_record(EventKind::kDeviceAdded, view), now);
    emit_port_states(out, view, nullptr, now);
  }
  devices_[entry.index] = std::move(dev);
}

void DeviceSet::note_open_failure(const verbs::DeviceEntry& entry, int error) {
  ++stats_.open_failures;
  const auto now = std::chrono::steady_clock::now();
  Pending& p = pending_[entry.index];
  p.delay = p.attempts == 0 ? std::chrono::steady_clock::duration(kRetryFirst)
                            : std::min<std::chrono::steady_clock::duration>(p.delay * 2, kRetryMax);
  p.next = now + p.delay;
  if (p.attempts++ == 0) {
    spdlog::error("{}: cannot open: {}; retrying, at most every {} s", entry.name,
                  std::strerror(error), kRetryMax.count());
  }
}

void DeviceSet::schedule_retry() {
  if (pending_.empty()) {
    retry_.cancel();  // nothing to wait for: no wakeups
    return;
  }
  auto next = pending_.begin()->second.next;
  for (const auto& [index, p] : pending_)
    next = std::min(next, p.next);
  const auto after = std::max(std::chrono::steady_clock::duration::zero(),
                              next - std::chrono::steady_clock::now());
  retry_.cancel();
  retry_.arm(std::chrono::duration_cast<std::chrono::microseconds>(after));
}

void DeviceSet::close_later(int index, std::string why) {
  auto it = devices_.find(index);
  if (it == devices_.end() || it->second->closing) return;
  it->second->closing = true;
  it->second->watch->watch(false, false);  // no more callbacks for it
  loop_.defer([this, index, why = std::move(why)] {
    auto it2 = devices_.find(index);
    if (it2 == devices_.end()) return;
    spdlog::info("{}: closing: {}", it2->second->view.name, why);
    devices_.erase(it2);
    if (on_change_) on_change_();
  });
}

void DeviceSet::pause_reading(bool paused) {
  if (paused == paused_) return;
  paused_ = paused;
  for (auto& [index, d] : devices_) {
    if (!d->closing) d->watch->watch(!paused, false);
  }
}

std::vector<const DeviceView*> DeviceSet::views() const {
  std::vector<const DeviceView*> out;
  out.reserve(devices_.size());
  for (const auto& [index, dev] : devices_) {
    if (!dev->closing) out.push_back(&dev->view);
  }
  return out;
}

}  // namespace rdma_eventd::daemon
