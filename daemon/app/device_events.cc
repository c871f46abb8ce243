// DeviceSet: reading a device's async events, fatal errors, and the records the set makes
// itself about devices.
#include <spdlog/spdlog.h>

#include <cstring>

#include "app/device_set.h"
#include "app/watched_device.h"
#include "core/clock.h"

namespace rdma_eventd::daemon {
namespace {

std::string_view what_name(QueryFailure::What w) {
  switch (w) {
    case QueryFailure::What::kPort:
      return "port attributes";
    case QueryFailure::What::kGids:
      return "GID table";
    case QueryFailure::What::kPkeys:
      return "P_Key table";
  }
  return "?";
}

}  // namespace

void DeviceSet::on_readable(WatchedDevice& dev) {
  batch_.clear();
  int read_error = 0;
  bool failed = false;
  while (batch_.size() < kMaxBatch) {
    RawEvent ev;
    const auto r = dev.context->read_event(ev, &read_error);
    if (r == verbs::Context::ReadResult::kEmpty) break;
    if (r == verbs::Context::ReadResult::kError) {
      failed = true;
      break;
    }
    batch_.push_back(ev);
    ++stats_.events_read;
    ++stats_.events_acked;
  }
  if (!batch_.empty()) {
    ++stats_.batches;
    BatchOutcome out = enrich_batch(dev.view, batch_, *dev.context, stamper_, realtime_us());
    log_query_failures(dev, out.failures);
    if (out.device_fatal) handle_fatal(dev, out.records);
    publish_(out.records);
  }
  if (failed) {
    // The kernel's async fd never fails; if it does anyway, reading it again would spin.
    spdlog::error("{}: reading async events failed: {}", dev.view.name,
                  read_error ? std::strerror(read_error) : "end of the event stream");
    close_later(dev.context->entry().index, "its async event stream failed");
  }
}

// A DEVICE_FATAL ends the device's event stream, for one of two reasons. The device is being
// removed: the kernel unregisters it first (it is no longer listed) and tells each context with
// a last DEVICE_FATAL (element 0); that is a removal, published as device_removed whether udev
// or the event says it first. Or the device failed (firmware, hardware) and is still
// registered: device_fatal, and the device is reopened once it works again (a driver reset
// re-registers it), with device_recovered.
void DeviceSet::handle_fatal(WatchedDevice& dev, std::vector<Record>& records) {
  const int index = dev.context->entry().index;
  // A failed list says nothing about the device: take the event at its word.
  const bool still_listed = catalog_.scan() != 0 || listed(index) != nullptr;
  for (Record& r : records) {
    if (r.event != EventKind::kDeviceFatal) continue;
    if (!still_listed) {
      stamper_.restamp_as(r, EventKind::kDeviceRemoved);
      r.event_type = -1;
      r.port = 0;
      continue;
    }
    if (down_.size() >= kMaxDownDevices) {
      spdlog::warn("{}: forgetting that it is down: more than {} devices are", down_.front().name,
                   kMaxDownDevices);
      down_.pop_front();
    }
    down_.push_back(
        DownDevice{dev.view.node_guid, dev.view.name, index, r.time_us, r.seq, dev.view, false});
    break;
  }
  if (still_listed) {
    spdlog::error("{}: fatal error; closing it, reopening it once it works again", dev.view.name);
    // The first retry comes once the context is closed (deferred, below).
    Pending& p = pending_[index];
    p.delay = kRetryFirst;
    p.next = std::chrono::steady_clock::now() + kRetryFirst;
    schedule_retry();
    close_later(index, "DEVICE_FATAL");
  } else {
    spdlog::info("{}: removed (its event stream ended with DEVICE_FATAL); closing it",
                 dev.view.name);
    close_later(index, "removed");
  }
}

void DeviceSet::log_query_failures(WatchedDevice& dev, const std::vector<QueryFailure>& failures) {
  for (const auto& f : failures) {
    ++stats_.query_failures;
    auto&& logged = dev.query_error_logged[static_cast<size_t>(f.what)];
    if (logged) continue;
    logged = true;
    spdlog::warn("{}: querying the {}{} failed: {}; records carry the last known state",
                 dev.view.name, what_name(f.what),
                 f.port ? " of port " + std::to_string(f.port) : std::string(),
                 std::strerror(f.error));
  }
}

void DeviceSet::emit(std::vector<Record>& out, Record r, int64_t time_us) {
  stamper_.stamp(r, time_us);
  out.push_back(std::move(r));
}

Record DeviceSet::device_record(EventKind kind, const DeviceView& view) const {
  Record r;
  r.event = kind;
  r.event_type = -1;
  r.device = view.name;
  r.node_guid = format_guid(view.node_guid);
  r.port = 0;
  return r;
}

void DeviceSet::emit_port_states(std::vector<Record>& out, const DeviceView& now,
                                 const DeviceView* before, int64_t time_us) {
  for (uint32_t p = 1; p <= now.num_ports(); ++p) {
    Record r = device_record(EventKind::kPortState, now);
    r.port = p;
    r.port_info = now.ports[p - 1].info;
    // "changes" against the state known before the device went down; none for a new device.
    if (before && p <= before->num_ports()) r.previous = before->ports[p - 1].info;
    emit(out, std::move(r), time_us);
  }
}

}  // namespace rdma_eventd::daemon
