// The rdma-sim command line: argument parsing, the client side of the control socket, and the
// start/stop/run/env commands. The command set and its options are documented in help.cc and
// docs/simulator.md.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace rdmasim::cli {

// Exit statuses (sysexits where one fits).
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;        // the simulator refused the command, or it failed
inline constexpr int kExitUsage = 2;         // bad command line
inline constexpr int kExitNoSimulator = 69;  // EX_UNAVAILABLE: nothing runs in the fabric dir
inline constexpr int kExitConfig = 78;       // EX_CONFIG: malformed topology file

// A bad command line; what() names the problem.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Global {
  bool json = false;
  std::optional<std::string> dir;
};

// One command's arguments after the global flags are taken out.
struct Args {
  std::string command;  // e.g. "port down", "gid add-ip"
  std::vector<std::string> positional;
  std::map<std::string, std::string> options;  // "--lid" -> "5"; flags map to ""
  std::vector<std::string> trailing;           // after "--" (run)
};

int main(int argc, char** argv);

// fabric_dir.cc
std::string resolve_dir(const Global& g);  // --dir, $RDMA_SIM_DIR, or the default
std::string standin_libdir();              // where the stand-in libibverbs.so.1 is
std::string absolute_path(const std::string& path);

// help.cc
void print_usage(FILE* out);
bool print_command_help(const std::string& command, FILE* out);
std::string command_usage(const std::string& command);

// client.cc: sends one request and returns the reply; throws std::runtime_error with
// kExitNoSimulator semantics via NoSimulator when nothing listens.
class NoSimulator : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
nlohmann::json request(const std::string& dir, const nlohmann::json& req,
                       bool wait_for_exit = false);

// format.cc: human output of show and stats.
void print_show(const nlohmann::json& reply);
void print_stats(const nlohmann::json& reply);

// start.cc
int cmd_start(const Global& g, const Args& a);
int cmd_stop(const Global& g, const Args& a);
int cmd_run(const Global& g, const Args& a);
int cmd_env(const Global& g, const Args& a);

}  // namespace rdmasim::cli
