#include "daemon_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

extern char** environ;

namespace rdma_eventd::bench {
namespace {

constexpr int kMaxChildren = 8;
std::atomic<pid_t> g_children[kMaxChildren];
constexpr size_t kTailLines = 20;

void remember(pid_t pid) {
  for (auto& slot : g_children) {
    pid_t empty = 0;
    if (slot.compare_exchange_strong(empty, pid)) return;
  }
}

void forget(pid_t pid) {
  for (auto& slot : g_children) {
    pid_t mine = pid;
    if (slot.compare_exchange_strong(mine, 0)) return;
  }
}

extern "C" void on_fatal_signal(int sig) {
  for (auto& slot : g_children) {
    const pid_t pid = slot.load();
    if (pid > 0) ::kill(pid, SIGTERM);
  }
  _exit(128 + sig);
}

}  // namespace

void install_cleanup_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_fatal_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

DaemonProcess::DaemonProcess(const std::vector<std::string>& argv,
                             const std::vector<std::string>& extra_env, int64_t* spawn_ns) {
  if (argv.empty()) throw BenchError("no daemon command line after --");
  int err[2];
  if (pipe2(err, O_CLOEXEC) != 0) throw BenchError(errno_text("pipe2"));
  UniqueFd read_end(err[0]), write_end(err[1]);

  std::vector<std::string> env_text;
  for (char** e = environ; *e; ++e)
    env_text.emplace_back(*e);
  for (const std::string& kv : extra_env)
    env_text.push_back(kv);
  std::vector<char*> envp, args;
  for (auto& s : env_text)
    envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (auto& s : argv_copy)
    args.push_back(s.data());
  args.push_back(nullptr);

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, write_end.get(), STDERR_FILENO);
  posix_spawn_file_actions_addclosefrom_np(&fa, 3);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // The child starts with default signal handling, whatever this program installed.
  sigset_t all;
  sigfillset(&all);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
  if (spawn_ns) *spawn_ns = mono_ns();
  const int rc = posix_spawn(&pid_, args[0], &fa, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) throw BenchError("cannot run " + argv[0] + ": " + std::strerror(rc));
  remember(pid_);
  err_ = std::move(read_end);
  fcntl(err_.get(), F_SETFL, O_NONBLOCK);
}

DaemonProcess::~DaemonProcess() {
  stop();
}

bool DaemonProcess::read_stderr(std::vector<std::string>& lines) {
  char buf[16384];
  for (;;) {
    const ssize_t n = ::read(err_.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return true;  // EAGAIN: nothing more now
    if (n == 0) return false;
    partial_.append(buf, static_cast<size_t>(n));
    size_t nl;
    while ((nl = partial_.find('\n')) != std::string::npos) {
      std::string line = partial_.substr(0, nl);
      partial_.erase(0, nl + 1);
      tail_.push_back(line);
      if (tail_.size() > kTailLines) tail_.erase(tail_.begin());
      lines.push_back(std::move(line));
    }
  }
}

bool DaemonProcess::exited() {
  if (pid_ <= 0) return true;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) != pid_) return false;
  forget(pid_);
  pid_ = -1;
  return true;
}

std::string DaemonProcess::log_tail() const {
  std::string text;
  for (const auto& l : tail_)
    text += "\n  " + l;
  return text.empty() ? " (no output)" : text;
}

void DaemonProcess::stop() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  const int64_t deadline = mono_ns() + 10'000'000'000;
  while (!exited()) {
    if (mono_ns() > deadline) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
      forget(pid_);
      pid_ = -1;
      return;
    }
    std::vector<std::string> ignored;
    read_stderr(ignored);
    pollfd p{err_.get(), POLLIN, 0};
    ::poll(&p, 1, 10);
  }
}

NotifySocket::NotifySocket() {
  static std::atomic<int> counter{0};
  const std::string name =
      "rdma-eventd-bench-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
  fd_ = UniqueFd(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd_) throw BenchError(errno_text("socket"));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path + 1, name.data(), name.size());  // sun_path[0] == 0: abstract
  const socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  if (::bind(fd_.get(), reinterpret_cast<sockaddr*>(&addr), len) != 0)
    throw BenchError(errno_text("bind the notification socket"));
  address_ = "@" + name;
}

std::optional<std::string> NotifySocket::receive() {
  char buf[4096];
  for (;;) {
    const ssize_t n = ::recv(fd_.get(), buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::nullopt;
    return std::string(buf, static_cast<size_t>(n));
  }
}

bool has_line(const std::string& datagram, const std::string& line) {
  size_t start = 0;
  while (start <= datagram.size()) {
    const size_t end = std::min(datagram.find('\n', start), datagram.size());
    if (datagram.compare(start, end - start, line) == 0) return true;
    start = end + 1;
  }
  return false;
}

}  // namespace rdma_eventd::bench
