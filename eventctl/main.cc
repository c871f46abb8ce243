// rdma-eventctl: the command-line client of rdma-eventd's subscriber socket.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "commands.h"
#include "rdma_eventd/version.h"

using namespace rdma_eventctl;

namespace {

const char* const kHelp = R"(Usage: rdma-eventctl [--socket PATH] COMMAND [OPTIONS]

Talks to rdma-eventd, the RDMA event daemon, through its subscriber socket.

Commands:
  monitor     print records as they happen (--json for NDJSON), with filters
  status      the ports the daemon watches and its counters
  wait        wait until a port reaches a state, e.g. wait mlx5_0/1 active --timeout 30s
  report      report an application's affiliated async event, e.g. report mlx5_0 qp_fatal
  health      the host's port health in one line; exit 0 healthy, 1 a problem, 2 unknown
  history     records read back from the journal, local or central (--directory DIR)
  metrics     Prometheus metrics, printed, or kept for node_exporter (--textfile DIR)
  inventory   the adapters the host has had in service, present or missing; retire one
  help [CMD]  this text, or a command's

Options:
      --socket PATH  the daemon's socket (default: $RDMA_EVENTD_SOCKET, else
                     /run/rdma-eventd/events.sock)
  -V, --version      print the version
  -h, --help         this text

Every command takes --help. Exit status: 0 done, 1 wait timed out, 64 bad command line,
69 the daemon cannot be reached, 76 the daemon refused a request; health has its own
(0 healthy, 1 a problem, 2 unknown); history reads the journal, not the socket (66 no
journal files, 77 the journal may not be read); metrics exits 2 when the daemon cannot be
reached.
The protocol: docs/protocol.md.
)";

struct Command {
  const char* name;
  int (*run)(const Global& g, int argc, char** argv);
  const char* help;
};

// The command called `name`, nullptr for none.
const Command* find_command(const std::string& name) {
  static const Command kCommands[] = {
      {"monitor", run_monitor, kMonitorHelp}, {"status", run_status, kStatusHelp},
      {"wait", run_wait, kWaitHelp},          {"report", run_report, kReportHelp},
      {"health", run_health, kHealthHelp},    {"history", run_history, kHistoryHelp},
      {"metrics", run_metrics, kMetricsHelp}, {"inventory", run_inventory, kInventoryHelp}};
  for (const Command& c : kCommands)
    if (name == c.name) return &c;
  return nullptr;
}

int command_help(const std::string& name) {
  const Command* c = find_command(name);
  if (!c) throw UsageError{"unknown command '" + name + "'"};
  std::fputs(c->help, stdout);
  return kExitOk;
}

int dispatch(Global& g, int argc, char** argv) {
  const OptionSpec version{
      "version", 'V', false,
      [](const char*) { std::printf("rdma-eventctl %s\n", rdma_eventd::kVersion); }, true};
  const auto args = parse_command_line(argc, argv, kHelp, g, {version}, Arguments::kCommandFirst);
  if (!args) return kExitOk;
  if (args->empty()) throw UsageError{"no command given"};
  const std::string command = args->front();
  char** sub_argv = args->data();
  const int sub_argc = static_cast<int>(args->size());
  if (const Command* c = find_command(command)) return c->run(g, sub_argc, sub_argv);
  if (command == "help") {
    if (sub_argc > 1) return command_help(sub_argv[1]);
    std::fputs(kHelp, stdout);
    return kExitOk;
  }
  throw UsageError{"unknown command '" + command + "'"};
}

}  // namespace

int main(int argc, char** argv) {
  Global g;
  // secure_getenv: a set-uid caller's environment does not choose the socket.
  const char* env = ::secure_getenv("RDMA_EVENTD_SOCKET");
  g.socket = env && *env ? env : rdma_eventd::kDefaultSocketPath;
  try {
    return dispatch(g, argc, argv);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "%s: %s\nTry '%s --help'.\n", g.program.c_str(), e.message.c_str(),
                 g.program.c_str());
    return kExitUsage;
  }
}
