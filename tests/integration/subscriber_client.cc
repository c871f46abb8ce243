#include "subscriber_client.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

namespace rdma_eventd::test {

using nlohmann::json;
using rdmatest::Clock;
using rdmatest::Duration;
using rdmatest::HarnessError;

namespace {

int poll_ms(Clock::time_point deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, 60000));
}

}  // namespace

int connect_socket(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) throw HarnessError("socket path too long: " + path);
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) throw HarnessError(std::string("socket: ") + std::strerror(errno));
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    const int err = errno;
    ::close(fd);
    throw HarnessError("connect " + path + ": " + std::strerror(err));
  }
  return fd;
}

SubscriberConnection::SubscriberConnection(const std::string& socket_path)
    : fd_(connect_socket(socket_path)) {}

SubscriberConnection::~SubscriberConnection() {
  if (fd_ >= 0) ::close(fd_);
}

void SubscriberConnection::send(std::string_view text) {
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  while (!text.empty()) {
    const ssize_t n = ::send(fd_, text.data(), text.size(), MSG_NOSIGNAL);
    if (n > 0) {
      text.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EINTR) {
      throw HarnessError(std::string("send: ") + std::strerror(errno));
    }
    pollfd p{fd_, POLLOUT, 0};
    if (::poll(&p, 1, poll_ms(deadline)) == 0) throw HarnessError("send: no room for 10 s");
  }
}

bool SubscriberConnection::read_available(size_t max_bytes) {
  char chunk[1 << 16];
  size_t got = 0;
  while (got < max_bytes && !eof_) {
    const ssize_t n = ::recv(fd_, chunk, std::min(sizeof chunk, max_bytes - got), 0);
    if (n > 0) {
      buf_.append(chunk, static_cast<size_t>(n));
      got += static_cast<size_t>(n);
      continue;
    }
    if (n == 0 || errno == ECONNRESET) {
      eof_ = true;
      break;
    }
    if (errno == EAGAIN || errno == EINTR) break;
    throw HarnessError(std::string("recv: ") + std::strerror(errno));
  }
  return !eof_;
}

bool SubscriberConnection::wait_readable(Duration timeout) {
  pollfd p{fd_, POLLIN, 0};
  return ::poll(&p, 1, poll_ms(Clock::now() + timeout)) > 0;
}

std::string SubscriberConnection::take_complete_lines() {
  const size_t end = buf_.rfind('\n');
  if (end == std::string::npos) return {};
  std::string lines = buf_.substr(0, end + 1);
  buf_.erase(0, end + 1);
  return lines;
}

std::optional<std::string> SubscriberConnection::next_line(Duration timeout) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    const size_t nl = buf_.find('\n');
    if (nl != std::string::npos) {
      std::string line = buf_.substr(0, nl);
      buf_.erase(0, nl + 1);
      return line;
    }
    if (eof_) return std::nullopt;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, poll_ms(deadline)) <= 0) return std::nullopt;
    read_available(1 << 20);
  }
}

json SubscriberConnection::require_json(Duration timeout) {
  auto line = next_line(timeout);
  if (!line) throw HarnessError(eof_ ? "the daemon closed the connection" : "no line in time");
  return json::parse(*line);
}

std::vector<json> SubscriberConnection::read_until(const std::function<bool(const json&)>& done,
                                                   Duration timeout) {
  const auto deadline = Clock::now() + timeout;
  std::vector<json> lines;
  for (;;) {
    auto line = next_line(deadline - Clock::now());
    if (!line) {
      throw HarnessError("waited in vain for the expected line after " +
                         std::to_string(lines.size()) + " lines" +
                         (lines.empty() ? "" : "; the last: " + lines.back().dump()));
    }
    lines.push_back(json::parse(*line));
    if (done(lines.back())) return lines;
  }
}

std::function<bool(const json&)> reply_to(const json& id) {
  return [id](const json& l) {
    const std::string type = l.value("type", "");
    return (type == "reply" || type == "error") && l.contains("id") && l["id"] == id;
  };
}

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
