// What every rdma-eventctl command shares: exit codes, the socket option, durations, colour,
// connecting to the daemon.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "rdma_eventd/client.hpp"

namespace rdma_eventctl {

// sysexits.h values, so scripts can tell the cases apart.
inline constexpr int kExitOk = 0;
inline constexpr int kExitTimeout = 1;       // wait: the port did not reach the state in time
inline constexpr int kExitUsage = 64;        // EX_USAGE: bad command line
inline constexpr int kExitUnavailable = 69;  // EX_UNAVAILABLE: no daemon, or it went away
inline constexpr int kExitProtocol = 76;     // EX_PROTOCOL: the daemon refused or made no sense

struct Global {
  std::string socket;  // --socket, else $RDMA_EVENTD_SOCKET, else the default path
  std::string program = "rdma-eventctl";
};

// Thrown for a usage error; main prints it with a hint and exits 64.
struct UsageError {
  std::string message;
};

// "30s", "500ms", "2m", "1h", "1.5s"; a bare number is seconds.
std::optional<std::chrono::milliseconds> parse_duration(std::string_view text);

enum class ColorWhen { kAuto, kAlways, kNever };
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
