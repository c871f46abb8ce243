// Counter reads off the event loop (docs/health.md, "Link quality"): on mlx5 each read of
// counters/ is a firmware command that waits up to the driver's command timeout (60 s), and a
// firmware that stopped answering makes every read wait that long. The loop must not: reads run
// in a pool of threads and hand their values back to the loop through an eventfd, so other
// devices' events, and their reads, go on meanwhile.
//
// A job waits for an idle thread, and a thread is started when none is idle: one read per device
// at a time is the caller's rule (LinkHealthMonitor's in-flight guard), so the threads are at
// most as many as the devices read at once, and a hung read holds one thread, never the others.
// Threads are kept once started (no thread per read: the idle daemon's wakeups stay its timer's
// and the reads' hand-backs). A read blocked in the kernel cannot be cancelled: the threads are
// detached, hold only the shared state, and a result is dropped when the worker is gone by the
// time it returns (the daemon stopping).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/counter_width.h"
#include "core/link_quality.h"
#include "counters/sysfs_counters.h"
#include "loop/event_loop.h"
#include "rdma_eventd/internal/unique_fd.h"

namespace rdma_eventd::daemon {

// One read of some ports of one device, and what it found.
struct CounterReadJob {
  struct Port {
    uint32_t number = 0;
    std::vector<std::string> names;  // as CounterValue::name
    bool link_up = false;            // the port as it was when the read was asked for
    LinkRate rate;
    // A RoCE port's netdev: its PHY counters are read too (netlink/ethtool_reader), as the
    // kFecUncorrectable, ... values; "" for an InfiniBand port or one whose netdev is unknown.
    bool ethernet = false;
    std::string netdev;
    int phy_error = 0;  // why its PHY counters were not read (an errno), 0 when they were
    std::string phy_error_what;
    std::vector<CounterValue> values;  // read: all of names, or those before the error
  };
  std::string device;
  std::string path;                              // the device's sysfs directory
  CounterDriver driver = CounterDriver::kOther;  // whose hw_counters/ widths it has
  uint64_t generation = 0;  // the caller's: a device opened again since drops the result
  int64_t started_mono_us = 0;
  std::vector<Port> ports;
  // The first read that failed, and the port it was of (ports after it are not read).
  std::optional<CounterReadError> error;
  uint32_t error_port = 0;

  // The file being read now, for a read that does not return; "" between files.
  std::string reading() const;
  void set_reading(std::string file);

 private:
  mutable std::mutex reading_mutex_;
  std::string reading_;
};

class CounterReadWorker {
 public:
  using Done = std::function<void(std::shared_ptr<CounterReadJob>)>;
  // `done` runs on the loop, once for each job that returns while the worker lives.
  // `ethtool_stand_in`: rdma-sim's generic netlink stand-in for the PHY counters ("" for the
  // kernel's).
  CounterReadWorker(EventLoop& loop, Done done, std::string ethtool_stand_in = {});
  ~CounterReadWorker();
  CounterReadWorker(const CounterReadWorker&) = delete;
  CounterReadWorker& operator=(const CounterReadWorker&) = delete;

  // Reads the job's ports in a thread of the pool. False when no thread was idle and none could
  // be started (the job is then not read; the caller tries again later).
  bool start(std::shared_ptr<CounterReadJob> job);
  size_t in_flight() const { return in_flight_; }

 private:
  // What the threads share with the loop: it outlives the worker while a thread still reads.
  struct Shared {
    std::mutex mutex;
    std::condition_variable wake;  // a job to read, or closed
    bool closed = false;           // the worker is gone: threads end, results are dropped
    size_t idle = 0;
    std::deque<std::shared_ptr<CounterReadJob>> todo;
    std::string ethtool_stand_in;
    std::vector<std::shared_ptr<CounterReadJob>> done;
    internal::UniqueFd event;
  };
  static void serve(const std::shared_ptr<Shared>& shared);
  static void read(CounterReadJob& job, const std::string& ethtool_stand_in);
  void on_readable();

  std::shared_ptr<Shared> shared_;
  Done done_;
  size_t in_flight_ = 0;
  std::unique_ptr<IoWatch> watch_;
};

}  // namespace rdma_eventd::daemon
