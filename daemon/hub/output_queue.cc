#include "hub/output_queue.h"

#include <algorithm>
#include <cassert>

#include "schema/protocol_json.h"  // lost_json

namespace rdma_eventd::daemon {

OutputQueue::Entry OutputQueue::lost_entry(const Lost& lost) {
  return Entry{std::make_shared<const std::string>(lost_json(lost) + "\n"), kLostTag};
}

void OutputQueue::push_entry(Entry e) {
  static_assert(sizeof(Entry) == 24, "an entry is a line and one word");
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
  assert(seq != kControlTag && seq != kLostTag);  // records are numbered from 1
  push_entry(Entry{std::move(line), seq});
}

void OutputQueue::push_control(LinePtr line) {
  push_entry(Entry{std::move(line), kControlTag});
}

void OutputQueue::push_lost(const Lost& lost) {
  stats_.records_lost += lost.records;
  if (!entries_.empty() && entries_.back().kind() == Kind::kLost &&
      untouched(entries_.size() - 1)) {
    Lost& merged = lost_.back();
    merged.first_seq = std::min(merged.first_seq, lost.first_seq);
    merged.last_seq = std::max(merged.last_seq, lost.last_seq);
    merged.records += lost.records;
    Entry& last = entries_.back();
    bytes_ -= last.line->size();
    last = lost_entry(merged);
    bytes_ += last.line->size();
    return;
  }
  push_entry(lost_entry(lost));
  lost_.push_back(lost);
}

void OutputQueue::discard_unstarted() {
  const size_t keep = head_offset_ > 0 ? 1 : 0;
  while (entries_.size() > keep) {
    bytes_ -= entries_.back().line->size();
    if (entries_.back().kind() == Kind::kLost) lost_.pop_back();
    entries_.pop_back();
  }
}

void OutputQueue::discard_all() {
  entries_.clear();
  lost_.clear();
  bytes_ = 0;
  head_offset_ = 0;
}

void OutputQueue::drop_backlog() {
  std::deque<Entry> kept;
  std::vector<Lost> kept_lost;
  Lost merged;
  size_t at = 0;
  bool any = false;
  size_t lost_index = 0;  // into lost_: the range of the next kLost entry
  for (size_t i = 0; i < entries_.size(); ++i) {
    Entry& e = entries_[i];
    const Kind kind = e.kind();
    if (kind == Kind::kControl || !untouched(i)) {
      if (kind == Kind::kLost) kept_lost.push_back(lost_[lost_index++]);
      kept.push_back(std::move(e));
      continue;
    }
    const Lost part = kind == Kind::kRecord ? Lost{e.tag, e.tag, 1} : lost_[lost_index++];
    if (kind == Kind::kRecord) ++stats_.records_lost;
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
    // The notice's range goes last: the only notice kept before it is the first entry, partly
    // written; every kept entry after it is a control line.
    kept_lost.push_back(merged);
  }
  entries_ = std::move(kept);
  lost_ = std::move(kept_lost);
}

size_t OutputQueue::gather(iovec* iov, size_t max) const {
  size_t n = 0;
  size_t skip = head_offset_;  // only the first entry can be partly written
  // Iterators, not indexes: a deque's operator[] finds the entry's block anew each time.
  for (auto it = entries_.begin(); it != entries_.end() && n < max; ++it, ++n) {
    const std::string& s = *it->line;
    iov[n].iov_base = const_cast<char*>(s.data() + skip);
    iov[n].iov_len = s.size() - skip;
    skip = 0;
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
    const Kind kind = e.kind();
    if (kind == Kind::kRecord) {
      ++stats_.records_sent;
    } else if (kind == Kind::kLost) {
      ++stats_.lost_notices;
      lost_.erase(lost_.begin());
    }
    bytes_ -= e.line->size();
    head_offset_ = 0;
    entries_.pop_front();
  }
}

}  // namespace rdma_eventd::daemon
