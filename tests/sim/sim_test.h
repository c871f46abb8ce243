// Shared helpers of the simulator's tests.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "harness.h"
#include "json_members.h"

namespace simtest {

using namespace std::chrono_literals;
using nlohmann::json;
using rdmatest::members_of;
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

// A test program driven line by line (verbs_shell, devx_shell): one command line in, one JSON
// answer out.
class JsonShell {
 public:
  JsonShell(const SimFabric& sim, const char* program) : p_(sim.spawn({program}, stdin_pipe())) {}
  // Under an environment of the caller's choosing (no simulator, a stale directory...).
  JsonShell(const rdmatest::SpawnOptions& options, const char* program)
      : p_(spawn_with(options, program)) {}
  // Ends the shell as a program ends: it closes and frees everything, then exits 0. A failure
  // here (a sanitizer finding in the library, a hang) fails the test.
  ~JsonShell() {
    if (!p_.running()) return;  // the test ended it on purpose
    p_.close_stdin();
    const auto status = p_.wait_exit(kTimeout);
    if (!status || !status->success())
      ADD_FAILURE() << "the shell did not end cleanly\n" << p_.describe();
  }
  JsonShell(const JsonShell&) = delete;
  JsonShell& operator=(const JsonShell&) = delete;

  json operator()(const std::string& command) {
    send(command);
    return receive();
  }
  void send(const std::string& command) { p_.write_stdin(command + "\n"); }
  json receive(rdmatest::Duration timeout = kTimeout) {
    const std::string line = p_.require_next_line(timeout);
    json j = json::parse(line);
    if (j.contains("error"))
      throw rdmatest::HarnessError("shell: " + j["error"].get<std::string>());
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
  static Process spawn_with(rdmatest::SpawnOptions o, const char* program) {
    o.stdin_pipe = true;
    return Process::spawn({program}, o);
  }
  Process p_;
};

// verbs_shell: a program linked against the system libibverbs, under a fabric.
class VerbsShell : public JsonShell {
 public:
  explicit VerbsShell(const SimFabric& sim) : JsonShell(sim, VERBS_SHELL) {}
  explicit VerbsShell(const rdmatest::SpawnOptions& options) : JsonShell(options, VERBS_SHELL) {}
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

// " ARG1 ARG2 ...": the words after "rdma-sim", for a failure message.
inline std::string command_words(const std::vector<std::string>& args) {
  std::string cmd;
  for (const std::string& a : args)
    cmd += " " + a;
  return cmd;
}

// `rdma-sim ARGS` must succeed; returns its stdout.
inline std::string ctl_ok(const SimFabric& sim, const std::vector<std::string>& args) {
  const rdmatest::CommandResult r = sim.ctl(args);
  if (r.exit_code() != 0) {
    throw rdmatest::HarnessError("rdma-sim" + command_words(args) + " failed (" +
                                 r.status.describe() + "): " + r.err);
  }
  return r.out;
}

// A command the simulator must refuse, and how: exit status 1 (what it names is not in the
// fabric, or cannot take it) unless another is given (2: a usage error).
struct RefusedCommand {
  RefusedCommand(std::vector<std::string> a, int code, std::string e)
      : args(std::move(a)), exit_code(code), error(std::move(e)) {}
  RefusedCommand(std::vector<std::string> a, std::string e)
      : RefusedCommand(std::move(a), 1, std::move(e)) {}
  std::vector<std::string> args;
  int exit_code;
  std::string error;  // the whole stderr
};

// Runs each of `cases` against `sim`: each exits with its code, says its error and prints
// nothing on stdout.
inline void expect_refused(const SimFabric& sim, const std::vector<RefusedCommand>& cases) {
  for (const RefusedCommand& c : cases) {
    const rdmatest::CommandResult r = sim.ctl(c.args);
    const std::string cmd = command_words(c.args);
    EXPECT_EQ(r.exit_code(), c.exit_code) << cmd;
    EXPECT_EQ(r.err, c.error) << cmd;
    EXPECT_EQ(r.out, "") << cmd;
  }
}

// `rdma-sim start --foreground` on a topology file of `text` (in a directory of its own, gone
// once it returns: a topology the simulator refuses starts nothing there).
struct TopologyStart {
  std::string file;  // the topology file's path, which the simulator's errors name
  rdmatest::CommandResult result;
};
inline TopologyStart start_with_topology(const std::string& text) {
  rdmatest::TempDir tmp;
  const std::string file = tmp.write("topo.json", text);
  return {file, rdmatest::run_command({rdmatest::rdma_sim_bin(), "start", "--foreground", "-t",
                                       file, "--dir", tmp.file("fabric")})};
}

// "VERSION name" for each defined dynamic symbol; hidden (non-default) versions in parentheses.
inline std::vector<std::string> exported(const std::string& lib) {
  const rdmatest::CommandResult r = rdmatest::run_command({"objdump", "-T", lib});
  if (r.exit_code() != 0) throw rdmatest::HarnessError("objdump -T " + lib + ": " + r.err);
  std::vector<std::string> out;
  for (const std::string& line : r.out_lines()) {
    if (line.find("*UND*") != std::string::npos ||
        (line.find(" DF ") == std::string::npos && line.find(" DO ") == std::string::npos))
      continue;
    std::istringstream words(line);
    std::vector<std::string> w;
    for (std::string s; words >> s;)
      w.push_back(s);
    if (w.size() >= 2) out.push_back(w[w.size() - 2] + " " + w.back());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// A shared library's SONAME and NEEDED entries (readelf -d).
struct DynamicSection {
  std::string soname;
  std::vector<std::string> needed;
};
inline DynamicSection dynamic_section(const std::string& lib) {
  const rdmatest::CommandResult r = rdmatest::run_command({"readelf", "-d", lib});
  DynamicSection d;
  for (const std::string& line : r.out_lines()) {
    const size_t open = line.find('['), close = line.find(']');
    if (open == std::string::npos) continue;
    if (line.find("(NEEDED)") != std::string::npos)
      d.needed.push_back(line.substr(open + 1, close - open - 1));
    if (line.find("(SONAME)") != std::string::npos)
      d.soname = line.substr(open + 1, close - open - 1);
  }
  return d;
}

// Names of a `list` answer's devices, in order.
inline std::vector<std::string> names(const json& list) {
  std::vector<std::string> n;
  for (const json& d : list["devices"])
    n.push_back(d["name"]);
  return n;
}

}  // namespace simtest
