#include "util.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>

namespace rdma_eventd::bench {

int64_t mono_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

std::string errno_text(const std::string& what) {
  return what + ": " + std::strerror(errno);
}

Args::Args(int argc, char** argv, const std::vector<std::string>& options,
           const std::vector<std::string>& flags) {
  const std::string sub = argc > 0 ? argv[0] : "";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--") {
      command_.assign(argv + i + 1, argv + argc);
      return;
    }
    if (a.rfind("--", 0) != 0) throw BenchError(sub + ": unexpected argument '" + a + "'");
    const std::string key = a.substr(2);
    if (std::find(flags.begin(), flags.end(), key) != flags.end()) {
      flags_[key] = true;
    } else if (std::find(options.begin(), options.end(), key) != options.end()) {
      if (i + 1 >= argc) throw BenchError(sub + ": " + a + " needs a value");
      values_[key] = argv[++i];
    } else {
      throw BenchError(sub + ": unknown option '" + a + "'");
    }
  }
}

std::string Args::str(const std::string& key) const {
  auto it = values_.find(key);
  if (it == values_.end()) throw BenchError("--" + key + " is required");
  return it->second;
}

std::string Args::str(const std::string& key, const std::string& fallback) const {
  auto it = values_.find(key);
  return it == values_.end() ? fallback : it->second;
}

uint64_t Args::num(const std::string& key) const {
  const std::string v = str(key);
  char* end = nullptr;
  errno = 0;
  const unsigned long long n = std::strtoull(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || errno != 0 || v[0] == '-')
    throw BenchError("--" + key + ": '" + v + "' is not a number");
  return n;
}

uint64_t Args::num(const std::string& key, uint64_t fallback) const {
  return values_.count(key) ? num(key) : fallback;
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find(sep, start), text.size());
    if (end > start) out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

std::string first_line_with(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key, 0) == 0) {
      const size_t colon = line.find_first_of(":=");
      std::string v = colon == std::string::npos ? line : line.substr(colon + 1);
      v.erase(0, v.find_first_not_of(" \t\""));
      while (!v.empty() && (v.back() == '"' || v.back() == ' '))
        v.pop_back();
      return v;
    }
  return "unknown";
}

UniqueFd connect_unix(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) throw BenchError("socket path too long: " + path);
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) throw BenchError(errno_text("socket"));
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    throw BenchError(errno_text("connect " + path));
  return fd;
}

void write_all(int fd, const std::string& data) {
  for (size_t off = 0; off < data.size();) {
    const ssize_t n = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw BenchError(errno_text("send"));
    off += static_cast<size_t>(n);
  }
}

std::string read_line(int fd, std::string& carry, int timeout_ms) {
  const int64_t deadline = mono_ns() + int64_t{timeout_ms} * 1000000;
  char buf[65536];
  for (;;) {
    const size_t nl = carry.find('\n');
    if (nl != std::string::npos) {
      std::string line = carry.substr(0, nl);
      carry.erase(0, nl + 1);
      return line;
    }
    const int64_t left_ms = (deadline - mono_ns()) / 1000000;
    if (left_ms <= 0)
      throw BenchError("no complete line within " + std::to_string(timeout_ms) + " ms");
    pollfd p{fd, POLLIN, 0};
    const int rc = ::poll(&p, 1, static_cast<int>(left_ms));
    if (rc < 0 && errno == EINTR) continue;
    if (rc < 0) throw BenchError(errno_text("poll"));
    if (rc == 0) continue;
    const ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) throw BenchError(errno_text("recv"));
    if (n == 0) throw BenchError("connection closed before a complete line");
    carry.append(buf, static_cast<size_t>(n));
  }
}

uint64_t raise_nofile_limit() {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) throw BenchError(errno_text("getrlimit"));
  if (rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0) throw BenchError(errno_text("setrlimit"));
  }
  return rl.rlim_cur;
}

void emit_result(const std::string& path, const std::string& json_line) {
  if (path.empty()) {
    std::printf("%s\n", json_line.c_str());
    std::fflush(stdout);
    return;
  }
  // O_APPEND: several measurements running at once (the idle runs) each add whole lines.
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
  if (!fd) throw BenchError(errno_text("open " + path));
  const std::string line = json_line + "\n";
  if (::write(fd.get(), line.data(), line.size()) != static_cast<ssize_t>(line.size()))
    throw BenchError(errno_text("write " + path));
}

}  // namespace rdma_eventd::bench
