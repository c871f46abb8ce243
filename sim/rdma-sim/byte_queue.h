// An unbounded FIFO of bytes in fixed-size blocks: the backlog of events a context's pipe cannot
// take yet. The kernel's async event queue is unbounded too; nothing is ever dropped.
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>

namespace rdmasim {

class ByteQueue {
 public:
  static constexpr size_t kBlockSize = 64 * 1024;

  void append(const void* data, size_t len);
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // Fills up to max_iov iovecs from the front, covering at most max_bytes; returns the count.
  int front_iov(iovec* iov, int max_iov, size_t max_bytes) const;
  void consume(size_t len);
  void clear();

 private:
  struct Block {
    std::unique_ptr<uint8_t[]> data{new uint8_t[kBlockSize]};
    size_t begin = 0;
    size_t end = 0;
  };
  std::deque<Block> blocks_;
  size_t size_ = 0;
};

}  // namespace rdmasim
