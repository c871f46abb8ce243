// Records into the systemd journal, one entry each, as one datagram of journald's native
// protocol on a socket connected once (systemd/journal_socket.h), or through libsystemd's
// sd_journal_sendv for what that socket cannot take.
//
// Both write to a blocking datagram socket: a stalled journald would stall the caller. So the
// loop only writes the entry (the MESSAGE sentence and the RDMA_* fields, core/journal_entry.h,
// then the record's JSON line) into a buffer and queues it (bounded), after the batch's records
// have gone to the subscribers; one writer thread sends it and gives the buffer back. The
// buffers are reused, so in the steady state an entry allocates nothing, and nothing the loop
// holds is shared with the writer: a record's line is copied (a few hundred bytes), not
// referenced, so the loop alone owns the published records and can build new ones in them
// (SubscriberHub::take_spare). The loop hands over a batch's entries with one lock, and the
// writer takes up to kWriterBatch at a time with one. When the queue is full the record is dropped
// for the journal alone (counted, logged once) and still reaches every other sink. Failures are
// logged once when they start and once when writes work again.
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

  // Writes the record's entry into a buffer of the batch that flush() queues. `line` is the
  // record's JSON and its newline, as subscribers get it (RDMA_RECORD is the JSON). publish,
  // flush, publish_summary and set_identifier are for one thread, the loop's.
  void publish(const Record& record, std::string_view line);
  // Queues the entries published since the last flush, as far as the queue has room.
  void flush();
  // Queues one entry of ready-made fields ("KEY=value"): a summary of the journal budget
  // (core/journal_budget.h). Summaries are few (one per port per interval) and each stands for
  // many records, so they may use kSummaryHeadroom entries beyond the queue's capacity.
  void publish_summary(const std::vector<std::string>& fields);
  static constexpr size_t kSummaryHeadroom = 1025;  // every port the budget tracks, and the host
  // Records the writer takes from the queue at a time: one lock for the lot. Small, so that
  // progress() and the backpressure's view of the queue move in steps this size at most.
  static constexpr size_t kWriterBatch = 64;
  // Entry buffers kept for reuse: about what the backpressure lets the queue hold, while
  // journald keeps up. More are freed (after a stall, when up to the queue's capacity were in
  // use).
  static constexpr size_t kMaxSpareBuffers = 2048;
  // A new buffer has room for a port event's entry (about 830 bytes); one that grew past
  // kMaxSpareBufferBytes for a large entry (a long GID list) is not kept, so the pool holds
  // 4 MiB at most.
  static constexpr size_t kNewBufferBytes = 1024;
  static constexpr size_t kMaxSpareBufferBytes = 2048;
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
  // One entry, as the writer sends it.
  struct Entry {
    // The datagram: the fields in the native protocol; for a record, "RDMA_RECORD=" and its
    // line last. Given back once sent.
    std::string datagram;
    size_t line_at = 0;  // where a record's line starts; 0 for a summary
  };

  // The writer's counts for one batch, added to stats_ under the lock.
  struct Counts {
    uint64_t written = 0;
    uint64_t failed = 0;
    uint64_t summaries_written = 0;
  };

  void writer_main();
  // Sends the entry and counts it.
  void send(const Entry& entry, Counts& counts);
  std::string spare_buffer();
  static int send_fields(const std::vector<std::string>& fields);
  void signal_wake();
  // Moves pending_ into queue_, as far as it has room; mu_ held.
  void queue_pending_locked();
  // Moves the writer's given-back buffers into spare_, as far as they are kept; mu_ held.
  void take_given_back_locked();
  size_t depth_locked() const { return queue_.size() + in_flight_; }

  // The loop's side: entries not yet queued, buffers to write them into, the identifier.
  std::vector<Entry> pending_;
  std::vector<std::string> spare_;
  std::string identifier_;

  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::condition_variable drained_;
  std::deque<Entry> queue_;
  size_t in_flight_ = 0;                 // taken by the writer, not yet finished
  std::vector<std::string> given_back_;  // sent entries' buffers, for spare_
  size_t max_queued_;
  bool stopping_ = false;
  bool failing_ = false;  // only the writer thread touches it
  Stats stats_;
  std::optional<size_t> notify_at_most_;
  bool notify_progress_ = false;
  internal::UniqueFd wake_fd_;  // an eventfd
  JournalSocket socket_;        // only the writer thread touches it
  std::thread writer_;
};

}  // namespace rdma_eventd::daemon
