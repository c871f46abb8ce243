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
    : max_queued_(max_queued),
      identifier_(std::make_shared<const std::string>(std::move(identifier))) {
  wake_fd_.reset(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!wake_fd_) {
    throw std::runtime_error(std::string("journal: eventfd: ") + std::strerror(errno));
  }
  writer_ = std::thread([this] { writer_main(); });
}

JournalSink::~JournalSink() {
  {
    std::unique_lock lock(mu_);
    if (!drained_.wait_for(lock, std::chrono::seconds(3), [this] { return queue_.empty(); })) {
      spdlog::warn("journal: {} records still queued at exit were not written", queue_.size());
      stats_.dropped += queue_.size();
      queue_.clear();
    }
    stopping_ = true;
  }
  wake_.notify_one();
  writer_.join();
}

void JournalSink::publish(std::shared_ptr<const Record> record,
                          std::shared_ptr<const std::string> line) {
  {
    std::lock_guard lock(mu_);
    if (queue_.size() >= max_queued_) {
      if (stats_.dropped++ == 0 || stats_.dropped % 100000 == 0) {
        spdlog::warn(
            "journal: writer queue full ({} entries), {} records not journaled so far; "
            "they still reach subscribers",
            max_queued_, stats_.dropped);
      }
      return;
    }
    queue_.push_back({std::move(record), std::move(line), identifier_});
  }
  wake_.notify_one();
}

void JournalSink::publish_summary(std::vector<std::string> fields) {
  {
    std::lock_guard lock(mu_);
    if (queue_.size() >= max_queued_ + kSummaryHeadroom) {
      // journald has stalled for long: records were dropped (and logged) before this
      ++stats_.dropped;
      return;
    }
    queue_.push_back({nullptr, nullptr, nullptr, std::move(fields)});
  }
  wake_.notify_one();
}

void JournalSink::set_identifier(std::string identifier) {
  auto shared = std::make_shared<const std::string>(std::move(identifier));
  std::lock_guard lock(mu_);
  identifier_ = std::move(shared);
}

JournalSink::Stats JournalSink::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

size_t JournalSink::queued() const {
  std::lock_guard lock(mu_);
  return queue_.size();
}

uint64_t JournalSink::progress() const {
  std::lock_guard lock(mu_);
  return stats_.written + stats_.summaries_written + stats_.failed;
}

void JournalSink::notify_when_at_most(size_t entries) {
  bool now = false;
  {
    std::lock_guard lock(mu_);
    if (queue_.size() <= entries) {
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
  std::unique_lock lock(mu_);
  for (;;) {
    wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) {
      if (stopping_) return;
      continue;
    }
    Entry entry = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    send(entry);
    entry = {};  // the record's memory goes back outside the lock too
    lock.lock();
    if (queue_.empty()) drained_.notify_all();
    bool signal = std::exchange(notify_progress_, false);
    if (notify_at_most_ && queue_.size() <= *notify_at_most_) {
      notify_at_most_.reset();
      signal = true;
    }
    if (signal) signal_wake();  // an eventfd write never blocks
  }
}

namespace {

// The record's JSON without its newline: RDMA_RECORD.
std::string_view json_of(const std::string& line) {
  std::string_view json = line;
  if (!json.empty() && json.back() == '\n') json.remove_suffix(1);
  return json;
}

}  // namespace

void JournalSink::send(const Entry& entry) {
  // Built here, not on the loop: an entry costs about twice the record's JSON to format.
  const bool summary = !entry.record;
  datagram_.clear();
  if (summary) {
    for (const std::string& field : entry.summary_fields)
      append_native_field(datagram_, field);
  } else {
    // The line, shared with the subscribers, completes the entry as it is.
    assert(entry.line->find('\n') == entry.line->size() - 1);
    append_journal_entry_head(datagram_, *entry.record, *entry.identifier);
  }
  int r = socket_.send(datagram_, summary ? std::string_view() : std::string_view(*entry.line));
  if (r < 0) {
    // Too large for a datagram, or no journald to connect to: libsystemd's way, which passes a
    // large entry in a memfd and otherwise fails with the error that is logged.
    r = summary
            ? send_fields(entry.summary_fields)
            : send_fields(journal_fields(*entry.record, json_of(*entry.line), *entry.identifier));
  }
  std::lock_guard lock(mu_);
  if (r < 0) {
    ++stats_.failed;
    if (!failing_) {
      failing_ = true;
      spdlog::error(
          "journal: cannot write records: {}; they still reach subscribers, failures "
          "are counted",
          std::strerror(-r));
    }
    return;
  }
  ++(summary ? stats_.summaries_written : stats_.written);
  if (failing_) {
    failing_ = false;
    spdlog::info("journal: writing records again ({} failed so far)", stats_.failed);
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
