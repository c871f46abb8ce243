// The records the hub has published, each one immutable buffer that the replay ring and every
// subscriber's queue share (docs/architecture.md § Subscriber hub), and the ring of the latest
// ones that "since" replays from.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "rdma_eventd/protocol.h"

namespace rdma_eventd::daemon {

// Text kept inside its owner up to kInline bytes, so that holding it costs no allocation; a
// node GUID (19 characters) always fits. Longer text goes to the heap.
class InlineText {
 public:
  static constexpr size_t kInline = 23;

  void assign(std::string_view text) {
    if (text.size() <= kInline) {
      text.copy(inline_, text.size());
      size_ = static_cast<uint8_t>(text.size());
      heap_.clear();
    } else {
      heap_.assign(text);
      size_ = kOnHeap;
    }
  }
  std::string_view view() const {
    return size_ == kOnHeap ? std::string_view(heap_) : std::string_view(inline_, size_);
  }

 private:
  static constexpr uint8_t kOnHeap = 0xff;
  char inline_[kInline] = {};
  uint8_t size_ = 0;
  std::string heap_;
};

struct PublishedRecord {
  uint64_t seq = 0;
  EventKind event = EventKind::kUnknown;
  Severity severity = Severity::kInfo;
  bool port_scoped = false;
  uint32_t port = 0;
  std::string device;
  InlineText node_guid;  // a record's GUID text, copied for every record: kept inline
  std::string old_name;  // device_renamed
  std::string line;      // the record's JSON and a newline, exactly as it goes on the wire

  RecordKey key() const {
    return RecordKey{event, severity, device, node_guid.view(), port, port_scoped, old_name};
  }
};
using RecordPtr = std::shared_ptr<const PublishedRecord>;
using LinePtr = std::shared_ptr<const std::string>;

RecordPtr make_published(const Record& record, std::string_view json);
// The record published: its line is its JSON (schema/record_json.h) and a newline, serialized
// here. Built in `spare` when there is one (a published record that nothing holds any more,
// SubscriberHub::take_spare), so that its buffers are reused when the line fits; else new.
// The line's buffer is left within a few dozen bytes of the line's length.
RecordPtr publish_record(const Record& record, std::shared_ptr<PublishedRecord> spare = nullptr);
// The record's line, sharing the record's buffer (no copy).
inline LinePtr line_of(const RecordPtr& r) {
  return LinePtr(r, &r->line);
}

// The last `capacity` records, oldest first. Seqs only grow.
class RecordRing {
 public:
  explicit RecordRing(size_t capacity) : slots_(capacity) {}

  // Adds a record; returns the one it pushed out (null when the ring was not full). With a
  // capacity of 0 the record itself comes back.
  RecordPtr push(RecordPtr record);

  size_t capacity() const { return slots_.size(); }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // 0 when empty.
  uint64_t first_seq() const { return empty() ? 0 : at(0)->seq; }
  uint64_t last_seq() const { return empty() ? 0 : at(size_ - 1)->seq; }

  // i = 0 is the oldest record.
  const RecordPtr& at(size_t i) const { return slots_[(head_ + i) % slots_.size()]; }
  // The position of the first record whose seq is >= seq (size() when there is none).
  size_t lower_bound(uint64_t seq) const;

 private:
  std::vector<RecordPtr> slots_;
  size_t head_ = 0;  // the oldest record's slot
  size_t size_ = 0;
};

}  // namespace rdma_eventd::daemon
