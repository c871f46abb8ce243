// Subscribers of the daemon's socket for the integration tests, speaking protocol v1 by hand
// (docs/protocol.md): a connection that reads lines with deadlines, and a checker that follows
// a record stream and says whether every seq came exactly once, in order, or was reported lost.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "process.h"

namespace rdma_eventd::test {

// A connected Unix stream socket (non-blocking, close-on-exec); HarnessError when it fails.
int connect_socket(const std::string& path);

class SubscriberConnection {
 public:
  explicit SubscriberConnection(const std::string& socket_path);
  ~SubscriberConnection();
  SubscriberConnection(const SubscriberConnection&) = delete;
  SubscriberConnection& operator=(const SubscriberConnection&) = delete;

  int fd() const { return fd_; }
  void send(std::string_view text);  // all of it, waiting up to 10 s for room
  // The next line; nullopt on timeout or at end of file.
  std::optional<std::string> next_line(rdmatest::Duration timeout);
  nlohmann::json require_json(rdmatest::Duration timeout);
  // Lines up to and including the first for which `done` holds (HarnessError on timeout).
  std::vector<nlohmann::json> read_until(const std::function<bool(const nlohmann::json&)>& done,
                                         rdmatest::Duration timeout);
  // Whatever is readable now (up to max_bytes), appended to the line buffer; false at end of
  // file.
  bool read_available(size_t max_bytes);
  // Waits until something can be read (or the daemon closed); false on timeout.
  bool wait_readable(rdmatest::Duration timeout);
  // Takes the complete lines read so far (for bulk readers).
  std::string take_complete_lines();

 private:
  int fd_ = -1;
  std::string buf_;
  bool eof_ = false;
};

// A reply or an error answering request `id`.
std::function<bool(const nlohmann::json&)> reply_to(const nlohmann::json& id);

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
