// Records into the systemd journal, one entry each, as one datagram of journald's native
// protocol on a socket connected once (systemd/journal_socket.h), or through libsystemd's
// sd_journal_sendv for what that socket cannot take.
//
// Both write to a blocking datagram socket: a stalled journald would stall the caller. So the
// loop only queues the record (bounded), and one writer thread builds its entry (the MESSAGE
// sentence and the RDMA_* fields, core/journal_entry.h) into a buffer it reuses and sends it:
// the loop pays for neither. The JSON line is shared and immutable; the record is copied into
// one of the records the writer has given back, whose buffers are kept, so in the steady state
// an entry allocates nothing and no memory is freed on a thread other than the one that
// allocated it. The loop hands over a batch's entries, and the writer takes up to kWriterBatch
// at a time, each with one lock. When the queue is full the record is dropped for the journal
// alone (counted, logged once) and still reaches every other sink. Failures are logged once
// when they start and once when writes work again.
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

  // Adds the record's entry to the batch that flush() queues. `line` is the record's JSON and its
  // newline, as subscribers get it (RDMA_RECORD is the JSON); it may not change afterwards: the
  // writer thread reads it. The record is copied. publish, flush, publish_summary and
  // set_identifier are for one thread, the loop's.
  void publish(const Record& record, std::shared_ptr<const std::string> line);
  // Queues the entries published since the last flush, as far as the queue has room.
  void flush();
  // Queues one entry of ready-made fields ("KEY=value"): a summary of the journal budget
  // (core/journal_budget.h). Summaries are few (one per port per interval) and each stands for
  // many records, so they may use kSummaryHeadroom entries beyond the queue's capacity.
  void publish_summary(std::vector<std::string> fields);
  static constexpr size_t kSummaryHeadroom = 1025;  // every port the budget tracks, and the host
  // Records the writer takes from the queue at a time: one lock for the lot. Small, so that
  // progress() and the backpressure's view of the queue move in steps this size at most.
  static constexpr size_t kWriterBatch = 64;
  // Records kept for reuse: about what the backpressure lets the queue hold, while journald
  // keeps up. More are freed (after a stall, when up to the queue's capacity were in use).
  static constexpr size_t kMaxSpareRecords = 2048;
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
    std::unique_ptr<Record> record;           // a copy, given back once written
    std::shared_ptr<const std::string> line;  // the JSON and a newline
    // Set on the first entry after the identifier changed: it applies from that entry on.
    std::shared_ptr<const std::string> identifier;
    std::vector<std::string> summary_fields;  // a summary's entry (no record)
  };

  // The writer's counts for one batch, added to stats_ under the lock.
  struct Counts {
    uint64_t written = 0;
    uint64_t failed = 0;
    uint64_t summaries_written = 0;
  };

  void writer_main();
  // Sends the entry, built into datagram_, and counts it.
  void send(const Entry& entry, Counts& counts);
  static int send_fields(const std::vector<std::string>& fields);
  void signal_wake();
  // Moves pending_ into queue_, as far as it has room; mu_ held.
  void queue_pending_locked();
  size_t depth_locked() const { return queue_.size() + in_flight_; }

  // The loop's side: entries not yet queued, records to copy into, the identifier to send.
  std::vector<Entry> pending_;
  std::vector<std::unique_ptr<Record>> spare_;
  std::shared_ptr<const std::string> identifier_;
  bool identifier_changed_ = true;

  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::condition_variable drained_;
  std::deque<Entry> queue_;
  size_t in_flight_ = 0;                             // taken by the writer, not yet finished
  std::vector<std::unique_ptr<Record>> given_back_;  // written records, for spare_
  size_t max_queued_;
  bool stopping_ = false;
  bool failing_ = false;                                  // only the writer thread touches it
  std::shared_ptr<const std::string> writer_identifier_;  // only the writer thread
  Stats stats_;
  std::optional<size_t> notify_at_most_;
  bool notify_progress_ = false;
  internal::UniqueFd wake_fd_;  // an eventfd
  JournalSocket socket_;        // only the writer thread touches these two
  std::string datagram_;
  std::thread writer_;
};

}  // namespace rdma_eventd::daemon
