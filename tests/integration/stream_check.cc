#include "stream_check.h"

#include <charconv>

namespace rdma_eventd::test {

using nlohmann::json;

void StreamCheck::feed(std::string_view lines) {
  size_t pos = 0;
  while (pos < lines.size()) {
    const size_t nl = lines.find('\n', pos);
    if (nl == std::string_view::npos) break;
    line(lines.substr(pos, nl - pos));
    pos = nl + 1;
  }
}

void StreamCheck::fail(const std::string& what) {
  if (problem_.empty()) problem_ = what;
}

void StreamCheck::line(std::string_view l) {
  static constexpr std::string_view kRecord = "{\"schema\":1,\"seq\":";
  if (l.substr(0, kRecord.size()) == kRecord) {
    uint64_t seq = 0;
    const char* begin = l.data() + kRecord.size();
    std::from_chars(begin, l.data() + l.size(), seq);
    if (seq != next_) {
      fail("record " + std::to_string(seq) + " where " + std::to_string(next_) + " was due");
    }
    next_ = seq + 1;
    ++records_;
    return;
  }
  const json j = json::parse(l);
  const std::string type = j.value("type", "");
  if (type == "lost") {
    const uint64_t first = j["first_seq"], last = j["last_seq"], records = j["records"];
    if (first != next_ || last < first || records != last - first + 1) {
      fail("lost line " + j.dump() + " where " + std::to_string(next_) + " was due");
    }
    next_ = last + 1;
    lost_records_ += records;
    ++lost_notices_;
    if (losses_.size() < 16) losses_.push_back(j);
  } else if (type == "reply" || type == "error") {
    replies_.push_back(j);
  } else if (type != "hello") {
    fail("unexpected line: " + std::string(l));
  }
}

}  // namespace rdma_eventd::test
