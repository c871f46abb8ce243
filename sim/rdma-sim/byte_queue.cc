#include "byte_queue.h"

#include <algorithm>
#include <cstring>

namespace rdmasim {

void ByteQueue::append(const void* data, size_t len) {
  const auto* p = static_cast<const uint8_t*>(data);
  while (len > 0) {
    if (blocks_.empty() || blocks_.back().end == kBlockSize) blocks_.emplace_back();
    Block& b = blocks_.back();
    const size_t n = std::min(len, kBlockSize - b.end);
    std::memcpy(b.data.get() + b.end, p, n);
    b.end += n;
    p += n;
    len -= n;
    size_ += n;
  }
}

int ByteQueue::front_iov(iovec* iov, int max_iov, size_t max_bytes) const {
  int n = 0;
  for (const Block& b : blocks_) {
    if (n == max_iov || max_bytes == 0) break;
    const size_t len = std::min(b.end - b.begin, max_bytes);
    iov[n].iov_base = b.data.get() + b.begin;
    iov[n].iov_len = len;
    max_bytes -= len;
    ++n;
  }
  return n;
}

void ByteQueue::consume(size_t len) {
  size_ -= len;
  while (len > 0) {
    Block& b = blocks_.front();
    const size_t n = std::min(len, b.end - b.begin);
    b.begin += n;
    len -= n;
    if (b.begin == b.end) blocks_.pop_front();
  }
}

void ByteQueue::clear() {
  blocks_.clear();
  size_ = 0;
}

}  // namespace rdmasim
