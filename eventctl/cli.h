// What every rdma-eventctl command shares: exit codes, the command line (one option table per
// command, and the options they all have), durations, colour, connecting to the daemon.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "client/client.hpp"

namespace rdma_eventctl {

// sysexits.h values, so scripts can tell the cases apart.
inline constexpr int kExitOk = 0;
inline constexpr int kExitTimeout = 1;       // wait: the port did not reach the state in time
inline constexpr int kExitUsage = 64;        // EX_USAGE: bad command line
inline constexpr int kExitUnavailable = 69;  // EX_UNAVAILABLE: no daemon, or it went away
inline constexpr int kExitOsErr = 71;        // EX_OSERR: the loop cannot wait
inline constexpr int kExitCantCreate = 73;   // EX_CANTCREAT: an output file cannot be written
inline constexpr int kExitProtocol = 76;     // EX_PROTOCOL: the daemon refused or made no sense

// How long a command waits for the daemon to connect and to answer one request.
inline constexpr std::chrono::seconds kRequestTimeout{10};

struct Global {
  std::string socket;  // --socket, else $RDMA_EVENTD_SOCKET, else the default path
  std::string program = "rdma-eventctl";
};

// Thrown for a usage error; main prints it with a hint and exits 64.
struct UsageError {
  std::string message;
};

enum class ColorWhen { kAuto, kAlways, kNever };

// One option of a command: --name, and -letter when it has one.
struct OptionSpec {
  const char* name;
  char letter = 0;           // 0: the long form only
  bool takes_value = false;  // --name VALUE, --name=VALUE, -l VALUE, -lVALUE
  // Gets the value (null for an option without one); throws UsageError for a bad one.
  std::function<void(const char* value)> apply;
  bool ends_command = false;  // its work is the command's (--help, --version): stop there
};

// --name: sets `on`.
OptionSpec flag_option(const char* name, bool& on, char letter = 0);
// --color WHEN: auto, always or never.
OptionSpec color_option(ColorWhen& when);

enum class Arguments {
  kAnywhere,      // options and arguments in any order, as GNU tools take them
  kCommandFirst,  // options stop at the first argument: the command, whose options follow it
};

// Parses a command's options (argv[0] is the program or the command), with the ones every
// command has: --socket PATH (into global.socket) and -h/--help (prints `help`). Returns the
// arguments that are not options, or nullopt when an option ended the command. Throws
// UsageError ("option '--x' needs a value", "unknown option '--y'").
std::optional<std::span<char*>> parse_command_line(int argc, char** argv, const char* help,
                                                   Global& global, std::vector<OptionSpec> options,
                                                   Arguments order = Arguments::kAnywhere);
// Throws UsageError naming the first of `args`, if there is one.
void expect_no_arguments(std::span<char*> args);

// "30s", "500ms", "2m", "1h", "1.5s"; a bare number is seconds.
std::optional<std::chrono::milliseconds> parse_duration(std::string_view text);

std::optional<ColorWhen> parse_color_when(std::string_view text);
// Whether to colour output written to `fd`: never with NO_COLOR set or on a non-terminal (auto).
bool use_color(ColorWhen when, int fd);

// Connects, or prints why not to stderr and returns null.
std::unique_ptr<rdma_eventd::Client> connect_or_report(const Global& g,
                                                       rdma_eventd::Client::Duration timeout);

// The exit code and a message on stderr for a client failure.
int report_failure(const Global& g, rdma_eventd::ClientStatus s, const rdma_eventd::Client& c);

// Splits "a,b,c" into its non-empty parts.
std::vector<std::string> split_commas(std::string_view text);

}  // namespace rdma_eventctl
