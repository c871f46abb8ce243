#include "app/counter_read_worker.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>
#include <thread>

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
    : shared_(std::make_shared<Shared>()), done_(std::move(done)) {
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

bool CounterReadWorker::start(std::shared_ptr<CounterReadJob> job) {
  std::unique_lock lock(shared_->mutex);
  if (shared_->idle == 0) {
    try {
      std::thread(serve, shared_).detach();
    } catch (const std::system_error&) {
      return false;  // no thread now (EAGAIN at the task limit): read at the next turn
    }
    ++shared_->idle;
  }
  --shared_->idle;
  shared_->todo.push_back(std::move(job));
  lock.unlock();
  shared_->wake.notify_one();
  ++in_flight_;
  return true;
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

void CounterReadWorker::serve(const std::shared_ptr<Shared>& shared) {
  for (;;) {
    std::shared_ptr<CounterReadJob> job;
    {
      std::unique_lock lock(shared->mutex);
      shared->wake.wait(lock, [&] { return shared->closed || !shared->todo.empty(); });
      if (shared->closed) return;
      job = std::move(shared->todo.front());
      shared->todo.pop_front();
    }
    read(*job, shared->ethtool_stand_in);
    {
      std::lock_guard lock(shared->mutex);
      if (shared->closed) return;
      shared->done.push_back(std::move(job));
      ++shared->idle;
    }
    // After the lock, so that the loop, woken, does not wait on it. The eventfd is open while
    // `shared` is: the write cannot fail short of a count of 2^64 - 2 unread.
    const uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(shared->event.get(), &one, sizeof one);
  }
}

void CounterReadWorker::on_readable() {
  uint64_t count = 0;
  [[maybe_unused]] const ssize_t n = ::read(shared_->event.get(), &count, sizeof count);
  std::vector<std::shared_ptr<CounterReadJob>> done;
  {
    std::lock_guard lock(shared_->mutex);
    done.swap(shared_->done);
  }
  for (std::shared_ptr<CounterReadJob>& job : done) {
    --in_flight_;
    done_(std::move(job));
  }
}

}  // namespace rdma_eventd::daemon
