#include "line_client.h"

#include <grp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "rdma_eventd/internal/fd_message.h"

namespace rdmatest {

using nlohmann::json;
using rdma_eventd::internal::UniqueFd;

namespace {

int poll_ms(Clock::time_point deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, 60000));
}

sockaddr_un address_of(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) throw HarnessError("socket path too long: " + path);
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  return addr;
}

// A blocking socket: connect() waits while the daemon's backlog is full, as a client's would.
// Reads and writes never block (MSG_DONTWAIT): every wait has a deadline.
UniqueFd connect_to(const std::string& path) {
  const sockaddr_un addr = address_of(path);
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) throw HarnessError(std::string("socket: ") + std::strerror(errno));
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    throw HarnessError("connect " + path + ": " + std::strerror(errno));
  }
  return fd;
}

// In the child: take the ids, connect, and send the connection (or the errno) to the parent.
// Only system calls between fork and _exit: the test process may have threads.
[[noreturn]] void connect_in_child(int channel, const sockaddr_un& addr, const Credentials& as) {
  int err = 0;
  int fd = -1;
  if (::setgroups(as.groups.size(), as.groups.data()) != 0 ||
      ::setresgid(as.gid, as.gid, as.gid) != 0 || ::setresuid(as.uid, as.uid, as.uid) != 0) {
    err = errno;
  } else if ((fd = ::socket(AF_UNIX, SOCK_STREAM, 0)) < 0 ||
             ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    err = errno;
  }
  rdma_eventd::internal::FdMessage msg(&err, sizeof err);
  if (err == 0) msg.attach(fd);
  ::_exit(::sendmsg(channel, msg.get(), 0) == sizeof err ? 0 : 1);
}

UniqueFd connect_as(const std::string& path, const Credentials& as) {
  const sockaddr_un addr = address_of(path);
  int channel[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, channel) != 0) {
    throw HarnessError(std::string("socketpair: ") + std::strerror(errno));
  }
  UniqueFd ours(channel[0]), theirs(channel[1]);
  const pid_t pid = ::fork();
  if (pid < 0) throw HarnessError(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) connect_in_child(theirs.get(), addr, as);
  theirs.reset();
  int err = -1;
  rdma_eventd::internal::FdMessage msg(&err, sizeof err);
  msg.make_room();
  const ssize_t n = ::recvmsg(ours.get(), msg.get(), MSG_CMSG_CLOEXEC);
  int status = 0;
  ::waitpid(pid, &status, 0);
  UniqueFd fd(n == sizeof err ? msg.received_fd() : -1);
  if (n != sizeof err || err != 0 || !fd) {
    throw HarnessError("connect " + path + " as uid " + std::to_string(as.uid) + ": " +
                       (n == sizeof err && err > 0 ? std::strerror(err) : "the child failed"));
  }
  return fd;
}

}  // namespace

LineClient::LineClient(const std::string& path) : fd_(connect_to(path)) {}

LineClient::LineClient(const std::string& path, const Credentials& as)
    : fd_(connect_as(path, as)) {}

void LineClient::send(std::string_view text) {
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  while (!text.empty()) {
    const ssize_t n = ::send(fd_.get(), text.data(), text.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      text.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EINTR) {
      throw HarnessError(std::string("send: ") + std::strerror(errno));
    }
    pollfd p{fd_.get(), POLLOUT, 0};
    if (::poll(&p, 1, poll_ms(deadline)) == 0) throw HarnessError("send: no room for 10 s");
  }
}

void LineClient::shutdown_write() {
  ::shutdown(fd_.get(), SHUT_WR);
}

bool LineClient::read_available(size_t max_bytes) {
  char chunk[65536];
  size_t got = 0;
  while (got < max_bytes && !eof_) {
    const ssize_t n =
        ::recv(fd_.get(), chunk, std::min(sizeof chunk, max_bytes - got), MSG_DONTWAIT);
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

bool LineClient::wait_readable(Duration timeout) {
  pollfd p{fd_.get(), POLLIN, 0};
  return ::poll(&p, 1, poll_ms(Clock::now() + timeout)) > 0;
}

std::string LineClient::take_complete_lines() {
  const size_t end = buf_.rfind('\n');
  if (end == std::string::npos || end < pos_) return {};
  std::string lines = buf_.substr(pos_, end + 1 - pos_);
  buf_.erase(0, end + 1);
  pos_ = 0;
  return lines;
}

bool LineClient::fill(Duration timeout) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    const size_t before = buf_.size();
    if (!read_available(65536)) return buf_.size() > before;
    if (buf_.size() > before) return true;
    if (!wait_readable(deadline - Clock::now())) return false;
  }
}

std::optional<std::string> LineClient::next_line(Duration timeout) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    const size_t nl = buf_.find('\n', pos_);
    if (nl != std::string::npos) {
      std::string line = buf_.substr(pos_, nl - pos_);
      pos_ = nl + 1;
      if (pos_ > 65536 && pos_ > buf_.size() / 2) {
        buf_.erase(0, pos_);
        pos_ = 0;
      }
      return line;
    }
    const auto left = deadline - Clock::now();
    if (left <= Duration::zero() || !fill(left)) {
      if (buf_.find('\n', pos_) == std::string::npos) return std::nullopt;
    }
  }
}

std::string LineClient::require_line(Duration timeout, const std::string& what) {
  auto line = next_line(timeout);
  if (!line) {
    throw HarnessError("waited in vain for " + what + (eof_ ? " (the daemon closed)" : "") +
                       "; unread: " + buf_.substr(pos_));
  }
  return *line;
}

json LineClient::require_json(Duration timeout, const std::string& what) {
  const std::string line = require_line(timeout, what);
  try {
    return json::parse(line);
  } catch (const json::exception& e) {
    throw HarnessError("not JSON: " + line);
  }
}

std::vector<json> LineClient::read_until(const std::function<bool(const json&)>& done,
                                         Duration timeout) {
  const auto deadline = Clock::now() + timeout;
  std::vector<json> lines;
  for (;;) {
    auto line = next_line(deadline - Clock::now());
    if (!line) {
      std::string tail;
      for (size_t i = lines.size() > 5 ? lines.size() - 5 : 0; i < lines.size(); ++i)
        tail += "\n  " + lines[i].dump();
      throw HarnessError("waited in vain for the expected line" +
                         std::string(eof_ ? " (the daemon closed)" : "") + " after " +
                         std::to_string(lines.size()) + " lines; the last ones:" + tail);
    }
    lines.push_back(json::parse(*line));
    if (done(lines.back())) return lines;
  }
}

std::vector<json> LineClient::read_to_eof(Duration timeout) {
  const auto deadline = Clock::now() + timeout;
  std::vector<json> lines;
  while (auto line = next_line(deadline - Clock::now()))
    lines.push_back(json::parse(*line));
  if (!eof_) throw HarnessError("the daemon did not close the connection in time");
  return lines;
}

std::function<bool(const json&)> reply_to(const json& id) {
  return [id](const json& l) {
    const std::string type = l.value("type", "");
    return (type == "reply" || type == "error") && l.contains("id") && l["id"] == id;
  };
}

}  // namespace rdmatest
