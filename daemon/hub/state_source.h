// What the subscriber hub may ask of the rest of the daemon, for snapshots and status: the
// stream position, the cached device views and the counters. The Daemon implements it; unit
// tests can fake it.
#pragma once

#include <cstdint>
#include <vector>

#include "core/device_view.h"

namespace rdma_eventd::daemon {

struct DaemonCounters {
  uint64_t events_read = 0;
  uint64_t events_acked = 0;
  uint64_t records = 0;
  uint64_t batches = 0;
  uint64_t query_failures = 0;
  uint64_t resyncs = 0;  // comparisons of the device list with the watched devices
  bool udev = false;     // hot-plug from udev events (false: periodic rescans)
  uint64_t udev_events = 0;
  uint64_t udev_overflows = 0;   // the udev monitor lost events (each one resynchronized)
  uint64_t devices_waiting = 0;  // listed but not openable yet: retried with backoff
  bool journal_enabled = false;
  uint64_t journal_written = 0;
  uint64_t journal_failed = 0;
  uint64_t journal_dropped = 0;
  uint64_t journal_queued = 0;
  uint64_t journal_waits = 0;   // times device reading paused for the journal to catch up
  uint64_t journal_stalls = 0;  // times journald stopped taking entries and was not waited for
};

class StateSource {
 public:
  virtual ~StateSource() = default;
  // The seq of the last record published (0 before the first).
  virtual uint64_t last_seq() const = 0;
  // Every open device's view, in a stable order (by device index).
  virtual std::vector<const DeviceView*> device_views() const = 0;
  virtual DaemonCounters counters() const = 0;
};

}  // namespace rdma_eventd::daemon
