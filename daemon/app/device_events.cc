// DeviceSet: reading a device's async events, and a device's fatal error.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <cassert>
#include <cstring>

#include "app/device_set.h"
#include "app/watched_device.h"
#include "rdma_eventd/internal/enum_names.h"

namespace rdma_eventd::daemon {
namespace {

std::string_view what_name(QueryFailure::What w) {
  // Indexed by QueryFailure::What.
  static constexpr std::array<std::string_view, 3> kNames = {"port attributes", "GID table",
                                                             "P_Key table"};
  return internal::enum_name(kNames, w, "?");
}

bool is_device_fatal(const RawEvent& e) {
  return e.type == event_type::kDeviceFatal;
}

}  // namespace

void DeviceSet::on_readable(WatchedDevice& dev) {
  OpenDevice& device = *dev.device;
  batch_.clear();
  int read_error = 0;
  bool failed = false;
  const uint64_t acked_before = device.events_acked();
  while (batch_.size() < kMaxBatch) {
    RawEvent ev;
    const auto r = device.read_event(ev, &read_error);
    if (r == OpenDevice::ReadResult::kEmpty) break;
    if (r == OpenDevice::ReadResult::kError) {
      failed = true;
      break;
    }
    batch_.push_back(ev);
    ++stats_.events_read;
  }
  stats_.events_acked += device.events_acked() - acked_before;
  if (!batch_.empty()) process_batch(dev);
  if (failed) {
    // The kernel's async fd never fails; if it does anyway, reading it again would spin.
    spdlog::error("{}: reading async events failed: {}", device.entry().name,
                  read_error ? std::strerror(read_error) : "end of the event stream");
    close_later(device.entry().index, "its async event stream failed");
  }
}

// A DEVICE_FATAL ends the device's event stream, for one of two reasons: the device failed
// (device_fatal; it is reopened once it works again, with device_recovered) or it is being
// removed (device_removed, whether udev or the event says it first). Which one is decided
// before the records are built and stamped.
void DeviceSet::process_batch(WatchedDevice& dev) {
  ++stats_.batches;
  const int index = dev.device->entry().index;
  const Instant now = clock_.now();
  const bool fatal = std::ranges::any_of(batch_, is_device_fatal);
  const FatalMeaning meaning = fatal ? meaning_of_fatal(index) : FatalMeaning::kFailure;
  DeviceView* view = lifecycle_.view(index);
  assert(view);  // open and watched: the lifecycle knows it
  BatchOutcome out = enrich_batch(*view, batch_, *dev.device, meaning, std::move(spare_records_),
                                  &enrich_scratch_);
  log_query_failures(dev, out.failures);
  stamp(out.records, now);
  if (fatal) {
    auto first = std::ranges::find(out.records, EventKind::kDeviceFatal, &Record::event);
    const uint64_t fatal_seq = first != out.records.end() ? first->seq : 0;
    log(lifecycle_.device_fatal(index, meaning, fatal_seq, now));
    close_later(index, meaning == FatalMeaning::kRemoval ? "removed" : "DEVICE_FATAL");
    schedule_retry(now);
  }
  publish_(out.records);
  spare_records_ = std::move(out.records);
}

// The event cannot tell a failure from a removal; the device list can (the kernel unlists a
// device it removes before it tells the contexts). So the list is read here, inside the
// device's callback: one ibv_get_device_list per DEVICE_FATAL, which ends the device's event
// stream and so comes at most once per open.
FatalMeaning DeviceSet::meaning_of_fatal(int index) {
  const int err = catalog_->scan();
  return DeviceLifecycle::meaning_of_fatal(index, Listing{err, catalog_->devices()});
}

void DeviceSet::log_query_failures(WatchedDevice& dev, const std::vector<QueryFailure>& failures) {
  for (const auto& f : failures) {
    ++stats_.query_failures;
    bool& logged = dev.query_error_logged[static_cast<size_t>(f.what)];
    if (logged) continue;
    logged = true;
    spdlog::warn("{}: querying the {}{} failed: {}; records carry the last known state",
                 dev.device->entry().name, what_name(f.what),
                 f.port ? " of port " + std::to_string(f.port) : std::string(),
                 std::strerror(f.error));
  }
}

}  // namespace rdma_eventd::daemon
