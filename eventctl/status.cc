// rdma-eventctl status: the daemon's devices and ports, and its counters.
#include <unistd.h>

#include <cstdio>

#include "commands.h"
#include "format.h"

namespace rdma_eventctl {

using namespace rdma_eventd;

const char* const kStatusHelp = R"(Usage: rdma-eventctl status [OPTIONS]

Shows every RDMA port rdma-eventd watches, with its state as the daemon last saw it, and
the daemon's counters: events read, journal entries, subscribers, records sent and lost,
reporters; then each port's link quality from its error counters: clean or bad (and why),
the estimated bit error rate, the counters' last values, those pegged at their maximum.

Options:
      --json           print the daemon's status reply as it is (one JSON object)
      --color WHEN     auto (default), always or never
      --socket PATH    the daemon's socket
  -h, --help           this text

Exit status: 0 shown, 64 bad command line, 69 the daemon cannot be reached, 76 the daemon
refused the request.
)";

int run_status(const Global& g, int argc, char** argv) {
  Global global = g;
  bool json = false;
  ColorWhen color_when = ColorWhen::kAuto;
  const auto args = parse_command_line(argc, argv, kStatusHelp, global,
                                       {flag_option("json", json), color_option(color_when)});
  if (!args) return kExitOk;
  expect_no_arguments(*args);

  auto client = connect_or_report(global, kRequestTimeout);
  if (!client) return kExitUnavailable;
  Message reply;
  const ClientStatus s = client->call(Request{Op::kStatus}, kRequestTimeout, reply);
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
