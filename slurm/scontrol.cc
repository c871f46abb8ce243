#include "scontrol.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <vector>

extern char** environ;

namespace rdma_eventd_slurm {

namespace {

// Children killed that had not gone kReapGrace later: reaped when they go, at a later run.
std::vector<pid_t>& left_behind() {
  static std::vector<pid_t> pids;
  return pids;
}

void reap_left_behind() {
  std::vector<pid_t>& pids = left_behind();
  std::erase_if(pids, [](pid_t pid) {
    int status = 0;
    const pid_t w = ::waitpid(pid, &status, WNOHANG);
    return w == pid || (w < 0 && errno == ECHILD);
  });
}

// Kills the child's process group and reaps the child within kReapGrace; false (the child kept
// for reap_left_behind) when it is still there then.
bool kill_and_reap(pid_t pid) {
  ::kill(-pid, SIGKILL);
  const auto until = std::chrono::steady_clock::now() + kReapGrace;
  for (;;) {
    int status = 0;
    const pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid || (w < 0 && errno != EINTR)) return true;
    if (std::chrono::steady_clock::now() >= until) {
      left_behind().push_back(pid);
      return false;
    }
    ::usleep(10000);
  }
}

// Closes the descriptor it owns.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace

CommandResult run_command(const std::string& program, const std::vector<std::string>& args,
                          std::chrono::milliseconds timeout) {
  reap_left_behind();
  CommandResult r;
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    r.output = std::string("pipe: ") + std::strerror(errno);
    return r;
  }
  Fd read_end(pipe_fds[0]);
  Fd write_end(pipe_fds[1]);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, write_end.get(), STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, write_end.get(), STDERR_FILENO);
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(program.c_str()));
  for (const std::string& a : args)
    argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  // The child starts with no signal blocked and default dispositions, whatever ours are.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int sig : {SIGTERM, SIGINT, SIGPIPE, SIGHUP})
    sigaddset(&defaults, sig);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  // Its own process group, so that a timeout kills whatever it started too.
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
  pid_t pid = -1;
  const int rc = ::posix_spawnp(&pid, program.c_str(), &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    r.output = std::strerror(rc);
    return r;
  }
  write_end.reset();

  const auto deadline = std::chrono::steady_clock::now() + timeout;
  char buf[4096];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      r.kind = CommandResult::kTimedOut;
      break;
    }
    pollfd p{read_end.get(), POLLIN, 0};
    const int n = ::poll(&p, 1, static_cast<int>(left.count()));
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) continue;  // the deadline is checked above
    const ssize_t got = ::read(read_end.get(), buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;  // end of output (the child's copies are closed)
    const size_t room = kMaxCommandOutput - r.output.size();
    if (static_cast<size_t>(got) > room) r.truncated = true;
    r.output.append(buf, std::min(static_cast<size_t>(got), room));
  }
  if (r.kind == CommandResult::kTimedOut) {
    r.left_behind = !kill_and_reap(pid);
    return r;
  }
  // The output ended; the child is exiting. Wait for it within what is left of the deadline.
  int status = 0;
  for (;;) {
    const pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      r.kind = CommandResult::kTimedOut;
      r.left_behind = !kill_and_reap(pid);
      return r;
    }
    ::usleep(2000);
  }
  r.kind = CommandResult::kExited;
  r.exit_code = exit_code_of(status);
  // posix_spawnp reports a program it cannot execute as exit 127 from the child.
  if (r.exit_code == 127 && r.output.empty()) {
    r.kind = CommandResult::kNotStarted;
    r.output = "cannot execute it (missing, or not executable)";
  }
  return r;
}

std::string command_text(const std::string& program, const std::vector<std::string>& args) {
  std::string text = program;
  for (const std::string& a : args) {
    text += ' ';
    if (a.find_first_of(" \t'\"\\$`;&|<>()*?[]#~") == std::string::npos) {
      text += a;
      continue;
    }
    // key='value with spaces', with ' written as '\''
    const size_t eq = a.find('=');
    std::string head = eq == std::string::npos ? "" : a.substr(0, eq + 1);
    std::string value = eq == std::string::npos ? a : a.substr(eq + 1);
    text += head + "'";
    for (char c : value)
      text += c == '\'' ? std::string("'\\''") : std::string(1, c);
    text += "'";
  }
  return text;
}

std::string describe_failure(const std::string& program, const std::vector<std::string>& args,
                             const CommandResult& r) {
  std::string out = r.output;
  while (!out.empty() && (out.back() == '\n' || out.back() == ' '))
    out.pop_back();
  if (const size_t nl = out.rfind('\n'); nl != std::string::npos) out = out.substr(nl + 1);
  const std::string cmd = "'" + command_text(program, args) + "'";
  switch (r.kind) {
    case CommandResult::kNotStarted:
      return cmd + " could not be run: " + out;
    case CommandResult::kTimedOut:
      return cmd + (r.left_behind ? " did not finish in time, and did not go when killed (stuck "
                                    "in the kernel, as on a hung file system): left behind"
                                  : " did not finish in time and was killed");
    case CommandResult::kExited:
      return cmd + " failed (exit " + std::to_string(r.exit_code) + ")" +
             (out.empty() ? "" : ": " + out);
  }
  return cmd;
}

CommandRunner& process_runner() {
  struct ProcessRunner final : CommandRunner {
    CommandResult run(const std::string& program, const std::vector<std::string>& args,
                      std::chrono::milliseconds timeout) override {
      return run_command(program, args, timeout);
    }
  };
  static ProcessRunner runner;
  return runner;
}

}  // namespace rdma_eventd_slurm
