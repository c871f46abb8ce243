#include "systemd/journal_sink.h"

#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <sys/uio.h>
#include <systemd/sd-journal.h>
#include <unistd.h>

#include <cassert>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "core/journal_entry.h"
#include "core/journal_native.h"

namespace rdma_eventd::daemon {

JournalSink::JournalSink(std::string identifier, size_t max_queued)
    : identifier_(std::move(identifier)), max_queued_(max_queued) {
  wake_fd_.reset(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!wake_fd_) {
    throw std::runtime_error(std::string("journal: eventfd: ") + std::strerror(errno));
  }
  writer_ = std::thread([this] { writer_main(); });
}

JournalSink::~JournalSink() {
  {
    std::unique_lock lock(mu_);
    queue_pending_locked();
    wake_.notify_one();
    if (!drained_.wait_for(lock, std::chrono::seconds(3), [this] { return depth_locked() == 0; })) {
      spdlog::warn("journal: {} records still queued at exit were not written", depth_locked());
      stats_.dropped += queue_.size();
      queue_.clear();
    }
    stopping_ = true;
  }
  wake_.notify_one();
  writer_.join();
}

std::string JournalSink::spare_buffer() {
  if (spare_.empty()) {
    std::string buffer;
    buffer.reserve(kNewBufferBytes);
    return buffer;
  }
  std::string buffer = std::move(spare_.back());
  spare_.pop_back();
  buffer.clear();  // keeps its capacity: no allocation once it is large enough
  return buffer;
}

void JournalSink::publish(const Record& record, std::string_view line) {
  // JSON text holds no raw newline: the line completes the entry's last field as it is.
  assert(line.find('\n') == line.size() - 1);
  Entry entry{spare_buffer()};
  append_journal_entry_head(entry.datagram, record, identifier_);
  entry.line_at = entry.datagram.size();
  entry.datagram.append(line);
  pending_.push_back(std::move(entry));
}

void JournalSink::flush() {
  if (pending_.empty()) return;
  {
    std::lock_guard lock(mu_);
    queue_pending_locked();
    take_given_back_locked();
  }
  wake_.notify_one();
}

void JournalSink::take_given_back_locked() {
  for (std::string& buffer : given_back_) {
    // Beyond the pool's size, or grown for an unusually large entry: freed here, on the thread
    // that made it.
    if (spare_.size() < kMaxSpareBuffers && buffer.capacity() <= kMaxSpareBufferBytes)
      spare_.push_back(std::move(buffer));
  }
  given_back_.clear();
}

void JournalSink::queue_pending_locked() {
  for (Entry& entry : pending_) {
    if (depth_locked() >= max_queued_) {
      if (stats_.dropped++ == 0 || stats_.dropped % 100000 == 0) {
        spdlog::warn(
            "journal: writer queue full ({} entries), {} records not journaled so far; "
            "they still reach subscribers",
            max_queued_, stats_.dropped);
      }
      if (spare_.size() < kMaxSpareBuffers && entry.datagram.capacity() <= kMaxSpareBufferBytes)
        spare_.push_back(std::move(entry.datagram));
      continue;
    }
    queue_.push_back(std::move(entry));
  }
  pending_.clear();
}

void JournalSink::publish_summary(const std::vector<std::string>& fields) {
  Entry entry{spare_buffer()};
  for (const std::string& field : fields)
    append_native_field(entry.datagram, field);
  {
    std::lock_guard lock(mu_);
    queue_pending_locked();  // the records before it go first
    take_given_back_locked();
    if (depth_locked() >= max_queued_ + kSummaryHeadroom) {
      // journald has stalled for long: records were dropped (and logged) before this
      ++stats_.dropped;
      return;
    }
    queue_.push_back(std::move(entry));
  }
  wake_.notify_one();
}

void JournalSink::set_identifier(std::string identifier) {
  identifier_ = std::move(identifier);
}

JournalSink::Stats JournalSink::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

size_t JournalSink::queued() const {
  std::lock_guard lock(mu_);
  return depth_locked();
}

uint64_t JournalSink::progress() const {
  std::lock_guard lock(mu_);
  return stats_.written + stats_.summaries_written + stats_.failed;
}

void JournalSink::notify_when_at_most(size_t entries) {
  bool now = false;
  {
    std::lock_guard lock(mu_);
    if (depth_locked() <= entries) {
      now = true;
    } else {
      notify_at_most_ = entries;
    }
  }
  if (now) signal_wake();
}

void JournalSink::notify_on_progress() {
  std::lock_guard lock(mu_);
  notify_progress_ = true;
}

void JournalSink::consume_wake() {
  uint64_t count = 0;
  (void)!::read(wake_fd_.get(), &count, sizeof count);
}

void JournalSink::signal_wake() {
  const uint64_t one = 1;
  (void)!::write(wake_fd_.get(), &one, sizeof one);
}

void JournalSink::writer_main() {
  std::vector<Entry> batch;
  batch.reserve(kWriterBatch);
  std::unique_lock lock(mu_);
  for (;;) {
    wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) {
      if (stopping_) return;
      continue;
    }
    while (!queue_.empty() && batch.size() < kWriterBatch) {
      batch.push_back(std::move(queue_.front()));
      queue_.pop_front();
    }
    in_flight_ = batch.size();
    lock.unlock();
    Counts counts;
    for (Entry& entry : batch) {
      send(entry, counts);
    }
    lock.lock();
    in_flight_ = 0;
    stats_.written += counts.written;
    stats_.failed += counts.failed;
    stats_.summaries_written += counts.summaries_written;
    for (Entry& entry : batch)
      given_back_.push_back(std::move(entry.datagram));
    batch.clear();
    if (depth_locked() == 0) drained_.notify_all();
    bool signal = std::exchange(notify_progress_, false);
    if (notify_at_most_ && depth_locked() <= *notify_at_most_) {
      notify_at_most_.reset();
      signal = true;
    }
    if (signal) signal_wake();  // an eventfd write never blocks
  }
}

namespace {

constexpr std::string_view kRecordPrefix = "RDMA_RECORD=";

}  // namespace

void JournalSink::send(const Entry& entry, Counts& counts) {
  const bool summary = entry.line_at == 0;
  int r = socket_.send(entry.datagram);
  if (r < 0) {
    // Too large for a datagram, or no journald to connect to: libsystemd's way, which passes a
    // large entry in a memfd and otherwise fails with the error that is logged.
    const std::string_view d = entry.datagram;
    if (summary) {
      r = send_fields(native_fields(d));
    } else {
      std::vector<std::string> fields =
          native_fields(d.substr(0, entry.line_at - kRecordPrefix.size()));
      const std::string_view json = d.substr(entry.line_at, d.size() - entry.line_at - 1);
      fields.push_back(std::string(kRecordPrefix).append(json));
      r = send_fields(fields);
    }
  }
  if (r < 0) {
    ++counts.failed;
    if (!failing_) {
      failing_ = true;
      spdlog::error(
          "journal: cannot write records: {}; they still reach subscribers, failures "
          "are counted",
          std::strerror(-r));
    }
    return;
  }
  ++(summary ? counts.summaries_written : counts.written);
  if (failing_) {
    failing_ = false;
    std::lock_guard lock(mu_);
    spdlog::info("journal: writing records again ({} failed so far)",
                 stats_.failed + counts.failed);
  }
}

int JournalSink::send_fields(const std::vector<std::string>& fields) {
  std::vector<iovec> iov(fields.size());
  for (size_t i = 0; i < fields.size(); ++i) {
    iov[i].iov_base = const_cast<char*>(fields[i].data());
    iov[i].iov_len = fields[i].size();
  }
  return sd_journal_sendv(iov.data(), static_cast<int>(iov.size()));
}

}  // namespace rdma_eventd::daemon
