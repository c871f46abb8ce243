// The devices the daemon watches, and their life: the devices open at start, those that come
// and go (hot-plug, driver reloads), renames, and fatal errors with their recovery. Every
// change it sees becomes records (device_added, device_removed, device_renamed,
// device_recovered, port_state), handed to the daemon's publish function like the records of
// the devices' async events.
//
// Its one operation on the device list is resync(): list the devices, compare with what is
// watched, act on and publish the differences only. Whatever tells it that something may have
// changed (a udev event, an overflowed udev monitor, the fallback rescan timer, SIGUSR1, a
// retry) calls resync; stale or repeated hints publish nothing.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "core/decode.h"
#include "core/device_view.h"
#include "core/enricher.h"
#include "core/stamper.h"
#include "loop/event_loop.h"
#include "verbs/verbs.h"

namespace rdma_eventd::daemon {

struct DeviceStats {
  uint64_t events_read = 0;
  uint64_t events_acked = 0;
  uint64_t batches = 0;
  uint64_t query_failures = 0;
  uint64_t resyncs = 0;
  uint64_t open_failures = 0;
};

class DeviceSet {
 public:
  using Publish = std::function<void(std::vector<Record>&)>;

  DeviceSet(EventLoop& loop, RecordStamper& stamper, Publish publish);
  ~DeviceSet();
  DeviceSet(const DeviceSet&) = delete;
  DeviceSet& operator=(const DeviceSet&) = delete;

  // What a resync is for: at start and after a configuration reload the devices it opens or
  // closes are not news; otherwise each appearance and disappearance is published.
  enum class Mode { kStartup, kReload, kChange };
  void resync(Mode mode, std::string_view why);

  void set_filter(const DeviceFilter& filter) { filter_ = filter; }
  // Called after the set of watched devices may have changed (a resync, a device closed).
  void on_change(std::function<void()> fn) { on_change_ = std::move(fn); }

  // Stops (true) or restarts reading device events; the kernel queues them meanwhile.
  void pause_reading(bool paused);
  bool reading_paused() const { return paused_; }

  size_t watched() const { return devices_.size(); }
  // Devices listed and selected that could not be opened yet (a retry is scheduled).
  size_t waiting() const { return pending_.size(); }
  std::vector<const DeviceView*> views() const;
  const DeviceStats& stats() const { return stats_; }

 private:
  struct WatchedDevice;
  // A device that reported DEVICE_FATAL while still registered: kept until it works again,
  // to publish device_recovered with the downtime and what changed meanwhile.
  struct DownDevice {
    uint64_t node_guid = 0;
    std::string name;
    int index = -1;
    int64_t since_us = 0;
    uint64_t fatal_seq = 0;
    DeviceView view;
    bool removal_published = false;
  };
  // A listed device that is to be opened again (after a fatal error) or failed to open,
  // retried with exponential backoff.
  struct Pending {
    std::chrono::steady_clock::duration delay{};
    std::chrono::steady_clock::time_point next{};
    uint64_t attempts = 0;  // failed opens
  };

  void on_readable(WatchedDevice& dev);
  void handle_fatal(WatchedDevice& dev, std::vector<Record>& records);
  void open_device(const verbs::DeviceEntry& entry, Mode mode, std::vector<Record>& out);
  void close_later(int index, std::string why);
  void note_open_failure(const verbs::DeviceEntry& entry, int error);
  void schedule_retry();
  const verbs::DeviceEntry* listed(int index) const;
  DownDevice* find_down(const verbs::DeviceEntry& entry);
  void log_query_failures(WatchedDevice& dev, const std::vector<QueryFailure>& failures);
  void log_scan_error(int err);

  // Records the daemon makes itself, stamped in the order they are emitted.
  void emit(std::vector<Record>& out, Record r, int64_t time_us);
  Record device_record(EventKind kind, const DeviceView& view) const;
  void emit_port_states(std::vector<Record>& out, const DeviceView& now, const DeviceView* before,
                        int64_t time_us);

  EventLoop& loop_;
  RecordStamper& stamper_;
  Publish publish_;
  std::function<void()> on_change_;
  DeviceFilter filter_;
  verbs::DeviceCatalog catalog_;
  std::map<int, std::unique_ptr<WatchedDevice>> devices_;  // by device index
  std::deque<DownDevice> down_;
  std::map<int, Pending> pending_;  // by device index
  Timer retry_;
  std::vector<RawEvent> batch_;
  DeviceStats stats_;
  bool paused_ = false;
  int last_scan_error_ = -1;  // what the last "no devices" message said, to say it once
};

// Largest batch of events read from one device before they are enriched and published.
// Bounds memory and the loop's turn length under a storm; every batch costs at most one
// query per port (and one GID table / P_Key table read when those changed).
inline constexpr size_t kMaxBatch = 256;

// Devices remembered as down after a fatal error, waiting to recover; the oldest is forgotten
// beyond this (a host has a handful of RDMA devices).
inline constexpr size_t kMaxDownDevices = 64;

// Reopening a device that failed to open: the first retry after kRetryFirst, each next one
// twice as late, at most kRetryMax apart.
inline constexpr auto kRetryFirst = std::chrono::milliseconds(100);
inline constexpr auto kRetryMax = std::chrono::seconds(30);

}  // namespace rdma_eventd::daemon
