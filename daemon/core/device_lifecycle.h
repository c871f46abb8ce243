// The life of the devices the daemon watches, as pure logic: which devices to open and close,
// what each change publishes, when to retry a device that cannot be opened. It sees the device
// list, the outcome of every open and every DEVICE_FATAL, and the time, all passed in; it
// answers with the devices to open, close or rename, unstamped records, and notes for the log.
// DeviceSet (app/) does the rest: lists and opens devices through a DeviceCatalog, keeps their
// watches, stamps and publishes the records, logs the notes and arms the retry timer.
//
// Its one operation on the device list is resync(): compare the list with the open devices and
// act on the differences only, so stale, repeated or lost hints publish nothing wrong.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/device_view.h"
#include "core/enricher.h"

namespace rdma_eventd::daemon {

// A device list: the devices, or the errno of a scan that failed (its entries say nothing).
struct Listing {
  int error = 0;
  std::span<const DeviceEntry> entries;
};

// A line the caller logs. Library code does not log (docs/architecture.md § Errors).
struct LogNote {
  enum class Level { kDebug, kInfo, kWarning, kError };
  Level level = Level::kInfo;
  std::string text;
  bool operator==(const LogNote&) const = default;
};

// What a resync is for: at start and after a configuration reload the devices it opens or
// closes are not news; otherwise each appearance and disappearance is published.
enum class ResyncMode { kStartup, kReload, kChange };

// A resync's first step. When `listed`, the caller applies `renamed`, then `close`, then opens
// each device of `open` in order and reports it with opened() or open_failed(); the records of
// those come after `records`.
struct ResyncStep {
  bool listed = false;               // false: the scan failed and nothing changed
  std::vector<Record> records;       // removals and renames, unstamped
  std::vector<DeviceEntry> renamed;  // open devices now known by this entry's name
  std::vector<int> close;            // indexes of open devices to close at once
  std::vector<DeviceEntry> open;     // listed, selected, not open
  std::vector<LogNote> notes;
};

// What an open (or a failed one) publishes and says.
struct OpenStep {
  std::vector<Record> records;  // unstamped
  std::vector<LogNote> notes;
};

class DeviceLifecycle {
 public:
  using Selector = std::function<bool(const DeviceEntry&)>;

  // Which listed devices the daemon watches (devices.include/exclude); all until set.
  void set_selector(Selector selects) { selects_ = std::move(selects); }

  // `why`: what led to it, for the log.
  ResyncStep resync(const Listing& listing, std::string_view why);
  // `view`: the device's view as loaded just after the open (name, node GUID, ports).
  OpenStep opened(const DeviceEntry& entry, DeviceView view, ResyncMode mode, Instant now);
  OpenStep open_failed(const DeviceEntry& entry, int error, Instant now);

  // A device reported DEVICE_FATAL. Which kind it is comes from the device list, taken after
  // the event (the kernel unlists a device it removes before it tells the contexts): still
  // listed, it failed; no longer listed, it is being removed. A failed list says nothing
  // about the device: the event is taken at its word.
  static FatalMeaning meaning_of_fatal(int index, const Listing& listing);
  // Then, once its records are stamped (`fatal_seq`: the first device_fatal record's seq, made
  // at `now`), the device is closing; a failed one is remembered as down (to publish
  // device_recovered) and retried from kRetryFirst on.
  std::vector<LogNote> device_fatal(int index, FatalMeaning meaning, uint64_t fatal_seq,
                                    Instant now);

  // An open device is being closed by deferred work (after DEVICE_FATAL or a failed event
  // stream), then is closed. Until then no resync touches it or opens it again.
  void closing(int index);
  void closed(int index);

  // The view of an open device, nullptr when it is not open.
  DeviceView* view(int index);
  bool is_closing(int index) const;
  // The views of the open devices that are not closing, by index.
  std::vector<const DeviceView*> views() const;
  // Listed, selected devices that wait to be opened (after a failed open or a fatal error).
  size_t waiting() const { return retries_.size(); }
  // When the next retry is due (monotonic µs), or none while no device waits.
  std::optional<int64_t> next_retry_us() const;

 private:
  struct OpenState {
    DeviceView view;
    bool closing = false;
  };
  // A device that reported DEVICE_FATAL while still listed: kept until it works again, to
  // publish device_recovered with the downtime and what changed meanwhile.
  struct DownDevice {
    uint64_t node_guid = 0;
    std::string name;
    int index = -1;
    Instant since;  // when its device_fatal record was made
    uint64_t fatal_seq = 0;
    DeviceView view;
    bool removal_published = false;
  };
  struct Retry {
    int64_t delay_us = 0;
    int64_t next_us = 0;    // monotonic
    uint64_t attempts = 0;  // failed opens
  };

  bool selects(const DeviceEntry& e) const { return !selects_ || selects_(e); }
  DownDevice* find_down(const DeviceEntry& entry);
  void note_scan_result(int code, std::vector<LogNote>& notes);

  Selector selects_;
  std::map<int, OpenState> open_;  // by device index
  std::deque<DownDevice> down_;
  std::map<int, Retry> retries_;  // by device index
  int last_scan_code_ = -1;       // what the last "no devices" message said, to say it once
};

// Devices remembered as down after a fatal error, waiting to recover; the oldest is forgotten
// beyond this (a host has a handful of RDMA devices).
inline constexpr size_t kMaxDownDevices = 64;

// Reopening a device that failed to open: the first retry after kRetryFirst, each next one
// twice as late, at most kRetryMax apart.
inline constexpr auto kRetryFirst = std::chrono::milliseconds(100);
inline constexpr auto kRetryMax = std::chrono::seconds(30);

}  // namespace rdma_eventd::daemon
