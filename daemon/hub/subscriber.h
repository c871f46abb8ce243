// One connection, as the hub keeps it: a subscriber's (the events socket), or a reporter's (the
// report socket: its requests are read and answered the same way, and it gets no records). Only
// the hub's own files use it.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "core/token_bucket.h"
#include "hub/hub.h"
#include "hub/output_queue.h"
#include "loop/event_loop.h"
#include "rdma_eventd/protocol.h"
#include "rdma_eventd/record.h"
#include "schema/json_writer.h"

namespace rdma_eventd::daemon {

struct SubscriberHub::Subscriber {
  Subscriber(uint64_t id_, Role role_, internal::UniqueFd fd_, size_t max_queued_bytes,
             uint32_t requests_per_second, int64_t now_us)
      : id(id_),
        role(role_),
        fd(std::move(fd_)),
        out(max_queued_bytes),
        request_budget(requests_per_second, now_us) {}
  Subscriber(const Subscriber&) = delete;
  Subscriber& operator=(const Subscriber&) = delete;

  const uint64_t id;
  const Role role;
  const internal::UniqueFd fd;  // the connection
  pid_t pid = 0;                // the peer, from SO_PEERCRED
  uid_t uid = 0;
  gid_t gid = 0;
  int64_t connected_us = 0;
  // Declared after the fd, so destroyed before it: the registration goes before the fd.
  std::unique_ptr<IoWatch> watch;

  OutputQueue out;
  std::string in;  // request bytes read and not yet handled
  Filter filter;
  // While replaying from the ring: the next seq to send. Live records wait in the ring until
  // the replay reaches them.
  std::optional<uint64_t> replay_next;
  uint64_t requests = 0;
  TokenBucket request_budget;  // socket.max_requests_per_second
  uint64_t rate_limited = 0;   // requests refused for going over it
  uint64_t lost_logged = 0;    // records_lost when the loss was last logged
  // A report taken and not yet published (hub_reports.cc): its record, stamped but for the
  // seq, and the request it answers. Later requests wait for it, so replies stay in order.
  struct PendingReport {
    Record record;
    Request request;
  };
  std::unique_ptr<PendingReport> report;

  // The client has sent end of file: no more requests, no more live records; the connection
  // closes once the queue (and any replay) is written.
  bool eof = false;
  // The client broke the protocol (a request over the size limit): nothing more is read or
  // replayed; the connection closes once the error line is written.
  bool broken = false;
  // Writing failed: the client is gone (or reads no more). What it sent before is still read
  // and handled, so that a report written just before the application closed or exited is
  // published; the answers are dropped. The connection closes at end of file.
  bool hung_up = false;
  // No longer counted against socket.max_subscribers and max_subscribers_per_user (a
  // reporter: reports.max_reporters and max_reporters_per_user): closed, or left out by a
  // reload and only waiting to hand over its error line.
  bool slot_released = false;
  bool closed = false;  // waiting to be reaped
  bool pending_write = false;

  bool draining() const { return eof || broken; }
  bool reporter() const { return role == Role::kReporter; }
  // For the log: "subscriber 3", "reporter 4".
  const char* kind() const { return reporter() ? "reporter" : "subscriber"; }
};

// {"type":"reply","op":OP,"id":ID,"seq":SEQ, ...fields...}\n: the line that answers request r
// (hub_requests.cc, hub_reports.cc); `fields`, when given, writes the op's own.
std::string reply_line(Op op, const Request& r, uint64_t seq,
                       const std::function<void(JsonWriter&)>& fields);

}  // namespace rdma_eventd::daemon
