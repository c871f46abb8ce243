// The page's marks, 16 bytes each, kept until the page is drawn: the rows and the time axis
// are known only then (every host, every incident). The first kInMemory marks stay in memory;
// beyond them they go to a temporary file (temp_file.h) a buffer at a time, so that a fleet's
// millions of marks cost the program a megabyte, not the marks' bytes. Read back in the order
// added, as often as needed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace rdma_eventd_fleet {

// What a mark shows: a port down or up, a verdict (by its name's code), another fault.
enum class MarkKind : uint8_t { kDown, kUp, kFault, kVerdict };

struct Mark {
  int64_t time_us;
  uint32_t host;  // the Timeline's number for the host
  MarkKind kind;
  uint8_t verdict;  // kVerdict: verdict_code() of its name
  uint16_t unused = 0;
};
static_assert(sizeof(Mark) == 16);

class MarkStore {
 public:
  static constexpr size_t kInMemory = 65536;  // 1 MiB

  MarkStore() = default;
  ~MarkStore();
  MarkStore(const MarkStore&) = delete;
  MarkStore& operator=(const MarkStore&) = delete;

  // False when the temporary file could not be made or written: the mark is not kept (counted
  // in lost()), and error() says why.
  bool add(const Mark& m);
  // Every mark kept, in the order added; false (and error()) when the file could not be read.
  bool for_each(const std::function<void(const Mark&)>& f) const;

  uint64_t size() const { return kept_; }
  uint64_t lost() const { return lost_; }
  const std::string& error() const { return error_; }

 private:
  bool flush();

  std::vector<Mark> buffer_;
  int fd_ = -1;
  std::string dir_;
  uint64_t flushed_ = 0;  // marks in the file
  uint64_t kept_ = 0;
  uint64_t lost_ = 0;
  mutable std::string error_;
};

}  // namespace rdma_eventd_fleet
