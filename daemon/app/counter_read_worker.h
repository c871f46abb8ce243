// Counter reads off the event loop (docs/health.md, "Link quality"): on mlx5 each read of
// counters/ is a firmware command that waits up to the driver's command timeout (60 s), and a
// firmware that stopped answering makes every read wait that long. The loop must not: reads run
// in a pool of threads and hand their values back to the loop through an eventfd, so other
// devices' events, and their reads, go on meanwhile.
//
// One thread reads the jobs queued, one after another, and hands their values back once the
// queue is empty: a timer's sweep of every device wakes one thread and the loop once, whatever
// the number of devices. A read that stalls must not hold the others: jobs left in the queue
// behind a read that has taken kStall get another thread (an idle one, or one started), and
// what was read before it is handed back then; a job queued while every thread in the queue is
// in such a read gets one at once. So the threads are at most one more than the reads that
// stall at once (one per device at a time is the caller's rule: LinkHealthMonitor's in-flight
// guard), and a hung read holds one thread, never the others. Threads are kept once started (no
// thread per read). A read blocked in the kernel cannot be cancelled: the threads are detached,
// hold only the shared state, and a result is dropped when the worker is gone by the time it
// returns (the daemon stopping).
#pragma once

#include <chrono>
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
    // CLOCK_MONOTONIC when its first file was opened (link_downed, where it is read): the
    // port_errs the loop read before then happened before its values.
    int64_t read_mono_us = 0;
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

  // Queues the job for a thread of the pool. False when no thread was reading or idle and none
  // could be started (the job is then not read; the caller tries again later).
  bool start(std::shared_ptr<CounterReadJob> job);
  size_t in_flight() const { return in_flight_; }

  // While one lives, start() queues without waking a thread; the last to go wakes one for all
  // (a sweep's jobs are read by one thread that wakes once).
  class Batch {
   public:
    explicit Batch(CounterReadWorker& worker) : worker_(worker) { ++worker_.batch_depth_; }
    ~Batch();
    Batch(const Batch&) = delete;
    Batch& operator=(const Batch&) = delete;

   private:
    CounterReadWorker& worker_;
  };

  // How long jobs may wait in the queue behind a read before another thread takes them: well
  // under the least read_deadline_s (1 s), so that no job is reported hung for having waited.
  static constexpr std::chrono::milliseconds kStall{250};

 private:
  // One thread of the pool, as the loop sees it.
  struct Reader {
    bool called = false;   // reading the queue, from its call until the queue is empty
    bool in_read = false;  // in a job's read, since busy_since
    std::chrono::steady_clock::time_point busy_since;
  };
  // What the threads share with the loop: it outlives the worker while a thread still reads.
  struct Shared {
    std::mutex mutex;
    std::condition_variable wake;  // a thread asked to read (calls > 0), or closed
    bool closed = false;           // the worker is gone: threads end, results are dropped
    size_t idle = 0;               // threads waiting to be called
    size_t calls = 0;              // idle threads called, not yet awake
    std::deque<Reader> readers;    // each thread's (a deque: a thread's stays where it is)
    std::deque<std::shared_ptr<CounterReadJob>> todo;
    std::string ethtool_stand_in;
    std::vector<std::shared_ptr<CounterReadJob>> done;
    internal::UniqueFd event;
  };
  static void serve(const std::shared_ptr<Shared>& shared, Reader* me);
  static void read(CounterReadJob& job, const std::string& ethtool_stand_in);
  // Whether a thread will take the next job queued soon: one called, or reading the queue and
  // not in a read that began kStall ago or more. Under shared_->mutex.
  bool queue_has_reader() const;
  // Calls an idle thread, or starts one, to read the queue when none will (queue_has_reader).
  // Under shared_->mutex. False when no thread could be started.
  bool call_thread();
  void wake_for_queue();  // wakes the threads called, and arms the stall timer
  void on_readable();
  void on_stall();
  void hand_back();

  std::shared_ptr<Shared> shared_;
  Done done_;
  size_t in_flight_ = 0;
  int batch_depth_ = 0;
  bool batch_queued_ = false;  // start() queued within a batch
  size_t wakes_owed_ = 0;      // threads called and not woken yet (call_thread, wake_for_queue)
  std::unique_ptr<IoWatch> watch_;
  Timer stall_;
};

}  // namespace rdma_eventd::daemon
