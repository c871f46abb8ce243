// A checker for the long tests' subscribers (rdmatest::LineClient connections): it follows a
// record stream and says whether every seq came exactly once, in order, or was reported lost.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace rdma_eventd::test {

// Follows one subscriber's stream from seq 1: every record must be the next seq, every "lost"
// line must start at the next seq and count its whole range. Other lines (hello, replies) are
// skipped. Cheap enough for millions of lines: records are recognised by their first bytes.
class StreamCheck {
 public:
  // Feeds complete lines (each ending with '\n').
  void feed(std::string_view lines);
  uint64_t next_seq() const { return next_; }
  uint64_t records() const { return records_; }
  uint64_t lost_records() const { return lost_records_; }
  uint64_t lost_notices() const { return lost_notices_; }
  // The first problem seen, empty when none.
  const std::string& problem() const { return problem_; }
  // The replies seen.
  const std::vector<nlohmann::json>& replies() const { return replies_; }
  // The first "lost" lines seen (at most 16), for failure messages.
  const std::vector<nlohmann::json>& losses() const { return losses_; }

 private:
  void line(std::string_view l);
  void fail(const std::string& what);

  uint64_t next_ = 1;
  uint64_t records_ = 0;
  uint64_t lost_records_ = 0;
  uint64_t lost_notices_ = 0;
  std::string problem_;
  std::vector<nlohmann::json> replies_;
  std::vector<nlohmann::json> losses_;
};

}  // namespace rdma_eventd::test
