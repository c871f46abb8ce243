#include "app/options.h"

#include <getopt.h>
#include <unistd.h>

#include <cstdlib>

#include "build_config.h"
#include "rdma_eventd/version.h"

namespace rdma_eventd::daemon {
namespace {

std::string usage() {
  return std::string(R"(Usage: rdma-eventd [OPTIONS]

Watches the async events of every RDMA device (port up/down, LID, P_Key, SM, GID changes,
fatal errors), enriches each with the port's state and what changed, and publishes it as a
JSON record to the systemd journal and to every subscriber of its Unix socket.

Options:
  -c, --config FILE      configuration file (default )") +
         kDefaultConfigPath + R"(;
                         when that default does not exist, built-in defaults apply)
  -l, --log-level LEVEL  trace, debug, info, warning, error, critical or off
                         (overrides log_level in the configuration)
  -f, --foreground       stay in the foreground (how systemd runs it); otherwise the
                         daemon detaches once it is ready, and a startup error is still
                         reported through the exit status
      --print-records    also write every record to standard output, one JSON object per line
      --no-journal       do not write records to the journal (overrides journal.enabled)
      --socket PATH      the subscriber socket (overrides socket.path; default
                         /run/rdma-eventd/events.sock)
      --no-socket        no subscriber socket (overrides socket.enabled)
      --check-config     validate the configuration and exit: 0 when valid, 78 when not
  -V, --version          print the version and exit
  -h, --help             print this help and exit

Signals:
  SIGHUP                 reload the configuration (a bad one is reported and the old one stays)
  SIGUSR1                rescan for RDMA devices (hot-plug is followed through the
                         kernel's RDMA netlink monitor (Linux 6.12 and later), udev, or a
                         rescan every 5 s where neither is there)
  SIGTERM, SIGINT        stop

Under systemd (rdma-eventd.service and rdma-eventd.socket): it reports readiness, reloads,
stopping and a status line to the service manager, pings the watchdog from its event loop
when WatchdogSec= is set, and serves the socket passed by socket activation (the one named
"events") instead of socket.path or --socket.

Environment:
  RDMA_EVENTD_DEVLINK_SOCKET  a seqpacket socket that stands in for the kernel's generic
                         netlink (devlink health, and RoCE ports' FEC statistics of the
                         ethtool family): rdma-sim's; unset, the kernel's own
  RDMA_EVENTD_RDMA_NETLINK_SOCKET  the same for NETLINK_RDMA (the RDMA netlink monitor)
  RDMA_EVENTD_KERNEL_RELEASE  the kernel release that stand-in models (its monitor
                         announces renames from 6.13 on); unset, the running kernel's

Exit status: 0 stopped cleanly, 64 bad command line, 78 bad configuration,
1 other startup failure.

Records: docs/records.md. Configuration: docs/configuration.md. Subscribers:
docs/protocol.md. Running it as a service, and when things go wrong: docs/operations.md.
)";
}

}  // namespace

std::variant<Options, EarlyExit> parse_options(int argc, char** argv) {
  enum { kPrintRecords = 1000, kNoJournal, kCheckConfig, kSocket, kNoSocket };
  static const option kLong[] = {
      {"config", required_argument, nullptr, 'c'},
      {"log-level", required_argument, nullptr, 'l'},
      {"foreground", no_argument, nullptr, 'f'},
      {"print-records", no_argument, nullptr, kPrintRecords},
      {"no-journal", no_argument, nullptr, kNoJournal},
      {"check-config", no_argument, nullptr, kCheckConfig},
      {"socket", required_argument, nullptr, kSocket},
      {"no-socket", no_argument, nullptr, kNoSocket},
      {"version", no_argument, nullptr, 'V'},
      {"help", no_argument, nullptr, 'h'},
      {nullptr, 0, nullptr, 0},
  };
  Options o;
  o.config_path = kDefaultConfigPath;
  opterr = 0;
  optind = 0;  // 0, not 1: makes glibc reset its internal state too (parse_options may run twice)
  for (;;) {
    const int c = getopt_long(argc, argv, ":c:l:fVh", kLong, nullptr);
    if (c == -1) break;
    switch (c) {
      case 'c':
        o.config_path = optarg;
        o.config_path_given = true;
        break;
      case 'l':
        o.log_level = optarg;
        break;
      case 'f':
        o.foreground = true;
        break;
      case kPrintRecords:
        o.print_records = true;
        break;
      case kNoJournal:
        o.no_journal = true;
        break;
      case kCheckConfig:
        o.check_config = true;
        break;
      case kSocket:
        o.socket_path = optarg;
        break;
      case kNoSocket:
        o.no_socket = true;
        break;
      case 'V':
        return EarlyExit{std::string("rdma-eventd ") + kVersion + "\n", 0};
      case 'h':
        return EarlyExit{usage(), 0};
      case ':':
        return EarlyExit{std::string("rdma-eventd: option '") + argv[optind - 1] +
                             "' needs a value\nTry 'rdma-eventd --help'.\n",
                         kExitUsage};
      default:
        return EarlyExit{std::string("rdma-eventd: unknown option '") + argv[optind - 1] +
                             "'\nTry 'rdma-eventd --help'.\n",
                         kExitUsage};
    }
  }
  if (optind < argc) {
    return EarlyExit{std::string("rdma-eventd: unexpected argument '") + argv[optind] +
                         "'\nTry 'rdma-eventd --help'.\n",
                     kExitUsage};
  }
  if (const char* devlink = std::getenv("RDMA_EVENTD_DEVLINK_SOCKET"); devlink && *devlink)
    o.devlink_socket = devlink;
  if (const char* rdma = std::getenv("RDMA_EVENTD_RDMA_NETLINK_SOCKET"); rdma && *rdma)
    o.rdma_netlink_socket = rdma;
  if (const char* release = std::getenv("RDMA_EVENTD_KERNEL_RELEASE"); release && *release)
    o.kernel_release = release;
  return o;
}

std::optional<std::string> config_file(const Options& o) {
  if (o.config_path_given || ::access(o.config_path.c_str(), F_OK) == 0) return o.config_path;
  return std::nullopt;
}

ConfigResult load_configuration(const Options& o) {
  const std::optional<std::string> path = config_file(o);
  return path ? load_config(*path) : ConfigResult(Config{});
}

}  // namespace rdma_eventd::daemon
