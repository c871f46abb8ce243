// rdma-eventd-bench: the measurements behind docs/benchmarks.md. bench/run.sh, the documented
// interface, starts what they need and runs them; their options are in the subcommands' files.
#include <cstdio>
#include <cstring>
#include <exception>

#include "commands.h"
#include "daemon_process.h"

namespace {

constexpr const char* kUsage = R"(Usage: rdma-eventd-bench SUBCOMMAND [OPTIONS]

The measurements of bench/run.sh (which starts the simulators, journald and daemons they need):
  storm      a storm of events read by subscribers of the daemon's socket
  consumers  the same storm read by other programs (ibv_asyncwatch, the raw loop)
  latency    injection-to-read latency at a fixed event rate
  floor      the same with a bare writer: one send per subscriber per event, nothing else
             (--steps libevent,query,record adds those parts of the daemon's work)
  journal-floor  the daemon's journal entries sent to journald by a bare sender, nothing else
  startup    exec to READY=1 (or the "ready:" log line)
  syscall    what one system call costs on this machine (a read() of an empty pipe)
  idle       context switches and notifications of an idle daemon
  counters   what reading the error counters costs, against a 1 s poller
  report     docs/benchmarks.md from the results
Each measurement appends one JSON line to --results FILE (stdout without it).
)";

}  // namespace

int main(int argc, char** argv) {
  using namespace rdma_eventd::bench;
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 64 : 0;
  }
  install_cleanup_handlers();
  struct Sub {
    const char* name;
    int (*run)(int, char**);
  };
  static constexpr Sub kSubs[] = {{"storm", cmd_storm},
                                  {"consumers", cmd_consumers},
                                  {"latency", cmd_latency},
                                  {"floor", cmd_floor},
                                  {"journal-floor", cmd_journal_floor},
                                  {"startup", cmd_startup},
                                  {"syscall", cmd_syscall},
                                  {"idle", cmd_idle},
                                  {"counters", cmd_counters},
                                  {"report", cmd_report}};
  for (const Sub& s : kSubs) {
    if (std::strcmp(argv[1], s.name) != 0) continue;
    try {
      return s.run(argc - 1, argv + 1);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "rdma-eventd-bench %s: %s\n", s.name, e.what());
      return 1;
    }
  }
  std::fprintf(stderr, "rdma-eventd-bench: unknown subcommand '%s'\n%s", argv[1], kUsage);
  return 64;
}
