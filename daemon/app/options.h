// Command-line options of rdma-eventd.
#pragma once

#include <optional>
#include <string>
#include <variant>

#include "config/config.h"

namespace rdma_eventd::daemon {

struct Options {
  std::string config_path;
  bool config_path_given = false;  // -c given: a missing file is then an error
  std::optional<std::string> log_level;
  bool foreground = false;
  bool print_records = false;
  bool no_journal = false;
  bool check_config = false;
  std::optional<std::string> socket_path;  // --socket: overrides socket.path (and enables it)
  bool no_socket = false;                  // --no-socket: overrides socket.enabled
  // $RDMA_EVENTD_DEVLINK_SOCKET: a stand-in for the kernel's generic netlink (a simulator's
  // seqpacket socket speaking the same messages); "" for the kernel's own.
  std::string devlink_socket;
  // $RDMA_EVENTD_RDMA_NETLINK_SOCKET: the same for NETLINK_RDMA (the RDMA netlink monitor).
  std::string rdma_netlink_socket;
  // $RDMA_EVENTD_KERNEL_RELEASE: the release of the kernel that stand-in models ("6.12.0"),
  // which says what its monitor announces; "" for the running kernel's (uname).
  std::string kernel_release;
};

// What main should do instead of running: print this text to stdout (help, version) and exit
// with this code, or print it to stderr (a usage error) and exit with 64.
struct EarlyExit {
  std::string text;
  int code = 0;
};

std::variant<Options, EarlyExit> parse_options(int argc, char** argv);

// The configuration file that counts: the one -c names (a missing one is then an error), else
// the default path when that exists; nullopt when the built-in defaults apply.
std::optional<std::string> config_file(const Options& o);
// The configuration to run with: that file's, or the built-in defaults.
ConfigResult load_configuration(const Options& o);

inline constexpr int kExitUsage = 64;  // EX_USAGE

}  // namespace rdma_eventd::daemon
