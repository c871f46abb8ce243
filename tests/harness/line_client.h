// A raw client of the daemon's subscriber socket that speaks protocol v1 by hand
// (docs/protocol.md): it sends lines and reads lines with deadlines, for the tests that must see
// exactly what goes over the wire.
//
//   LineClient c(daemon.socket());
//   json hello = c.require_json(10s, "the hello");
//   c.send(R"({"op":"ping","id":1})" "\n");
//   std::vector<json> lines = c.read_until(reply_to(1), 10s);
//
// Bulk readers (a storm's subscribers) use read_available() and take_complete_lines() instead,
// on a descriptor they watch themselves.
#pragma once

#include <sys/types.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "process.h"
#include "rdma_eventd/internal/unique_fd.h"

namespace rdmatest {

// Another user, for a connection made by a short-lived child of the test that takes these ids
// (no passwd entry needed) before it connects and hands the connection back.
struct Credentials {
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // supplementary
};

class LineClient {
 public:
  explicit LineClient(const std::string& path);  // HarnessError when it cannot connect
  LineClient(const std::string& path, const Credentials& as);
  LineClient(const LineClient&) = delete;
  LineClient& operator=(const LineClient&) = delete;

  int fd() const { return fd_.get(); }
  // Writes all of `text`, waiting for room up to 10 s.
  void send(std::string_view text);
  void shutdown_write();

  // The next line; nullopt on timeout or at end of file (then eof() is true).
  std::optional<std::string> next_line(Duration timeout);
  std::string require_line(Duration timeout, const std::string& what = "a line");
  nlohmann::json require_json(Duration timeout, const std::string& what = "a line");
  // Lines up to and including the first for which `done` holds (HarnessError on timeout,
  // showing what was read).
  std::vector<nlohmann::json> read_until(const std::function<bool(const nlohmann::json&)>& done,
                                         Duration timeout);
  // Reads until the daemon closes the connection; returns the lines read on the way.
  std::vector<nlohmann::json> read_to_eof(Duration timeout);
  bool eof() const { return eof_; }

  // Whatever can be read now without waiting (up to max_bytes); false at end of file.
  bool read_available(size_t max_bytes);
  // Waits until something can be read (or the daemon closed); false on timeout.
  bool wait_readable(Duration timeout);
  // Takes the complete lines read so far and not returned yet, each ending with '\n'.
  std::string take_complete_lines();

 private:
  bool fill(Duration timeout);  // reads more; false on timeout or end of file

  rdma_eventd::internal::UniqueFd fd_;
  std::string buf_;  // received; lines before pos_ have been returned
  size_t pos_ = 0;
  bool eof_ = false;
};

// A reply or an error answering request `id`.
std::function<bool(const nlohmann::json&)> reply_to(const nlohmann::json& id);

}  // namespace rdmatest
