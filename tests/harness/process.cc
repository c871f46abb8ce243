#include "process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <sstream>
#include <thread>
#include <utility>

extern char** environ;

namespace rdmatest {

namespace {

int remaining_ms(Clock::time_point deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, 60000));
}

std::string errno_text(const std::string& what, int err) {
  return what + ": " + strerror(err);
}

}  // namespace

std::string ExitStatus::describe() const {
  if (exited) return "exit " + std::to_string(code);
  if (signaled) return "signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
  return "still running";
}

Process Process::spawn(const std::vector<std::string>& argv, const SpawnOptions& options) {
  if (argv.empty()) throw HarnessError("spawn: empty command line");
  int out[2], err[2], in[2] = {-1, -1};
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0 ||
      (options.stdin_pipe && pipe2(in, O_CLOEXEC) != 0))
    throw HarnessError(errno_text("pipe2", errno));

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (options.stdin_pipe)
    posix_spawn_file_actions_adddup2(&fa, in[0], STDIN_FILENO);
  else
    posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&fa, err[1], STDERR_FILENO);
  if (!options.cwd.empty()) posix_spawn_file_actions_addchdir_np(&fa, options.cwd.c_str());
  // Only stdin, stdout and stderr: whatever the test runner leaked (ctest does) stays out, so the
  // child's fd numbers are the same as when a shell runs it.
  posix_spawn_file_actions_addclosefrom_np(&fa, 3);

  // The child starts with default signal handling and an empty mask, whatever the test runner's.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t all, none;
  sigfillset(&all);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);

  std::map<std::string, std::string> env;
  if (options.inherit_env)
    for (char** e = environ; *e; ++e) {
      const std::string kv = *e;
      const size_t eq = kv.find('=');
      if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
  for (const std::string& k : options.unset)
    env.erase(k);
  for (const auto& [k, v] : options.set)
    env[k] = v;
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : env)
    env_strings.push_back(k + "=" + v);
  std::vector<char*> envp, args;
  for (std::string& s : env_strings)
    envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (std::string& s : argv_copy)
    args.push_back(s.data());
  args.push_back(nullptr);

  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, args[0], &fa, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  close(out[1]);
  close(err[1]);
  if (in[0] >= 0) close(in[0]);
  if (rc != 0) {
    close(out[0]);
    close(err[0]);
    if (in[1] >= 0) close(in[1]);
    throw HarnessError(errno_text("cannot run " + argv[0], rc));
  }
  Process p;
  p.pid_ = pid;
  // A pidfd is readable once the child exits; on kernels without one, the exit is polled.
  p.pidfd_ = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  p.stdin_fd_ = in[1];
  p.out_.fd = out[0];
  p.err_.fd = err[0];
  p.argv_ = argv;
  fcntl(out[0], F_SETFL, O_NONBLOCK);
  fcntl(err[0], F_SETFL, O_NONBLOCK);
  return p;
}

Process::Process(Process&& o) noexcept {
  *this = std::move(o);
}

Process& Process::operator=(Process&& o) noexcept {
  if (this != &o) {
    if (pid_ > 0 && !status_) {
      kill(pid_, SIGKILL);
      reap(true);
    }
    close_all();
    pid_ = std::exchange(o.pid_, -1);
    pidfd_ = std::exchange(o.pidfd_, -1);
    stdin_fd_ = std::exchange(o.stdin_fd_, -1);
    out_ = std::move(o.out_);
    err_ = std::move(o.err_);
    o.out_.fd = o.err_.fd = -1;
    argv_ = std::move(o.argv_);
    status_ = o.status_;
  }
  return *this;
}

Process::~Process() {
  if (pid_ > 0 && !status_) {
    kill(pid_, SIGKILL);
    reap(true);
  }
  close_all();
}

void Process::close_all() {
  for (int* fd : {&pidfd_, &stdin_fd_, &out_.fd, &err_.fd})
    if (*fd >= 0) close(std::exchange(*fd, -1));
}

void Process::read_pipe(Pipe& p) {
  if (p.fd < 0 || p.eof) return;
  char buf[65536];
  while (true) {
    const ssize_t n = read(p.fd, buf, sizeof buf);
    if (n > 0) {
      p.partial.append(buf, static_cast<size_t>(n));
      size_t nl;
      while ((nl = p.partial.find('\n')) != std::string::npos) {
        p.lines.push_back(p.partial.substr(0, nl));
        p.partial.erase(0, nl + 1);
      }
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) {
      p.eof = true;
      if (!p.partial.empty()) p.lines.push_back(std::exchange(p.partial, {}));
    }
    return;
  }
}

void Process::pump() {
  read_pipe(out_);
  read_pipe(err_);
  reap(false);
}

void Process::reap(bool block) {
  if (pid_ <= 0 || status_) return;
  int st = 0;
  pid_t r;
  do {
    r = waitpid(pid_, &st, block ? 0 : WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r != pid_) return;
  ExitStatus s;
  if (WIFEXITED(st)) s.exited = true, s.code = WEXITSTATUS(st);
  if (WIFSIGNALED(st)) s.signaled = true, s.signal = WTERMSIG(st);
  status_ = s;
}

bool Process::poll_once(Duration timeout) {
  pollfd fds[3];
  int n = 0;
  for (Pipe* p : {&out_, &err_})
    if (p->fd >= 0 && !p->eof) fds[n++] = pollfd{p->fd, POLLIN, 0};
  const bool watch_exit = pidfd_ >= 0 && !status_;
  if (watch_exit) fds[n++] = pollfd{pidfd_, POLLIN, 0};
  int ms = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(timeout).count());
  if (!watch_exit && !status_) ms = std::min(ms, 10);  // no pidfd: check the exit now and then
  const int rc = n ? poll(fds, static_cast<nfds_t>(n), ms) : 0;
  if (n == 0 && ms > 0 && !status_) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  pump();
  return rc > 0;
}

std::optional<std::string> Process::next_line(Duration timeout, Stream s) {
  const auto deadline = Clock::now() + timeout;
  Pipe& p = pipe(s);
  while (true) {
    pump();
    if (p.cursor < p.lines.size()) return p.lines[p.cursor++];
    if (p.eof || (status_ && p.fd < 0)) return std::nullopt;
    const int ms = remaining_ms(deadline);
    if (ms == 0) return std::nullopt;
    poll_once(std::chrono::milliseconds(ms));
  }
}

std::optional<std::string> Process::wait_for_line(
    const std::function<bool(const std::string&)>& match, Duration timeout, Stream s) {
  const auto deadline = Clock::now() + timeout;
  while (auto line = next_line(deadline - Clock::now(), s))
    if (match(*line)) return line;
  return std::nullopt;
}

std::string Process::require_next_line(Duration timeout, Stream s) {
  if (auto line = next_line(timeout, s)) return *line;
  throw HarnessError("no further line on " +
                     std::string(s == Stream::kStdout ? "stdout" : "stderr") +
                     " within the timeout\n" + describe());
}

std::string Process::require_line(const std::function<bool(const std::string&)>& match,
                                  Duration timeout, Stream s, const std::string& what) {
  if (auto line = wait_for_line(match, timeout, s)) return *line;
  throw HarnessError("waited in vain for " + what + " on " +
                     (s == Stream::kStdout ? "stdout" : "stderr") + "\n" + describe());
}

std::string Process::stdout_text() const {
  std::string t;
  for (const std::string& l : out_.lines)
    t += l + "\n";
  return t + out_.partial;
}

std::string Process::stderr_text() const {
  std::string t;
  for (const std::string& l : err_.lines)
    t += l + "\n";
  return t + err_.partial;
}

void Process::write_stdin(const std::string& data) {
  if (stdin_fd_ < 0) throw HarnessError("stdin of " + argv_[0] + " is not a pipe (or is closed)");
  for (size_t off = 0; off < data.size();) {
    const ssize_t n = write(stdin_fd_, data.data() + off, data.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw HarnessError(errno_text("writing to " + argv_[0], errno) + "\n" + describe());
    off += static_cast<size_t>(n);
  }
}

void Process::close_stdin() {
  if (stdin_fd_ >= 0) close(std::exchange(stdin_fd_, -1));
}

bool Process::running() {
  pump();
  return pid_ > 0 && !status_;
}

bool Process::signal(int sig) {
  if (!running()) return false;
  return kill(pid_, sig) == 0;
}

std::optional<ExitStatus> Process::wait_exit(Duration timeout) {
  const auto deadline = Clock::now() + timeout;
  while (true) {
    pump();
    if (status_) {
      // Whatever it wrote before exiting is still in the pipes (unless a grandchild holds them).
      for (Pipe* p : {&out_, &err_})
        if (p->fd >= 0) {
          pollfd pf{p->fd, POLLIN, 0};
          while (!p->eof && poll(&pf, 1, 0) > 0)
            read_pipe(*p);
        }
      return status_;
    }
    const int ms = remaining_ms(deadline);
    if (ms == 0) return std::nullopt;
    poll_once(std::chrono::milliseconds(ms));
  }
}

ExitStatus Process::require_exit(Duration timeout) {
  if (auto s = wait_exit(timeout)) return *s;
  throw HarnessError("process did not exit within the timeout\n" + describe());
}

ExitStatus Process::stop(Duration grace) {
  if (signal(SIGTERM)) {
    if (auto s = wait_exit(grace)) return *s;
    kill(pid_, SIGKILL);
  }
  reap(true);
  pump();
  return status_.value_or(ExitStatus{});
}

std::string Process::describe() const {
  std::ostringstream os;
  os << "command:";
  for (const std::string& a : argv_)
    os << " " << a;
  os << "\npid " << pid_ << ", " << (status_ ? status_->describe() : "still running");
  os << "\n--- stdout ---\n"
     << stdout_text() << "\n--- stderr ---\n"
     << stderr_text() << "\n--------------";
  return os.str();
}

std::vector<std::string> CommandResult::out_lines() const {
  std::vector<std::string> lines;
  std::istringstream in(out);
  for (std::string l; std::getline(in, l);)
    lines.push_back(l);
  return lines;
}

CommandResult run_command(const std::vector<std::string>& argv, const SpawnOptions& options,
                          Duration timeout) {
  Process p = Process::spawn(argv, options);
  auto status = p.wait_exit(timeout);
  if (!status) {
    p.stop(std::chrono::seconds(1));
    throw HarnessError("command timed out\n" + p.describe());
  }
  return CommandResult{*status, p.stdout_text(), p.stderr_text()};
}

bool wait_until(const std::function<bool()>& condition, Duration timeout) {
  const auto deadline = Clock::now() + timeout;
  auto pause = std::chrono::milliseconds(1);
  while (true) {
    if (condition()) return true;
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
}

std::optional<std::string> stop_expecting_clean_exit(Process& p, Duration grace) {
  if (!p.running()) return std::nullopt;  // ended already: whoever ended it looked at how
  const ExitStatus status = p.stop(grace);
  if (status.success()) return std::nullopt;
  std::string err = p.stderr_text();
  constexpr size_t kTail = 16384;  // a sanitizer report fits; a storm's log would not
  if (err.size() > kTail) err = "[...]" + err.substr(err.size() - kTail);
  std::string cmd;
  for (const std::string& a : p.argv())
    cmd += (cmd.empty() ? "" : " ") + a;
  return cmd + "\ndid not stop cleanly on SIGTERM: " + status.describe() +
         "\n--- stderr (end) ---\n" + err + "\n--------------";
}

}  // namespace rdmatest
