#include "core/device_lifecycle.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace rdma_eventd::daemon {
namespace {

using Level = LogNote::Level;

constexpr int64_t kRetryFirstUs = std::chrono::microseconds(kRetryFirst).count();
constexpr int64_t kRetryMaxUs = std::chrono::microseconds(kRetryMax).count();

// "Last scan" codes besides errnos, for saying each state once.
constexpr int kNoDevices = 0;
constexpr int kNoneSelected = -2;

const DeviceEntry* find_listed(const Listing& listing, int index) {
  for (const auto& e : listing.entries) {
    if (e.index == index) return &e;
  }
  return nullptr;
}

// One port_state record per port; "changes" against the state known before the device went
// down, none for a new device.
void add_port_states(std::vector<Record>& out, const DeviceView& now, const DeviceView* before) {
  for (uint32_t p = 1; p <= now.num_ports(); ++p) {
    Record r = device_record(EventKind::kPortState, now);
    r.port = p;
    r.port_info = now.ports[p - 1].info;
    if (before && p <= before->num_ports()) r.previous = before->ports[p - 1].info;
    out.push_back(std::move(r));
  }
}

std::string plural(uint64_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

}  // namespace

ResyncStep DeviceLifecycle::resync(const Listing& listing, std::string_view why) {
  ResyncStep step;
  if (listing.error != 0) {
    note_scan_result(listing.error, step.notes);
    return step;
  }
  step.listed = true;
  auto say = [&step](Level level, std::string text) {
    step.notes.push_back({level, std::move(text)});
  };

  // Open devices first: gone, renamed, or no longer selected. A device that is gone is closed
  // at once: a driver that cannot disassociate its users holds its removal until every one of
  // them has closed the device.
  for (auto it = open_.begin(); it != open_.end();) {
    const int index = it->first;
    DeviceView& view = it->second.view;
    if (it->second.closing) {
      ++it;
      continue;
    }
    const DeviceEntry* e = find_listed(listing, index);
    if (!e) {
      say(Level::kInfo, view.name + ": removed (" + std::string(why) + "); closing it");
      step.records.push_back(device_removed_record(view));
      step.close.push_back(index);
      it = open_.erase(it);
      continue;
    }
    if (e->name != view.name) {
      Record r = device_record(EventKind::kDeviceRenamed, view);
      r.old_name = view.name;
      r.device = e->name;
      say(Level::kInfo, view.name + ": renamed to " + e->name + " (" + std::string(why) + ")");
      view.name = e->name;
      step.renamed.push_back(*e);
      step.records.push_back(std::move(r));
    }
    if (!selects(*e)) {
      say(Level::kInfo, e->name + ": excluded by the configuration now, closing it");
      step.close.push_back(index);
      it = open_.erase(it);
      continue;
    }
    ++it;
  }

  // A device that is down after a fatal error and leaves the list: its removal is news once.
  for (DownDevice& down : down_) {
    if (down.removal_published || find_listed(listing, down.index)) continue;
    down.removal_published = true;
    say(Level::kInfo, down.name + ": removed while down after its fatal error");
    step.records.push_back(device_removed_record(down.view));
  }

  // Retries only for devices still listed.
  std::erase_if(retries_, [&](const auto& r) { return !find_listed(listing, r.first); });

  size_t selected = 0;
  for (const auto& e : listing.entries) {
    if (!selects(e)) {
      say(Level::kDebug, e.name + ": left alone (not selected by devices.include/exclude)");
      continue;
    }
    ++selected;
    // A device still closing after its fatal error is reopened by the retry, once it is gone.
    if (!open_.contains(e.index)) step.open.push_back(e);
  }
  if (selected == 0 && open_.empty()) {
    note_scan_result(listing.entries.empty() ? kNoDevices : kNoneSelected, step.notes);
  } else {
    last_scan_code_ = -1;
  }
  return step;
}

void DeviceLifecycle::note_scan_result(int code, std::vector<LogNote>& notes) {
  if (code == last_scan_code_) return;
  last_scan_code_ = code;
  switch (code) {
    case kNoDevices:
      notes.push_back(
          {Level::kWarning, "no RDMA devices found; waiting for devices (SIGUSR1 rescans)"});
      return;
    case kNoneSelected:
      notes.push_back(
          {Level::kWarning, "no RDMA device is selected by the configuration; waiting"});
      return;
    case ENOSYS:
      notes.push_back({Level::kWarning,
                       "no RDMA support in the kernel (ENOSYS); waiting for devices (SIGUSR1 "
                       "rescans)"});
      return;
    default:
      notes.push_back({Level::kError, std::string("cannot list RDMA devices: ") +
                                          std::strerror(code) + "; waiting (SIGUSR1 rescans)"});
  }
}

DeviceLifecycle::DownDevice* DeviceLifecycle::find_down(const DeviceEntry& entry) {
  // The kernel gives a re-registered device a new index; its node GUID stays.
  for (DownDevice& d : down_) {
    if (entry.node_guid != 0 ? d.node_guid == entry.node_guid : d.name == entry.name) return &d;
  }
  return nullptr;
}

OpenStep DeviceLifecycle::opened(const DeviceEntry& entry, DeviceView view, ResyncMode mode,
                                 Instant now) {
  OpenStep step;
  if (auto r = retries_.find(entry.index); r != retries_.end()) {
    if (r->second.attempts > 0) {
      step.notes.push_back({Level::kInfo, entry.name + ": opened after " +
                                              plural(r->second.attempts, "failed attempt")});
    }
    retries_.erase(r);
  }
  if (DownDevice* down = find_down(entry)) {
    Record r = device_record(EventKind::kDeviceRecovered, view);
    r.down_since_us = down->since.wall_us;
    r.fatal_seq = down->fatal_seq;
    r.downtime_ms =
        static_cast<uint64_t>(std::max<int64_t>(0, now.mono_us - down->since.mono_us) / 1000);
    step.notes.push_back({Level::kInfo, entry.name + ": recovered after " +
                                            std::to_string(r.downtime_ms) + " ms down"});
    step.records.push_back(std::move(r));
    add_port_states(step.records, view, &down->view);
    down_.erase(down_.begin() + (down - &down_.front()));
  } else if (mode == ResyncMode::kChange) {
    step.records.push_back(device_record(EventKind::kDeviceAdded, view));
    add_port_states(step.records, view, nullptr);
  }
  open_[entry.index] = OpenState{std::move(view), false};
  return step;
}

OpenStep DeviceLifecycle::open_failed(const DeviceEntry& entry, int error, Instant now) {
  OpenStep step;
  Retry& r = retries_[entry.index];
  r.delay_us = r.attempts == 0 ? kRetryFirstUs : std::min(r.delay_us * 2, kRetryMaxUs);
  r.next_us = now.mono_us + r.delay_us;
  if (r.attempts++ == 0) {
    step.notes.push_back({Level::kError, entry.name + ": cannot open: " + std::strerror(error) +
                                             "; retrying, at most every " +
                                             std::to_string(kRetryMax.count()) + " s"});
  }
  return step;
}

FatalMeaning DeviceLifecycle::meaning_of_fatal(int index, const Listing& listing) {
  if (listing.error != 0 || find_listed(listing, index)) return FatalMeaning::kFailure;
  return FatalMeaning::kRemoval;
}

std::vector<LogNote> DeviceLifecycle::device_fatal(int index, FatalMeaning meaning,
                                                   uint64_t fatal_seq, Instant now) {
  std::vector<LogNote> notes;
  auto it = open_.find(index);
  if (it == open_.end()) return notes;
  it->second.closing = true;
  const DeviceView& view = it->second.view;
  if (meaning == FatalMeaning::kRemoval) {
    notes.push_back(
        {Level::kInfo,
         view.name + ": removed (its event stream ended with DEVICE_FATAL); closing it"});
    return notes;
  }
  if (down_.size() >= kMaxDownDevices) {
    notes.push_back({Level::kWarning, down_.front().name +
                                          ": forgetting that it is down: more than " +
                                          std::to_string(kMaxDownDevices) + " devices are"});
    down_.pop_front();
  }
  down_.push_back(DownDevice{view.node_guid, view.name, index, now, fatal_seq, view, false});
  notes.push_back(
      {Level::kError, view.name + ": fatal error; closing it, reopening it once it works again"});
  // The first retry comes once the context is closed (by deferred work, before it is due).
  retries_[index] = Retry{kRetryFirstUs, now.mono_us + kRetryFirstUs, 0};
  return notes;
}

void DeviceLifecycle::closing(int index) {
  if (auto it = open_.find(index); it != open_.end()) it->second.closing = true;
}

void DeviceLifecycle::closed(int index) {
  open_.erase(index);
}

DeviceView* DeviceLifecycle::view(int index) {
  auto it = open_.find(index);
  return it == open_.end() ? nullptr : &it->second.view;
}

bool DeviceLifecycle::is_closing(int index) const {
  auto it = open_.find(index);
  return it != open_.end() && it->second.closing;
}

std::vector<const DeviceView*> DeviceLifecycle::views() const {
  std::vector<const DeviceView*> out;
  out.reserve(open_.size());
  for (const auto& [index, state] : open_) {
    if (!state.closing) out.push_back(&state.view);
  }
  return out;
}

std::optional<int64_t> DeviceLifecycle::next_retry_us() const {
  std::optional<int64_t> next;
  for (const auto& [index, r] : retries_)
    next = next ? std::min(*next, r.next_us) : r.next_us;
  return next;
}

}  // namespace rdma_eventd::daemon
