// Child processes for tests that run real binaries.
//
//   rdmatest::Process p = rdmatest::Process::spawn({"ibv_asyncwatch", "-d", "mlx5_0"}, opts);
//   std::string line = p.require_line([](const std::string& l) { return l.find("async event FD") !=
//   l.npos; }, 10s); p.stop();                         // SIGTERM, then SIGKILL after a grace
//   period; reaped
//
// Output is captured line by line from pipes (stdout and stderr separately) and only read when
// the test waits for something: every wait polls the pipes (and a pidfd for the exit) with a
// deadline, never sleeps. Each stream has a cursor: next_line() returns the next unread line;
// wait_for_line() skips unread lines until one matches. Every line ever read stays available in
// stdout_lines()/stderr_lines() for diagnostics. require_*() throw HarnessError carrying the
// command and everything it printed, so a failed wait says exactly what happened.
//
// A child gets stdin, stdout and stderr and no other fd of the test process.
//
// A Process that is still running when destroyed is killed (SIGKILL, by its PID) and reaped:
// tests never leave processes behind.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace rdmatest {

using Clock = std::chrono::steady_clock;
using Duration = Clock::duration;

class HarnessError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ExitStatus {
  bool exited = false;  // exit() or return from main: code is valid
  int code = -1;
  bool signaled = false;  // killed by a signal: signal is valid
  int signal = 0;

  bool success() const { return exited && code == 0; }
  std::string describe() const;  // "exit 0", "signal 9 (Killed)"
};

struct SpawnOptions {
  // The child's environment: the test's own, without `unset`, plus `set` (which wins).
  std::map<std::string, std::string> set;
  std::vector<std::string> unset;
  bool inherit_env = true;
  std::string cwd;          // empty: the test's working directory
  bool stdin_pipe = false;  // false: stdin is /dev/null
};

enum class Stream { kStdout, kStderr };

class Process {
 public:
  // posix_spawnp: argv[0] is looked up in PATH unless it contains a '/'. Throws HarnessError.
  static Process spawn(const std::vector<std::string>& argv, const SpawnOptions& options = {});

  Process(Process&& other) noexcept;
  Process& operator=(Process&& other) noexcept;
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;
  ~Process();

  pid_t pid() const { return pid_; }
  const std::vector<std::string>& argv() const { return argv_; }

  // --- output ---------------------------------------------------------------------------------
  // The next unread line of the stream, waiting up to timeout; nullopt on timeout or end of file.
  std::optional<std::string> next_line(Duration timeout, Stream s = Stream::kStdout);
  // Skips unread lines until one matches; nullopt on timeout or end of file.
  std::optional<std::string> wait_for_line(const std::function<bool(const std::string&)>& match,
                                           Duration timeout, Stream s = Stream::kStdout);
  // Same, but failing loudly (HarnessError naming `what` and showing all output so far).
  std::string require_next_line(Duration timeout, Stream s = Stream::kStdout);
  std::string require_line(const std::function<bool(const std::string&)>& match, Duration timeout,
                           Stream s = Stream::kStdout, const std::string& what = "a matching line");
  const std::vector<std::string>& stdout_lines() const { return out_.lines; }
  const std::vector<std::string>& stderr_lines() const { return err_.lines; }
  std::string stdout_text() const;  // every complete line read so far, plus a partial last one
  std::string stderr_text() const;
  // Reads whatever is available now without waiting.
  void pump();

  // --- input ----------------------------------------------------------------------------------
  void write_stdin(const std::string& data);  // needs SpawnOptions::stdin_pipe
  void close_stdin();

  // --- lifetime -------------------------------------------------------------------------------
  bool running();
  bool signal(int sig);  // false if it has already exited
  // Waits for the exit (reading output meanwhile); nullopt on timeout.
  std::optional<ExitStatus> wait_exit(Duration timeout);
  ExitStatus require_exit(Duration timeout);
  // SIGTERM, then SIGKILL if it has not exited after `grace`. Returns how it ended.
  ExitStatus stop(Duration grace = std::chrono::seconds(5));
  std::optional<ExitStatus> exit_status() const { return status_; }

  // The command line and everything it printed: for failure messages.
  std::string describe() const;

 private:
  struct Pipe {
    int fd = -1;
    std::string partial;
    std::vector<std::string> lines;
    size_t cursor = 0;
    bool eof = false;
  };
  Process() = default;
  void read_pipe(Pipe& p);
  bool poll_once(Duration timeout);  // waits for output or exit; false on timeout
  void reap(bool block);
  void close_all();
  Pipe& pipe(Stream s) { return s == Stream::kStdout ? out_ : err_; }

  pid_t pid_ = -1;
  int pidfd_ = -1;
  int stdin_fd_ = -1;
  Pipe out_;
  Pipe err_;
  std::vector<std::string> argv_;
  std::optional<ExitStatus> status_;
};

// Stops a program the test started (SIGTERM, then SIGKILL after `grace`) and says what was
// wrong with how it ended: nullopt when it exited with status 0, else a message with the end of
// its standard error. A program that leaks or trips a sanitizer exits non-zero in a sanitizer
// build (LeakSanitizer's exit status is 23), so every test that stops the daemon this way is a
// leak check there.
std::optional<std::string> stop_expecting_clean_exit(Process& p,
                                                     Duration grace = std::chrono::seconds(30));

struct CommandResult {
  ExitStatus status;
  std::string out;
  std::string err;

  int exit_code() const { return status.exited ? status.code : -1; }
  std::vector<std::string> out_lines() const;
};

// Runs a command to completion (killing it after timeout: HarnessError) and returns its output.
CommandResult run_command(const std::vector<std::string>& argv, const SpawnOptions& options = {},
                          Duration timeout = std::chrono::seconds(60));

// Polls `condition` until it holds or the timeout passes (short, growing pauses in between).
// For state another process changes asynchronously with nothing to wait on (accounting
// counters). Returns whether it held.
bool wait_until(const std::function<bool()>& condition, Duration timeout);

}  // namespace rdmatest
