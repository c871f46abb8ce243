// Records into the systemd journal, one entry each, through libsystemd's sd_journal_sendv.
//
// sd_journal_sendv writes to a blocking datagram socket: a stalled journald would stall the
// caller. So the loop only queues the entry (bounded), and one writer thread sends it. When
// the queue is full the entry is dropped for the journal alone (counted, logged once) and the
// record still reaches every other sink. Failures are logged once when they start and once
// when writes work again.
//
// The queue's depth is also a signal for the daemon (backpressure, docs/architecture.md): it
// stops reading device events while the queue is deep and asks to be woken through wake_fd()
// once it is shallow again, or once the writer makes progress at all.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/sink.h"

namespace rdma_eventd::daemon {

class JournalSink final : public RecordSink {
 public:
  struct Stats {
    uint64_t written = 0;  // accepted by sd_journal_sendv
    uint64_t failed = 0;   // sd_journal_sendv returned an error
    uint64_t dropped = 0;  // never attempted: the queue was full
    int last_error = 0;    // errno of the last failure
  };

  JournalSink(std::string identifier, size_t max_queued);
  // Sends what is still queued, for at most a few seconds, then stops the writer.
  ~JournalSink() override;
  JournalSink(const JournalSink&) = delete;
  JournalSink& operator=(const JournalSink&) = delete;

  void publish(const Record& record, const std::string& json) override;
  void set_identifier(std::string identifier);
  Stats stats() const;

  size_t queued() const;
  size_t capacity() const { return max_queued_; }
  // Entries the writer has finished with, written or failed: grows while journald takes them.
  uint64_t progress() const;
  // Makes the writer signal wake_fd() once the queue holds at most `entries`, or after its next
  // finished write (whichever is asked; each request is answered once).
  void notify_when_at_most(size_t entries);
  void notify_on_progress();
  // Readable when the writer has signalled; consume_wake() clears it.
  int wake_fd() const { return wake_fd_; }
  void consume_wake();

 private:
  void writer_main();
  void send(const std::vector<std::string>& fields);
  void signal_wake();

  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::condition_variable drained_;
  std::deque<std::vector<std::string>> queue_;
  size_t max_queued_;
  std::string identifier_;
  bool stopping_ = false;
  bool failing_ = false;  // only the writer thread touches it
  Stats stats_;
  std::optional<size_t> notify_at_most_;
  bool notify_progress_ = false;
  int wake_fd_ = -1;  // an eventfd
  std::thread writer_;
};

}  // namespace rdma_eventd::daemon
