#include "notify_receiver.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace rdma_eventd::systest {

using rdmatest::Clock;
using rdmatest::HarnessError;

bool Notification::has(const std::string& name, const std::string& v) const {
  for (const auto& [n, value] : vars)
    if (n == name && value == v) return true;
  return false;
}

std::string Notification::value(const std::string& name) const {
  for (const auto& [n, v] : vars)
    if (n == name) return v;
  return "";
}

NotifyReceiver::NotifyReceiver() : path_(dir_.file("notify")) {
  fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) throw HarnessError(std::string("socket: ") + std::strerror(errno));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path_.c_str(), sizeof addr.sun_path - 1);
  if (::bind(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    const int err = errno;
    ::close(fd_);
    throw HarnessError("bind " + path_ + ": " + std::strerror(err));
  }
}

NotifyReceiver::~NotifyReceiver() {
  ::close(fd_);
}

rdmatest::SpawnOptions NotifyReceiver::spawn_options(
    rdmatest::SpawnOptions base, const std::map<std::string, std::string>& extra) const {
  base.set["NOTIFY_SOCKET"] = path_;
  for (const auto& [k, v] : extra)
    base.set[k] = v;
  return base;
}

std::optional<Notification> NotifyReceiver::next(rdmatest::Duration timeout) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    pollfd p{fd_, POLLIN, 0};
    const int rc = ::poll(&p, 1, left <= 0 ? 0 : static_cast<int>(left));
    if (rc < 0 && errno == EINTR) continue;
    if (rc < 0) throw HarnessError(std::string("poll: ") + std::strerror(errno));
    if (rc == 0) return std::nullopt;
    char buf[4096];
    const ssize_t n = ::recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n < 0) throw HarnessError(std::string("recv: ") + std::strerror(errno));
    Notification m;
    m.raw.assign(buf, static_cast<size_t>(n));
    size_t pos = 0;
    while (pos < m.raw.size()) {
      size_t nl = m.raw.find('\n', pos);
      if (nl == std::string::npos) nl = m.raw.size();
      const std::string line = m.raw.substr(pos, nl - pos);
      const size_t eq = line.find('=');
      if (!line.empty()) {
        m.vars.emplace_back(line.substr(0, eq), eq == std::string::npos ? "" : line.substr(eq + 1));
      }
      pos = nl + 1;
    }
    received_.push_back(m);
    return m;
  }
}

Notification NotifyReceiver::require(const std::function<bool(const Notification&)>& match,
                                     rdmatest::Duration timeout, const std::string& what) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    const auto left = deadline - Clock::now();
    auto m = next(left > rdmatest::Duration::zero() ? left : rdmatest::Duration::zero());
    if (!m) throw HarnessError("no notification with " + what + "; received:" + describe());
    if (match(*m)) return *m;
  }
}

std::string NotifyReceiver::describe() const {
  std::string out;
  for (const Notification& m : received_) {
    std::string one = m.raw;
    for (char& c : one)
      if (c == '\n') c = '|';
    out += "\n  " + one;
  }
  return received_.empty() ? " nothing" : out;
}

}  // namespace rdma_eventd::systest
