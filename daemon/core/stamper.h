// Gives each record its identity: seq, stream, time, host and severity.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "rdma_eventd/internal/same_text.h"
#include "rdma_eventd/record.h"

namespace rdma_eventd::daemon {

using SeverityMap = std::array<Severity, kEventKindCount>;

// The documented defaults (docs/records.md): fatal is critical, link down is an error, the
// rest is routine fabric management.
SeverityMap default_severities();

class RecordStamper {
 public:
  RecordStamper(std::string stream, std::string host, SeverityMap severities)
      : stream_(std::move(stream)), host_(std::move(host)), severities_(severities) {}

  // seq is strictly increasing for the life of the stamper (one daemon run), starting at 1.
  void stamp(Record& r, int64_t time_us) {
    r.seq = ++last_seq_;
    // A record built in one the last batch published has them already (enrich_batch keeps
    // them): a compare, where a copy of the 32-byte stream costs twice as much per record.
    if (!internal::same_text(r.stream, stream_)) r.stream = stream_;
    if (!internal::same_text(r.host, host_)) r.host = host_;
    r.time_us = time_us;
    r.severity = severities_[static_cast<size_t>(r.event)];
  }

  void set_severities(const SeverityMap& m) { severities_ = m; }
  uint64_t last_seq() const { return last_seq_; }
  const std::string& stream() const { return stream_; }
  const std::string& host() const { return host_; }

 private:
  std::string stream_;
  std::string host_;
  SeverityMap severities_;
  uint64_t last_seq_ = 0;
};

// 32 lowercase hex digits from the kernel's random source; a new one at every daemon start.
std::string new_stream_id();

}  // namespace rdma_eventd::daemon
