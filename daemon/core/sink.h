// Where records go once built: subscribers, standard output. A sink takes the record and its
// JSON line (serialized once for all sinks) for the length of the call and must not block the
// loop. The journal sink (systemd/journal_sink.h) keeps them past the call, for its writer
// thread, so it takes them as shared, immutable objects instead.
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
