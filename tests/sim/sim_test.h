// Shared helpers of the simulator's tests.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

#include "harness.h"

namespace simtest {

using namespace std::chrono_literals;
using nlohmann::json;
using rdmatest::Process;
using rdmatest::SimFabric;

inline constexpr auto kTimeout = 20s;

// A SimFabric whose simulator must end cleanly with the test: exit 0 (in a sanitizer build, that
// includes no leak and no error report).
class Sim : public SimFabric {
 public:
  using SimFabric::SimFabric;
  ~Sim() {
    const rdmatest::ExitStatus s = stop();
    if (!s.success()) ADD_FAILURE() << "rdma-sim did not exit cleanly\n" << process().describe();
  }
  Sim(const Sim&) = delete;
  Sim& operator=(const Sim&) = delete;
};

// verbs_shell (a program linked against the system libibverbs) running under a fabric: one
// command line in, one JSON answer out.
class VerbsShell {
 public:
  explicit VerbsShell(const SimFabric& sim) : p_(sim.spawn({VERBS_SHELL}, stdin_pipe())) {}
  // Under an environment of the caller's choosing (no simulator, a stale directory...).
  explicit VerbsShell(const rdmatest::SpawnOptions& options) : p_(spawn_with(options)) {}
  // Ends the shell as a program ends: it closes and frees everything, then exits 0. A failure
  // here (a sanitizer finding in the library, a hang) fails the test.
  ~VerbsShell() {
    if (!p_.running()) return;  // the test ended it on purpose
    p_.close_stdin();
    const auto status = p_.wait_exit(kTimeout);
    if (!status || !status->success())
      ADD_FAILURE() << "verbs_shell did not end cleanly\n" << p_.describe();
  }
  VerbsShell(const VerbsShell&) = delete;
  VerbsShell& operator=(const VerbsShell&) = delete;

  json operator()(const std::string& command) {
    send(command);
    return receive();
  }
  void send(const std::string& command) { p_.write_stdin(command + "\n"); }
  json receive(rdmatest::Duration timeout = kTimeout) {
    const std::string line = p_.require_next_line(timeout);
    json j = json::parse(line);
    if (j.contains("error"))
      throw rdmatest::HarnessError("verbs_shell: " + j["error"].get<std::string>());
    return j;
  }
  // True if no answer arrives within `wait` (a blocking call that must stay blocked).
  bool silent_for(rdmatest::Duration wait) { return !p_.next_line(wait).has_value(); }
  Process& process() { return p_; }

 private:
  static rdmatest::SpawnOptions stdin_pipe() {
    rdmatest::SpawnOptions o;
    o.stdin_pipe = true;
    return o;
  }
  static Process spawn_with(rdmatest::SpawnOptions o) {
    o.stdin_pipe = true;
    return Process::spawn({VERBS_SHELL}, o);
  }
  Process p_;
};

// The stand-in's environment without a usable fabric behind RDMA_SIM_DIR.
inline rdmatest::SpawnOptions standin_env(const std::string& sim_dir) {
  rdmatest::SpawnOptions o;
  o.set["LD_LIBRARY_PATH"] = rdmatest::standin_libdir();
  if (sim_dir.empty())
    o.unset.push_back("RDMA_SIM_DIR");
  else
    o.set["RDMA_SIM_DIR"] = sim_dir;
  return o;
}

inline std::string two_adapters() {
  return rdmatest::topology("two-adapters");
}

// `rdma-sim ARGS` must succeed; returns its stdout.
inline std::string ctl_ok(const SimFabric& sim, const std::vector<std::string>& args) {
  const rdmatest::CommandResult r = sim.ctl(args);
  if (r.exit_code() != 0) {
    std::string cmd;
    for (const std::string& a : args)
      cmd += " " + a;
    throw rdmatest::HarnessError("rdma-sim" + cmd + " failed (" + r.status.describe() +
                                 "): " + r.err);
  }
  return r.out;
}

// Names of a `list` answer's devices, in order.
inline std::vector<std::string> names(const json& list) {
  std::vector<std::string> n;
  for (const json& d : list["devices"])
    n.push_back(d["name"]);
  return n;
}

}  // namespace simtest
