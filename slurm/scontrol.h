// Runs scontrol (or sinfo) as a child with a deadline: its stdout and stderr read together, the
// child (in a process group of its own, with whatever it started) killed with SIGKILL and reaped
// when the deadline passes first. A child that does not go at SIGKILL (uninterruptible sleep on
// a hung file system) is waited for kReapGrace at most, then left behind and reaped by a later
// run: the follower never blocks on it.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace rdma_eventd_slurm {

inline constexpr size_t kMaxCommandOutput = 16u << 20;  // sinfo lists every node of a partition
inline constexpr std::chrono::milliseconds kReapGrace{2000};

struct CommandResult {
  enum Kind { kExited, kTimedOut, kNotStarted };
  Kind kind = kNotStarted;
  int exit_code = -1;        // kExited: its exit status (128+N when killed by signal N)
  std::string output;        // stdout and stderr, at most kMaxCommandOutput
  bool truncated = false;    // it printed more than that
  bool left_behind = false;  // kTimedOut: still there kReapGrace after SIGKILL
  bool ok() const { return kind == kExited && exit_code == 0; }
};

CommandResult run_command(const std::string& program, const std::vector<std::string>& args,
                          std::chrono::milliseconds timeout);

// How SlurmNode runs scontrol: run_command, or a test's fake Slurm.
class CommandRunner {
 public:
  virtual ~CommandRunner() = default;
  virtual CommandResult run(const std::string& program, const std::vector<std::string>& args,
                            std::chrono::milliseconds timeout) = 0;
};
CommandRunner& process_runner();

// "scontrol update nodename=n1 state=drain reason='rdma-eventd: ...'": as a shell would take it.
std::string command_text(const std::string& program, const std::vector<std::string>& args);

// One line saying what went wrong, naming the command.
std::string describe_failure(const std::string& program, const std::vector<std::string>& args,
                             const CommandResult& r);

}  // namespace rdma_eventd_slurm
