// Where records go once built: the journal, subscribers, standard output. A sink takes the
// record and its JSON line (serialized once for all sinks) and must not block the loop.
#pragma once

#include <string>

#include "rdma_eventd/record.h"

namespace rdma_eventd::daemon {

class RecordSink {
 public:
  virtual ~RecordSink() = default;
  virtual void publish(const Record& record, const std::string& json) = 0;
  // Called once after each batch of publish() calls, for sinks that flush.
  virtual void flush() {}
};

}  // namespace rdma_eventd::daemon
