// Records into the systemd journal, one entry each, as one datagram of journald's native
// protocol on a socket connected once (systemd/journal_socket.h), or through libsystemd's
// sd_journal_sendv for what that socket cannot take.
//
// Both write to a blocking datagram socket: a stalled journald would stall the caller. So the
// loop only queues the record (bounded), and one writer thread builds its entry (the MESSAGE
// sentence and the RDMA_* fields, core/journal_entry.h) into a buffer it reuses and sends it:
// the loop pays for neither. The record and its JSON line are shared and immutable, so queueing
// them copies nothing. When the queue is full the record is dropped for the journal alone (counted,
// logged once) and still reaches every other sink. Failures are logged once when they start
// and once when writes work again.
//
// The queue's depth is also a signal for the daemon (backpressure, docs/architecture.md): it
// stops reading device events while the queue is deep and asks to be woken through wake_fd()
// once it is shallow again, or once the writer makes progress at all.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/journal_queue.h"
#include "rdma_eventd/internal/unique_fd.h"
#include "rdma_eventd/record.h"
#include "systemd/journal_socket.h"

namespace rdma_eventd::daemon {

class JournalSink final : public JournalQueue {
 public:
  struct Stats {
    uint64_t written = 0;            // accepted by journald
    uint64_t failed = 0;             // not accepted, sd_journal_sendv said why
    uint64_t dropped = 0;            // never attempted: the queue was full
    uint64_t summaries_written = 0;  // the journal budget's summaries accepted (not in written)
  };

  JournalSink(std::string identifier, size_t max_queued);
  // Sends what is still queued, for at most a few seconds, then stops the writer.
  ~JournalSink() override;
  JournalSink(const JournalSink&) = delete;
  JournalSink& operator=(const JournalSink&) = delete;

  // Queues the record's entry. `line` is the record's JSON and its newline, as subscribers
  // get it (RDMA_RECORD is the JSON). Neither may change afterwards: the writer thread reads
  // them.
  void publish(std::shared_ptr<const Record> record, std::shared_ptr<const std::string> line);
  // Queues one entry of ready-made fields ("KEY=value"): a summary of the journal budget
  // (core/journal_budget.h). Summaries are few (one per port per interval) and each stands for
  // many records, so they may use kSummaryHeadroom entries beyond the queue's capacity.
  void publish_summary(std::vector<std::string> fields);
  static constexpr size_t kSummaryHeadroom = 1025;  // every port the budget tracks, and the host
  // SYSLOG_IDENTIFIER of the records published from now on.
  void set_identifier(std::string identifier);
  Stats stats() const;

  // JournalQueue
  size_t queued() const override;
  uint64_t progress() const override;
  void notify_when_at_most(size_t entries) override;
  void notify_on_progress() override;
  int wake_fd() const override { return wake_fd_.get(); }
  void consume_wake() override;

 private:
  // What the writer needs to build one entry.
  struct Entry {
    std::shared_ptr<const Record> record;
    std::shared_ptr<const std::string> line;        // the JSON and a newline
    std::shared_ptr<const std::string> identifier;  // as it was when the record came
    std::vector<std::string> summary_fields;        // a summary's entry (no record)
  };

  void writer_main();
  // Sends the entry, built into datagram_, and counts it.
  void send(const Entry& entry);
  static int send_fields(const std::vector<std::string>& fields);
  void signal_wake();

  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::condition_variable drained_;
  std::deque<Entry> queue_;
  size_t max_queued_;
  std::shared_ptr<const std::string> identifier_;
  bool stopping_ = false;
  bool failing_ = false;  // only the writer thread touches it
  Stats stats_;
  std::optional<size_t> notify_at_most_;
  bool notify_progress_ = false;
  internal::UniqueFd wake_fd_;  // an eventfd
  JournalSocket socket_;        // only the writer thread touches these two
  std::string datagram_;
  std::thread writer_;
};

}  // namespace rdma_eventd::daemon
