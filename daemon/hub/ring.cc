#include "hub/ring.h"

#include "rdma_eventd/internal/same_text.h"
#include "schema/record_json.h"

namespace rdma_eventd::daemon {

namespace {

// Everything but the line.
void set_key_fields(PublishedRecord& p, const Record& r) {
  p.seq = r.seq;
  p.event = r.event;
  p.severity = r.severity;
  p.port_scoped = r.port_info.has_value();
  p.port = r.port;
  // A spare (a record the ring let go of) most often names the same device: compared, then
  // copied only when it differs.
  if (!internal::same_text(p.device, r.device)) p.device = r.device;
  if (!internal::same_text(p.node_guid.view(), r.node_guid)) p.node_guid.assign(r.node_guid);
  if (r.event == EventKind::kDeviceRenamed) {
    p.old_name = r.old_name;
  } else {
    p.old_name.clear();
  }
}

}  // namespace

RecordPtr make_published(const Record& r, std::string_view json) {
  auto p = std::make_shared<PublishedRecord>();
  set_key_fields(*p, r);
  p->line.reserve(json.size() + 1);
  p->line.append(json);
  p->line += '\n';
  return p;
}

RecordPtr publish_record(const Record& r, std::shared_ptr<PublishedRecord> spare) {
  // A line the replay ring keeps (4,096 of them by default) holds about its own length, not
  // room for the longest record. A new one is given the last new line's length and a little
  // (most lines are alike); a buffer that grew past that by doubling, or was given far more,
  // is cut back to the line.
  constexpr size_t kSlack = 32;
  thread_local size_t last_new = 0;
  const bool fresh = !spare;
  if (fresh) {
    spare = std::make_shared<PublishedRecord>();
    spare->line.reserve(last_new + kSlack);
  }
  const size_t capacity = spare->line.capacity();
  spare->line.clear();
  append_json(spare->line, r);
  spare->line += '\n';
  const size_t size = spare->line.size();
  if (spare->line.capacity() != capacity || (fresh && capacity > size + kSlack))
    spare->line.shrink_to_fit();
  if (fresh) last_new = size;
  set_key_fields(*spare, r);
  return spare;
}

RecordPtr RecordRing::push(RecordPtr record) {
  if (slots_.empty()) return record;
  if (size_ < slots_.size()) {
    slots_[(head_ + size_) % slots_.size()] = std::move(record);
    ++size_;
    return nullptr;
  }
  RecordPtr out = std::move(slots_[head_]);
  slots_[head_] = std::move(record);
  head_ = (head_ + 1) % slots_.size();
  return out;
}

size_t RecordRing::lower_bound(uint64_t seq) const {
  size_t lo = 0;
  size_t hi = size_;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (at(mid)->seq < seq) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

}  // namespace rdma_eventd::daemon
