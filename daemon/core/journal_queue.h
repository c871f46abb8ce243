// The journal writer's queue as the daemon's backpressure sees it (app/journal_backpressure.h):
// how deep it is, whether the writer moves, and a descriptor the writer makes readable when
// asked to. The journal sink (systemd/journal_sink.h) is the one implementation; unit tests
// drive the backpressure with a fake.
#pragma once

#include <cstddef>
#include <cstdint>

namespace rdma_eventd::daemon {

class JournalQueue {
 public:
  virtual ~JournalQueue() = default;

  // Entries waiting for the writer.
  virtual size_t queued() const = 0;
  // Entries the writer has finished with, written or failed: grows while journald takes them.
  virtual uint64_t progress() const = 0;
  // Makes the writer signal wake_fd() once the queue holds at most `entries`, or after its next
  // finished write (whichever is asked; each request is answered once).
  virtual void notify_when_at_most(size_t entries) = 0;
  virtual void notify_on_progress() = 0;
  // Readable when the writer has signalled; consume_wake() clears it.
  virtual int wake_fd() const = 0;
  virtual void consume_wake() = 0;
};

}  // namespace rdma_eventd::daemon
