#include "notify_receiver.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace rdmatest {

namespace {

Notification parse(std::string raw) {
  Notification m;
  m.raw = std::move(raw);
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
  return m;
}

}  // namespace

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
  fd_.reset(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd_) throw HarnessError(std::string("socket: ") + std::strerror(errno));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path_.c_str(), sizeof addr.sun_path - 1);
  if (::bind(fd_.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    throw HarnessError("bind " + path_ + ": " + std::strerror(errno));
  }
  // Each datagram then says who sent it, as systemd checks it.
  const int on = 1;
  if (::setsockopt(fd_.get(), SOL_SOCKET, SO_PASSCRED, &on, sizeof on) != 0) {
    throw HarnessError(std::string("SO_PASSCRED: ") + std::strerror(errno));
  }
  stop_.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!stop_) throw HarnessError(std::string("eventfd: ") + std::strerror(errno));
  reader_ = std::thread([this] { run(); });
}

NotifyReceiver::~NotifyReceiver() {
  const uint64_t one = 1;
  (void)!::write(stop_.get(), &one, sizeof one);
  reader_.join();
}

SpawnOptions NotifyReceiver::spawn_options(SpawnOptions base,
                                           const std::map<std::string, std::string>& extra) const {
  base.set["NOTIFY_SOCKET"] = path_;
  for (const auto& [k, v] : extra)
    base.set[k] = v;
  return base;
}

void NotifyReceiver::take_waiting() {
  for (;;) {
    char buf[4096];
    iovec iov{buf, sizeof buf};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(ucred))];
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    const ssize_t n = ::recvmsg(fd_.get(), &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return;  // EAGAIN: all taken
    Notification m = parse(std::string(buf, static_cast<size_t>(n)));
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
        ucred cred{};
        std::memcpy(&cred, CMSG_DATA(c), sizeof cred);
        m.pid = cred.pid;
      }
    }
    arrived_.push_back(std::move(m));
  }
}

void NotifyReceiver::run() {
  for (;;) {
    pollfd fds[2] = {{fd_.get(), POLLIN, 0}, {stop_.get(), POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents) return;
    std::lock_guard lock(mu_);
    take_waiting();
    arrived_cv_.notify_all();
  }
}

std::optional<Notification> NotifyReceiver::next(Duration timeout) {
  std::unique_lock lock(mu_);
  take_waiting();  // what was sent before this call, even if the thread has not taken it yet
  if (!arrived_cv_.wait_for(lock, timeout, [this] { return !arrived_.empty(); })) {
    return std::nullopt;
  }
  received_.push_back(std::move(arrived_.front()));
  arrived_.pop_front();
  return received_.back();
}

Notification NotifyReceiver::require(const std::function<bool(const Notification&)>& match,
                                     Duration timeout, const std::string& what) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    const auto left = deadline - Clock::now();
    auto m = next(left > Duration::zero() ? left : Duration::zero());
    if (!m) throw HarnessError("no notification with " + what + "; received:" + describe());
    if (match(*m)) return *m;
  }
}

std::vector<Notification> NotifyReceiver::received() const {
  std::lock_guard lock(mu_);
  return received_;
}

std::string NotifyReceiver::describe() const {
  std::lock_guard lock(mu_);
  // The last ones: a daemon under a storm of connections sends thousands.
  constexpr size_t kShown = 50;
  std::string out;
  const size_t first = received_.size() > kShown ? received_.size() - kShown : 0;
  if (first > 0) out += "\n  (" + std::to_string(first) + " earlier ones)";
  for (size_t i = first; i < received_.size(); ++i) {
    std::string one = received_[i].raw;
    for (char& c : one)
      if (c == '\n') c = '|';
    out += "\n  " + one;
  }
  if (!arrived_.empty()) out += "\n  (and " + std::to_string(arrived_.size()) + " not read yet)";
  return received_.empty() && arrived_.empty() ? " nothing" : out;
}

}  // namespace rdmatest
