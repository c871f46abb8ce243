#include "hub/output_queue.h"

#include <algorithm>

#include "schema/protocol_json.h"  // lost_json

namespace rdma_eventd::daemon {

OutputQueue::Entry OutputQueue::lost_entry(const Lost& lost) {
  Entry e;
  e.kind = Kind::kLost;
  e.lost = lost;
  e.line = std::make_shared<const std::string>(lost_json(lost) + "\n");
  return e;
}

void OutputQueue::push_entry(Entry e) {
  bytes_ += e.line->size();
  entries_.push_back(std::move(e));
}

void OutputQueue::push_record(uint64_t seq, LinePtr line) {
  const size_t size = line->size();
  if (bytes() + size > max_bytes_) drop_backlog();
  if (bytes() + size > max_bytes_) {
    // Even an empty backlog leaves no room (control lines fill the queue): this record is lost
    // as well, counted in the last notice when it is still untouched.
    push_lost(Lost{seq, seq, 1});
    return;
  }
  Entry e;
  e.kind = Kind::kRecord;
  e.seq = seq;
  e.line = std::move(line);
  push_entry(std::move(e));
}

void OutputQueue::push_control(LinePtr line) {
  Entry e;
  e.kind = Kind::kControl;
  e.line = std::move(line);
  push_entry(std::move(e));
}

void OutputQueue::push_lost(const Lost& lost) {
  stats_.records_lost += lost.records;
  if (!entries_.empty() && entries_.back().kind == Kind::kLost && untouched(entries_.size() - 1)) {
    Entry& last = entries_.back();
    Lost merged = last.lost;
    merged.first_seq = std::min(merged.first_seq, lost.first_seq);
    merged.last_seq = std::max(merged.last_seq, lost.last_seq);
    merged.records += lost.records;
    bytes_ -= last.line->size();
    last = lost_entry(merged);
    bytes_ += last.line->size();
    return;
  }
  push_entry(lost_entry(lost));
}

void OutputQueue::discard_unstarted() {
  const size_t keep = head_offset_ > 0 ? 1 : 0;
  while (entries_.size() > keep) {
    bytes_ -= entries_.back().line->size();
    entries_.pop_back();
  }
}

void OutputQueue::drop_backlog() {
  std::deque<Entry> kept;
  Lost merged;
  size_t at = 0;
  bool any = false;
  for (size_t i = 0; i < entries_.size(); ++i) {
    Entry& e = entries_[i];
    if (e.kind == Kind::kControl || !untouched(i)) {
      kept.push_back(std::move(e));
      continue;
    }
    const Lost part = e.kind == Kind::kRecord ? Lost{e.seq, e.seq, 1} : e.lost;
    if (e.kind == Kind::kRecord) ++stats_.records_lost;
    if (!any) {
      any = true;
      at = kept.size();
      merged = part;
    } else {
      merged.first_seq = std::min(merged.first_seq, part.first_seq);
      merged.last_seq = std::max(merged.last_seq, part.last_seq);
      merged.records += part.records;
    }
    bytes_ -= e.line->size();
  }
  if (any) {
    Entry notice = lost_entry(merged);
    bytes_ += notice.line->size();
    kept.insert(kept.begin() + static_cast<std::ptrdiff_t>(at), std::move(notice));
  }
  entries_ = std::move(kept);
}

size_t OutputQueue::gather(iovec* iov, size_t max) const {
  size_t n = 0;
  for (size_t i = 0; i < entries_.size() && n < max; ++i, ++n) {
    const std::string& s = *entries_[i].line;
    const size_t skip = i == 0 ? head_offset_ : 0;
    iov[n].iov_base = const_cast<char*>(s.data() + skip);
    iov[n].iov_len = s.size() - skip;
  }
  return n;
}

void OutputQueue::consume(size_t n) {
  stats_.bytes_sent += n;
  while (n > 0 && !entries_.empty()) {
    Entry& e = entries_.front();
    const size_t left = e.line->size() - head_offset_;
    if (n < left) {
      head_offset_ += n;
      return;
    }
    n -= left;
    if (e.kind == Kind::kRecord) ++stats_.records_sent;
    if (e.kind == Kind::kLost) ++stats_.lost_notices;
    bytes_ -= e.line->size();
    head_offset_ = 0;
    entries_.pop_front();
  }
}

}  // namespace rdma_eventd::daemon
