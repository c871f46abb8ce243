// Records as the unit tests build them by hand: what a record is about, and the stamp the daemon
// gives it (enricher_test.cc, protocol_test.cc, record_test.cc, record_text_test.cc,
// report_test.cc).
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "rdma_eventd/record.h"

namespace rdma_eventd {

// A record of `event` with `severity` about the device `device` (node GUID `node_guid`) and, for
// a port-scoped record, its port `port`; the rest, the stamp included, as in a new Record.
inline Record record_about(EventKind event, Severity severity, std::string device,
                           std::string node_guid, uint32_t port = 0) {
  Record r;
  r.event = event;
  r.severity = severity;
  r.device = std::move(device);
  r.node_guid = std::move(node_guid);
  r.port = port;
  return r;
}

// `r` stamped as the daemon stamps a record: the `seq`th of `stream`, made at `time_us` (UTC) on
// `host`.
inline Record stamped(Record r, uint64_t seq, std::string stream, int64_t time_us,
                      std::string host) {
  r.seq = seq;
  r.stream = std::move(stream);
  r.time_us = time_us;
  r.host = std::move(host);
  return r;
}

}  // namespace rdma_eventd
