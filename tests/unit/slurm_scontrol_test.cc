// rdma-eventd-slurm's scontrol runner (slurm/scontrol.cc) with stand-ins from coreutils: the
// output read, the exit status kept, a program that does not finish killed at its deadline and
// reaped (or, when it does not go at SIGKILL, left behind rather than waited for), a missing
// one reported, and the command line shown as a shell would take it.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "scontrol.h"

namespace slurm_scontrol_test {

using namespace std::chrono_literals;
using rdma_eventd_slurm::command_text;
using rdma_eventd_slurm::CommandResult;
using rdma_eventd_slurm::describe_failure;
using rdma_eventd_slurm::run_command;

TEST(SlurmScontrolRunner, ReadsStdoutAndStderrAndTheExitStatus) {
  const CommandResult r = run_command("sh", {"-c", "echo out; echo err >&2; exit 3"}, 5s);
  EXPECT_EQ(r.kind, CommandResult::kExited);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.output, "out\nerr\n");
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(describe_failure("sh", {"-c", "x"}, r), "'sh -c x' failed (exit 3): err");
  EXPECT_TRUE(run_command("true", {}, 5s).ok());
}

// Whether process `pid` is gone (or a zombie, killed and waiting for its new parent).
bool slurm_process_gone(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;
  const size_t paren = line.rfind(')');
  return paren != std::string::npos && line.compare(paren + 2, 1, "Z") == 0;
}

TEST(SlurmScontrolRunner, KillsAndReapsAProgramThatOutlivesItsDeadline) {
  const auto start = std::chrono::steady_clock::now();
  // A grandchild keeps the pipe open: the deadline ends the wait all the same, and the kill
  // takes the grandchild with it (one process group).
  const CommandResult r = run_command("sh", {"-c", "sleep 30 & echo $!; wait"}, 300ms);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(r.kind, CommandResult::kTimedOut);
  EXPECT_LT(took, 5s);
  EXPECT_EQ(describe_failure("scontrol", {"ping"}, r),
            "'scontrol ping' did not finish in time and was killed");
  // The child is reaped: no child of ours is left.
  EXPECT_EQ(::waitpid(-1, nullptr, WNOHANG), -1);
  const pid_t grandchild = static_cast<pid_t>(std::stol(r.output));
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (!slurm_process_gone(grandchild) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_TRUE(slurm_process_gone(grandchild)) << "pid " << grandchild << " survived";
}

TEST(SlurmScontrolRunner, AProgramThatOutlivesItsKillIsLeftBehindNotWaitedFor) {
  // What a scontrol stuck in the kernel (a hung NFS mount) does to a wait without a bound: the
  // stand-in leaves the process group the runner kills (it joins ours), so SIGKILL does not
  // reach it. The runner gives up on it after kReapGrace, says so, and reaps it at a later run
  // once it is gone.
  const auto start = std::chrono::steady_clock::now();
  const CommandResult r = run_command(
      "perl", {"-e", "$| = 1; setpgrp(0, getpgrp(getppid())) or die; print \"$$\\n\"; sleep 30"},
      300ms);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(r.kind, CommandResult::kTimedOut);
  EXPECT_TRUE(r.left_behind);
  EXPECT_LT(took, 300ms + rdma_eventd_slurm::kReapGrace + 5s);
  EXPECT_EQ(describe_failure("scontrol", {"ping"}, r),
            "'scontrol ping' did not finish in time, and did not go when killed (stuck in the "
            "kernel, as on a hung file system): left behind");
  const pid_t child = static_cast<pid_t>(std::stol(r.output));
  ASSERT_FALSE(slurm_process_gone(child)) << "it was waited for";
  ASSERT_EQ(::kill(child, SIGKILL), 0);
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (!slurm_process_gone(child) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_TRUE(run_command("true", {}, 5s).ok());
  EXPECT_EQ(::waitpid(-1, nullptr, WNOHANG), -1) << "the one left behind is reaped";
}

TEST(SlurmScontrolRunner, AMissingProgramIsReportedByName) {
  const CommandResult r = run_command("/nonexistent/scontrol", {"show", "node"}, 5s);
  EXPECT_EQ(r.kind, CommandResult::kNotStarted);
  EXPECT_EQ(describe_failure("/nonexistent/scontrol", {"show", "node"}, r),
            "'/nonexistent/scontrol show node' could not be run: No such file or directory");
}

TEST(SlurmScontrolRunner, CommandTextQuotesWhatAShellWouldSplit) {
  EXPECT_EQ(command_text("scontrol", {"update", "nodename=n1", "state=drain",
                                      "reason=rdma-eventd: mlx5_0/1 flapping (3 downs)"}),
            "scontrol update nodename=n1 state=drain reason='rdma-eventd: mlx5_0/1 flapping (3 "
            "downs)'");
  EXPECT_EQ(command_text("scontrol", {"reason=it's"}), "scontrol reason='it'\\''s'");
}

}  // namespace slurm_scontrol_test
