#include "app/counter_read_worker.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <utility>

#include "core/clock.h"
#include "netlink/ethtool_reader.h"

namespace rdma_eventd::daemon {

std::string CounterReadJob::reading() const {
  std::lock_guard lock(reading_mutex_);
  return reading_;
}

void CounterReadJob::set_reading(std::string file) {
  std::lock_guard lock(reading_mutex_);
  reading_ = std::move(file);
}

CounterReadWorker::CounterReadWorker(EventLoop& loop, Done done, std::string ethtool_stand_in)
    : shared_(std::make_shared<Shared>()),
      done_(std::move(done)),
      stall_(
          loop, [this] { on_stall(); }, Priority::kSources) {
  shared_->ethtool_stand_in = std::move(ethtool_stand_in);
  shared_->event.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!shared_->event) {
    throw std::runtime_error(std::string("cannot create an eventfd for counter reads: ") +
                             std::strerror(errno));
  }
  watch_ = std::make_unique<IoWatch>(loop, shared_->event.get(), Priority::kSources,
                                     [this](bool, bool) { on_readable(); });
  watch_->watch(true, false);
}

CounterReadWorker::~CounterReadWorker() {
  watch_.reset();
  std::lock_guard lock(shared_->mutex);
  shared_->closed = true;
  shared_->todo.clear();
  shared_->done.clear();
  shared_->wake.notify_all();
  // The eventfd stays open while a thread may still write to it: it closes with the last
  // reference, a thread's or ours.
}

CounterReadWorker::Batch::~Batch() {
  if (--worker_.batch_depth_ == 0 && std::exchange(worker_.batch_queued_, false))
    worker_.wake_for_queue();
}

bool CounterReadWorker::queue_has_reader() const {
  if (shared_->calls > 0) return true;
  const auto stalled_since = std::chrono::steady_clock::now() - kStall;
  return std::any_of(shared_->readers.begin(), shared_->readers.end(), [&](const Reader& r) {
    return r.called && (!r.in_read || r.busy_since > stalled_since);
  });
}

bool CounterReadWorker::call_thread() {
  if (queue_has_reader()) return true;
  if (shared_->idle == 0) {
    Reader& reader = shared_->readers.emplace_back();
    try {
      std::thread(serve, shared_, &reader).detach();
    } catch (const std::system_error&) {
      shared_->readers.pop_back();
      return false;  // no thread now (EAGAIN at the task limit)
    }
    ++shared_->idle;
  }
  --shared_->idle;
  ++shared_->calls;
  ++wakes_owed_;
  return true;
}

bool CounterReadWorker::start(std::shared_ptr<CounterReadJob> job) {
  {
    std::lock_guard lock(shared_->mutex);
    if (!call_thread()) return false;  // read at the next turn
    shared_->todo.push_back(std::move(job));
  }
  ++in_flight_;
  if (batch_depth_ > 0)
    batch_queued_ = true;
  else
    wake_for_queue();
  return true;
}

void CounterReadWorker::wake_for_queue() {
  // After the lock, so that a thread woken does not wait on it.
  for (; wakes_owed_ > 0; --wakes_owed_)
    shared_->wake.notify_one();
  if (!stall_.armed()) stall_.arm(kStall);
}

namespace {

// A RoCE port's PHY counters, as values beside its sysfs ones. A failure is the port's own
// (no FEC statistics on this netdev, the netdev gone): its other counters still count.
void read_phy(CounterReadJob::Port& port, const std::string& stand_in) {
  const netlink::PhyRead phy =
      netlink::read_phy_stats(port.netdev, stand_in, std::chrono::seconds(5));
  if (!phy.stats) {
    port.phy_error = phy.error;
    port.phy_error_what = phy.what;
    return;
  }
  auto add = [&](std::string_view name, const std::optional<uint64_t>& value) {
    if (value) port.values.push_back({std::string(name), 64, *value});
  };
  add(kFecUncorrectable, phy.stats->fec_uncorrectable_blocks);
  add(kFecCorrected, phy.stats->fec_corrected_blocks);
  add(kFecCorrectedBits, phy.stats->fec_corrected_bits);
  add(kPhySymbolErrors, phy.stats->symbol_errors);
}

}  // namespace

void CounterReadWorker::read(CounterReadJob& job, const std::string& ethtool_stand_in) {
  for (CounterReadJob::Port& port : job.ports) {
    port.read_mono_us = monotonic_us();
    // One file at a time, so that a read that does not return is known by its file.
    for (const std::string& name : port.names) {
      job.set_reading(counter_path(job.path, port.number, name));
      std::optional<CounterReadError> error =
          read_port_counters(job.path, port.number, {name}, job.driver, port.values);
      if (error) {
        job.error = std::move(error);
        job.error_port = port.number;
        job.set_reading({});
        return;
      }
    }
    if (!port.netdev.empty()) {
      job.set_reading("the PHY counters of " + port.netdev);
      read_phy(port, ethtool_stand_in);
    }
  }
  job.set_reading({});
}

void CounterReadWorker::serve(const std::shared_ptr<Shared>& shared, Reader* me) {
  std::unique_lock lock(shared->mutex);
  for (;;) {
    shared->wake.wait(lock, [&] { return shared->closed || shared->calls > 0; });
    if (shared->closed) return;
    --shared->calls;
    me->called = true;
    // Called: reads the queue until it is empty (jobs queued meanwhile too), then hands back
    // everything read, its own and any a stalled thread left.
    while (!shared->todo.empty()) {
      std::shared_ptr<CounterReadJob> job = std::move(shared->todo.front());
      shared->todo.pop_front();
      me->in_read = true;
      me->busy_since = std::chrono::steady_clock::now();
      lock.unlock();
      read(*job, shared->ethtool_stand_in);
      lock.lock();
      me->in_read = false;
      if (shared->closed) return;
      shared->done.push_back(std::move(job));
    }
    me->called = false;
    ++shared->idle;
    // Nothing to hand back when another thread took the queue first (this one was called for
    // a stall that ended) or the loop took the values at a stall.
    if (shared->done.empty()) continue;
    // After the lock, so that the loop, woken, does not wait on it. The eventfd is open while
    // `shared` is: the write cannot fail short of a count of 2^64 - 2 unread.
    lock.unlock();
    const uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(shared->event.get(), &one, sizeof one);
    lock.lock();
  }
}

void CounterReadWorker::on_readable() {
  uint64_t count = 0;
  [[maybe_unused]] const ssize_t n = ::read(shared_->event.get(), &count, sizeof count);
  hand_back();
}

// Jobs still queued kStall after the reads began: the thread reading them is held by a read
// (a firmware that stopped answering). Another takes the queue, and what was read before the
// stall goes to the caller now, not when the stalled read returns.
void CounterReadWorker::on_stall() {
  bool queued = false;
  {
    std::lock_guard lock(shared_->mutex);
    // Looked at again after kStall while jobs wait: a thread that took one just now may stall
    // in its turn, and one that could not be started is asked for again.
    queued = !shared_->todo.empty();
    if (queued) call_thread();
  }
  if (queued) wake_for_queue();
  hand_back();
}

void CounterReadWorker::hand_back() {
  std::vector<std::shared_ptr<CounterReadJob>> done;
  {
    std::lock_guard lock(shared_->mutex);
    done.swap(shared_->done);
  }
  for (std::shared_ptr<CounterReadJob>& job : done) {
    --in_flight_;
    done_(std::move(job));
  }
  if (in_flight_ == 0) stall_.cancel();
}

}  // namespace rdma_eventd::daemon
