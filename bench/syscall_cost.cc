// syscall: what one system call costs on this machine, and what sets it.
//
// The consumers the daemon is compared with in storms (ibv_asyncwatch, the raw loop) are little
// more than one read() per event, and at 1,000 events/s every event is a wakeup of its own for
// the daemon and the bare writer alike: the ratios between them follow the price of entering
// and leaving the kernel on the machine (docs/benchmarks.md, "Why the ratios move between
// machines" and "Two machines, and the price of a system call"). This measures that price as the
// time of a non-blocking read() of an empty pipe (the simulator's async fd is a pipe, and every
// batch of the daemon ends with such a read), and reports what raises it: page-table isolation
// without PCID switches page tables and flushes the TLB on every entry and exit, and a hypervisor
// may trap them.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "commands.h"
#include "util.h"

namespace rdma_eventd::bench {
namespace {

using nlohmann::json;

// Nanoseconds per call over `calls` non-blocking reads of the empty pipe `fd`.
double read_ns(int fd, uint64_t calls) {
  char byte;
  const int64_t start = mono_ns();
  for (uint64_t i = 0; i < calls; ++i) {
    if (::read(fd, &byte, 1) >= 0 || errno != EAGAIN)
      throw std::runtime_error("a read() of the empty pipe did not fail with EAGAIN");
  }
  return static_cast<double>(mono_ns() - start) / static_cast<double>(calls);
}

// The first line of `path` as it is (the kernel's one-line vulnerability reports contain ':').
std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace

int cmd_syscall(int argc, char** argv) {
  const Args a(argc, argv, {"calls", "loops", "figure", "run", "results"}, {});
  const uint64_t calls = a.num("calls", 100000);
  const uint64_t loops = std::max<uint64_t>(1, a.num("loops", 5));
  int p[2];
  if (::pipe2(p, O_NONBLOCK | O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
  // The write end stays open: with it closed, a read() returns end of file at once instead of
  // failing with EAGAIN, which is not the call the daemon makes.
  const UniqueFd rd(p[0]), wr(p[1]);
  read_ns(rd.get(), calls / 10 + 1);  // warm up: page faults, caches
  std::vector<double> each;
  for (uint64_t i = 0; i < loops; ++i)
    each.push_back(read_ns(rd.get(), calls));
  std::vector<double> sorted = each;
  std::sort(sorted.begin(), sorted.end());
  const std::vector<std::string> flags = split(first_line_with("/proc/cpuinfo", "flags"), ' ');
  const auto has = [&](const char* f) {
    return std::find(flags.begin(), flags.end(), f) != flags.end();
  };
  const json r = {{"kind", "syscall"},
                  {"figure", a.str("figure", "syscall")},
                  {"run", a.num("run", 0)},
                  {"read_ns", sorted[sorted.size() / 2]},
                  {"read_ns_each", each},
                  {"calls", calls},
                  {"meltdown", first_line("/sys/devices/system/cpu/vulnerabilities/meltdown")},
                  {"pcid", has("pcid")},
                  {"hypervisor", has("hypervisor")}};
  emit_result(a.str("results", ""), r.dump());
  return 0;
}

}  // namespace rdma_eventd::bench
