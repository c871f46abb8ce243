// rdma-eventctl status: the daemon's devices and ports, and its counters.
#include <getopt.h>
#include <unistd.h>

#include <cstdio>

#include "commands.h"
#include "format.h"

namespace rdma_eventctl {

using namespace rdma_eventd;

const char* const kStatusHelp = R"(Usage: rdma-eventctl status [OPTIONS]

Shows every RDMA port rdma-eventd watches, with its state as the daemon last saw it, and
the daemon's counters: events read, journal entries, subscribers, records sent and lost.

Options:
      --json           print the daemon's status reply as it is (one JSON object)
      --color WHEN     auto (default), always or never
      --socket PATH    the daemon's socket
  -h, --help           this text

Exit status: 0 shown, 64 bad command line, 69 the daemon cannot be reached, 76 the daemon
refused the request.
)";

int run_status(const Global& g, int argc, char** argv) {
  enum { kJson = 1000, kColor, kSocket };
  static const option kLong[] = {
      {"json", no_argument, nullptr, kJson},
      {"color", required_argument, nullptr, kColor},
      {"socket", required_argument, nullptr, kSocket},
      {"help", no_argument, nullptr, 'h'},
      {nullptr, 0, nullptr, 0},
  };
  Global global = g;
  bool json = false;
  ColorWhen color_when = ColorWhen::kAuto;
  optind = 0;
  opterr = 0;
  for (;;) {
    const int c = getopt_long(argc, argv, ":h", kLong, nullptr);
    if (c == -1) break;
    switch (c) {
      case kJson:
        json = true;
        break;
      case kColor: {
        auto w = parse_color_when(optarg);
        if (!w)
          throw UsageError{"--color: auto, always or never, not '" + std::string(optarg) + "'"};
        color_when = *w;
        break;
      }
      case kSocket:
        global.socket = optarg;
        break;
      case 'h':
        std::fputs(kStatusHelp, stdout);
        return kExitOk;
      case ':':
        throw UsageError{std::string("option '") + argv[optind - 1] + "' needs a value"};
      default:
        throw UsageError{std::string("unknown option '") + argv[optind - 1] + "'"};
    }
  }
  if (optind < argc) throw UsageError{std::string("unexpected argument '") + argv[optind] + "'"};

  constexpr auto kTimeout = std::chrono::seconds(10);
  auto client = connect_or_report(global, kTimeout);
  if (!client) return kExitUnavailable;
  Message reply;
  const ClientStatus s = client->call(Request{Op::kStatus}, kTimeout, reply);
  if (s != ClientStatus::kOk) return report_failure(global, s, *client);
  if (json) {
    std::puts(reply.text().c_str());
    return kExitOk;
  }
  std::string why;
  const auto status = status_from_json(reply.text(), &why);
  if (!status) {
    std::fprintf(stderr, "%s: unreadable status reply: %s\n", global.program.c_str(), why.c_str());
    return kExitProtocol;
  }
  std::fputs(
      format_status(*status, reply.reply()->seq, use_color(color_when, STDOUT_FILENO)).c_str(),
      stdout);
  return kExitOk;
}

}  // namespace rdma_eventctl
