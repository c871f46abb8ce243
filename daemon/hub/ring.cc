#include "hub/ring.h"

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
  p.device = r.device;
  p.node_guid.assign(r.node_guid);
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
  if (!spare) {
    spare = std::make_shared<PublishedRecord>();
    spare->line.reserve(640);  // most records' JSON fits
  }
  set_key_fields(*spare, r);
  spare->line.clear();
  append_json(spare->line, r);
  spare->line += '\n';
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
