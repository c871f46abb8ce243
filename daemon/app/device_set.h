// The devices the daemon watches, and their life: the devices open at start, those that come
// and go (hot-plug, driver reloads), renames, and fatal errors with their recovery. Every
// change it sees becomes records (device_added, device_removed, device_renamed,
// device_recovered, port_state), handed to the daemon's publish function like the records of
// the devices' async events.
//
// What to do about each change is DeviceLifecycle's (core/, pure and unit-tested); DeviceSet
// carries it out: it lists and opens devices through a DeviceCatalog, keeps each open device's
// watch on the loop, reads its events in batches, closes devices (by deferred work when it is
// their own callback), stamps and publishes records, logs, and arms the retry timer.
//
// Its one operation on the device list is resync(). Whatever tells it that something may have
// changed (a udev event, an overflowed udev monitor, the fallback rescan timer, SIGUSR1, a
// retry) calls resync; stale or repeated hints publish nothing.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/config.h"
#include "core/clock.h"
#include "core/device_lifecycle.h"
#include "core/device_view.h"
#include "core/devx_status.h"
#include "core/enricher.h"
#include "core/stamper.h"
#include "loop/event_loop.h"

namespace rdma_eventd::daemon {

struct DeviceStats {
  uint64_t events_read = 0;
  uint64_t events_acked = 0;  // as the devices count them, where each ack is made
  uint64_t batches = 0;
  uint64_t query_failures = 0;
  uint64_t resyncs = 0;
};

// A device's DEVX vendor events as the status reply shows them.
struct DevxReport {
  DevxStatus status;
  uint64_t events_read = 0;
  uint64_t events_lost = 0;  // EOVERFLOW reads
};

class DeviceSet {
 public:
  // Takes the records: the daemon moves them out (they become shared with the journal writer).
  using Publish = std::function<void(std::vector<Record>&)>;
  using Mode = ResyncMode;

  DeviceSet(EventLoop& loop, RecordStamper& stamper, std::unique_ptr<DeviceCatalog> catalog,
            const Clock& clock, Publish publish);
  ~DeviceSet();
  DeviceSet(const DeviceSet&) = delete;
  DeviceSet& operator=(const DeviceSet&) = delete;

  void resync(Mode mode, std::string_view why);

  void set_filter(const DeviceFilter& filter);
  // Called after the set of watched devices may have changed (a resync, a device closed).
  void on_change(std::function<void()> fn) { on_change_ = std::move(fn); }

  // Stops (true) or restarts reading device events; the kernel queues them meanwhile.
  void pause_reading(bool paused);

  size_t watched() const { return devices_.size(); }
  // Devices listed and selected that could not be opened yet (a retry is scheduled).
  size_t waiting() const { return lifecycle_.waiting(); }
  std::vector<const DeviceView*> views() const { return lifecycle_.views(); }
  const DeviceStats& stats() const { return stats_; }
  // The sysfs directory of a watched device by its current name ("" when none is watched).
  std::string ibdev_path(std::string_view name) const;
  // The driver of a watched device's parent (DeviceEntry::parent_driver; "" when none is
  // watched).
  std::string parent_driver(std::string_view name) const;
  // The watched devices whose removal the kernel does not announce to their users
  // (core/removal_notice.h), in index order: name, then why.
  std::vector<std::pair<std::string, std::string>> unannounced_removals() const;
  // Each watched device's DEVX state and counters, by device name.
  std::map<std::string, DevxReport> devx_reports() const;

 private:
  struct WatchedDevice;

  // A watched device by its current name, not queued to close; nullptr when none is.
  const DeviceEntry* watched_entry(std::string_view name) const;
  void on_readable(WatchedDevice& dev);
  // device_devx.cc: the DEVX event channel.
  void watch_devx(WatchedDevice& dev);
  void on_devx_readable(WatchedDevice& dev);
  void stop_devx(WatchedDevice& dev, DevxState state, std::string reason);
  void process_batch(WatchedDevice& dev);
  FatalMeaning meaning_of_fatal(int index);
  void open_device(const DeviceEntry& entry, Mode mode, Instant now, std::vector<Record>& out);
  void close_later(int index, std::string why);
  void schedule_retry(Instant now);
  void log_query_failures(WatchedDevice& dev, const std::vector<QueryFailure>& failures);
  void stamp(std::vector<Record>& records, Instant now);
  static void log(const std::vector<LogNote>& notes);

  EventLoop& loop_;
  RecordStamper& stamper_;
  const Clock& clock_;
  Publish publish_;
  std::function<void()> on_change_;
  DeviceLifecycle lifecycle_;
  std::unique_ptr<DeviceCatalog> catalog_;                 // outlives the devices it opened
  std::map<int, std::unique_ptr<WatchedDevice>> devices_;  // by device index
  Timer retry_;
  std::vector<RawEvent> batch_;
  // The last batch's records, once published: the next batch is built in them (enrich_batch).
  std::vector<Record> spare_records_;
  EnrichScratch enrich_scratch_;  // enrich_batch's working memory, reused batch to batch
  DeviceStats stats_;
  bool paused_ = false;
};

// Largest batch of events read from one device before they are enriched and published.
// Bounds memory and the loop's turn length under a storm; every batch costs at most one
// query per port (and one GID table / P_Key table read when those changed).
inline constexpr size_t kMaxBatch = 256;

}  // namespace rdma_eventd::daemon
