#include "hub_support.h"

#include <grp.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "paths.h"

namespace rdma_eventd::subtest {

using rdmatest::Clock;
using rdmatest::HarnessError;

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
  iovec iov{&err, sizeof err};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  if (err == 0) {
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
  }
  ::_exit(::sendmsg(channel, &msg, 0) == sizeof err ? 0 : 1);
}

int connect_as(const std::string& path, const Credentials& as) {
  const sockaddr_un addr = address_of(path);
  int channel[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, channel) != 0) {
    throw HarnessError(std::string("socketpair: ") + std::strerror(errno));
  }
  const pid_t pid = ::fork();
  if (pid < 0) throw HarnessError(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::close(channel[0]);
    connect_in_child(channel[1], addr, as);
  }
  ::close(channel[1]);
  int err = -1;
  iovec iov{&err, sizeof err};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  const ssize_t n = ::recvmsg(channel[0], &msg, MSG_CMSG_CLOEXEC);
  ::close(channel[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  const cmsghdr* c = CMSG_FIRSTHDR(&msg);
  if (n != sizeof err || err != 0 || !c || c->cmsg_type != SCM_RIGHTS) {
    throw HarnessError("connect " + path + " as uid " + std::to_string(as.uid) + ": " +
                       (n == sizeof err && err > 0 ? std::strerror(err) : "the child failed"));
  }
  int fd = -1;
  std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
  return fd;
}

}  // namespace

void open_directory_to_everyone(const HubDaemon& d) {
  if (::chmod(d.dir().c_str(), 0755) != 0) {
    throw HarnessError("chmod " + d.dir() + ": " + std::strerror(errno));
  }
}

void reload(HubDaemon& d, const std::string& socket_members, bool expect_failure) {
  const std::string config = d.dir() + "/rdma-eventd.json";
  std::ofstream(config, std::ios::trunc) << "{\"socket\": {" + socket_members + "}}";
  d.process().signal(SIGHUP);
  d.process().require_line(
      rdmatest::contains(expect_failure ? "reload failed" : "configuration reloaded"), 20s,
      rdmatest::Stream::kStderr, "the reload's outcome");
}

HubDaemon::HubDaemon(const rdmatest::SimFabric& sim, const HubOptions& options)
    : socket_(dir_.file("events.sock")) {
  // The default log level: the test reads the daemon's log only when it waits for a line, and
  // a debug log of a thousand subscribers would fill the pipe and block the daemon.
  const std::string config =
      dir_.write("rdma-eventd.json", "{\"socket\": {" + options.socket + "}}");
  std::vector<std::string> argv = {
      rdmatest::bin("rdma-eventd"), "-f", "--no-journal", "-c", config, "--socket", socket_};
  if (options.print_records) argv.push_back("--print-records");
  argv.insert(argv.end(), options.extra_args.begin(), options.extra_args.end());
  proc_ = std::make_unique<rdmatest::Process>(sim.spawn(argv));
  const std::string started = proc_->require_line(rdmatest::contains("started: stream "), 30s,
                                                  rdmatest::Stream::kStderr, "the start line");
  const auto pos = started.find("stream ") + 7;
  stream_ = started.substr(pos, started.find(',', pos) - pos);
  proc_->require_line(rdmatest::contains("ready: "), 30s, rdmatest::Stream::kStderr,
                      "the ready line");
}

// Every daemon a test leaves running must stop cleanly: exit 0 on SIGTERM, which in a sanitizer
// build also means no leak and no sanitizer report.
HubDaemon::~HubDaemon() {
  if (!proc_) return;
  if (auto problem = rdmatest::stop_expecting_clean_exit(*proc_)) ADD_FAILURE() << *problem;
}

std::string HubDaemon::log_tail(size_t lines) {
  proc_->pump();
  const auto& all = proc_->stderr_lines();
  std::string out;
  for (size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i)
    out += "\n  " + all[i];
  return out;
}

void inject(const rdmatest::SimFabric& sim, const std::vector<std::string>& args) {
  const rdmatest::CommandResult r = sim.ctl(args);
  if (r.exit_code() != 0) {
    std::string cmd;
    for (const auto& a : args)
      cmd += " " + a;
    throw HarnessError("rdma-sim" + cmd + " refused (" + r.status.describe() + "): " + r.err);
  }
}

void storm(const rdmatest::SimFabric& sim, int count, const std::string& target) {
  inject(sim, {"storm", "--count", std::to_string(count), "--targets", target});
}

void wait_for_seq(const std::string& socket, uint64_t seq, Duration timeout) {
  LineClient c(socket);
  c.send(R"({"op":"subscribe","events":["unknown"],"devices":["none"]})"
         "\n");
  uint64_t last = 0;
  int id = 0;
  const bool reached = rdmatest::wait_until(
      [&] {
        c.send(json{{"op", "ping"}, {"id", ++id}}.dump() + "\n");
        last = c.read_until(reply_to(id), timeout).back()["seq"].get<uint64_t>();
        return last >= seq;
      },
      timeout);
  if (!reached) {
    throw HarnessError("the daemon published up to seq " + std::to_string(last) + ", not " +
                       std::to_string(seq));
  }
}

LineClient::LineClient(const std::string& path, const Credentials& as)
    : fd_(connect_as(path, as)) {}

LineClient::LineClient(const std::string& path) {
  const sockaddr_un addr = address_of(path);
  fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) throw HarnessError(std::string("socket: ") + std::strerror(errno));
  if (::connect(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    const int err = errno;
    ::close(fd_);
    throw HarnessError("connect " + path + ": " + std::strerror(err));
  }
}

LineClient::~LineClient() {
  if (fd_ >= 0) ::close(fd_);
}

void LineClient::send(std::string_view text) {
  const auto deadline = Clock::now() + 10s;
  while (!text.empty()) {
    const ssize_t n = ::send(fd_, text.data(), text.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
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

void LineClient::shutdown_write() {
  ::shutdown(fd_, SHUT_WR);
}

bool LineClient::fill(Duration timeout) {
  if (eof_) return false;
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    char chunk[65536];
    const ssize_t n = ::recv(fd_, chunk, sizeof chunk, MSG_DONTWAIT);
    if (n > 0) {
      buf_.append(chunk, static_cast<size_t>(n));
      return true;
    }
    if (n == 0 || (n < 0 && errno == ECONNRESET)) {
      eof_ = true;
      return false;
    }
    if (errno != EAGAIN && errno != EINTR) {
      throw HarnessError(std::string("recv: ") + std::strerror(errno));
    }
    pollfd p{fd_, POLLIN, 0};
    const int r = ::poll(&p, 1, poll_ms(deadline));
    if (r == 0) return false;
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

bool is_record(const json& line) {
  return line.is_object() && !line.contains("type");
}

bool is_snapshot(const json& line) {
  return is_record(line) && line.value("event", "") == "snapshot";
}

std::function<bool(const json&)> reply_to(const json& id) {
  return [id](const json& l) {
    const std::string type = l.value("type", "");
    return (type == "reply" || type == "error") && l.contains("id") && l["id"] == id;
  };
}

std::function<bool(const json&)> record_with_seq(uint64_t seq) {
  return [seq](const json& l) { return is_record(l) && !is_snapshot(l) && l["seq"] == seq; };
}

std::vector<json> live_records(const std::vector<json>& lines) {
  std::vector<json> out;
  for (const auto& l : lines) {
    if (is_record(l) && !is_snapshot(l)) out.push_back(l);
  }
  return out;
}

std::vector<uint64_t> seqs_of(const std::vector<json>& records) {
  std::vector<uint64_t> out;
  for (const auto& r : records)
    out.push_back(r["seq"].get<uint64_t>());
  return out;
}

}  // namespace rdma_eventd::subtest
