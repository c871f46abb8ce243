#include "mark_store.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "temp_file.h"

namespace rdma_eventd_fleet {

MarkStore::~MarkStore() {
  if (fd_ >= 0) ::close(fd_);
}

bool MarkStore::flush() {
  if (fd_ < 0) {
    fd_ = make_temporary_file(&dir_, &error_);
    if (fd_ < 0) return false;
  }
  const char* data = reinterpret_cast<const char*>(buffer_.data());
  size_t left = buffer_.size() * sizeof(Mark);
  off_t at = static_cast<off_t>(flushed_ * sizeof(Mark));
  while (left) {
    const ssize_t n = ::pwrite(fd_, data, left, at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error_ = "writing a temporary file in " + dir_ + ": " +
               (n < 0 ? std::strerror(errno) : "nothing written");
      return false;
    }
    data += n;
    left -= static_cast<size_t>(n);
    at += n;
  }
  flushed_ += buffer_.size();
  buffer_.clear();
  return true;
}

bool MarkStore::add(const Mark& m) {
  if (!error_.empty()) {
    ++lost_;
    return false;
  }
  if (buffer_.size() == kInMemory && !flush()) {
    // The buffer's marks are kept: they are drawn; this one and every later one are not.
    ++lost_;
    return false;
  }
  if (buffer_.capacity() == 0) buffer_.reserve(256);
  buffer_.push_back(m);
  ++kept_;
  return true;
}

bool MarkStore::for_each(const std::function<void(const Mark&)>& f) const {
  std::vector<Mark> chunk(fd_ >= 0 ? kInMemory : 0);
  for (uint64_t done = 0; done < flushed_;) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(kInMemory, flushed_ - done));
    const ssize_t n =
        ::pread(fd_, chunk.data(), want * sizeof(Mark), static_cast<off_t>(done * sizeof(Mark)));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || n % sizeof(Mark) != 0) {
      error_ = "reading a temporary file in " + dir_ + ": " +
               (n < 0 ? std::strerror(errno) : "it ended early");
      return false;
    }
    const size_t got = static_cast<size_t>(n) / sizeof(Mark);
    for (size_t i = 0; i < got; ++i)
      f(chunk[i]);
    done += got;
  }
  for (const Mark& m : buffer_)
    f(m);
  return true;
}

}  // namespace rdma_eventd_fleet
