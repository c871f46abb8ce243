// Where records go once built, besides the subscriber hub and the journal: standard output. A
// sink takes the record and its JSON (serialized once for all sinks) for the length of the
// call and must not block the loop. The subscriber hub (hub/hub.h) and the journal sink
// (systemd/journal_sink.h) keep the record's buffer past the call, so they take it shared.
#pragma once

#include <string_view>

#include "rdma_eventd/record.h"

namespace rdma_eventd::daemon {

class RecordSink {
 public:
  virtual ~RecordSink() = default;
  virtual void publish(const Record& record, std::string_view json) = 0;
  // Called once after each batch of publish() calls, for sinks that flush.
  virtual void flush() {}
};

}  // namespace rdma_eventd::daemon
