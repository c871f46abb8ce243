// bench counters: what link quality costs (docs/benchmarks.md, "Link quality"). The daemon,
// started with the command after `--` (its link_health.interval_s the caller's), is left alone
// for --seconds with every port up and no event: its CPU over that window (schedstat, ns) per
// port sample it reports in its status (link_health.samples), and its wakeups. Then this program
// reads the same counter files of the same ports every second for as long, as a 1 s poller
// does: its own CPU per read. What a read costs the hardware (a firmware access on mlx5) is not
// here: the simulator's files are memory.
#include <fcntl.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "commands.h"
#include "daemon_process.h"
#include "proc_stats.h"
#include "subscribers.h"
#include "util.h"

namespace rdma_eventd::bench {
namespace {

using nlohmann::json;

int64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Reads stderr until the "ready:" line (or throws after 30 s).
void wait_ready_line(DaemonProcess& d) {
  const int64_t deadline = mono_ns() + 30'000'000'000;
  for (;;) {
    pollfd p{d.stderr_fd(), POLLIN, 0};
    ::poll(&p, 1, 100);
    std::vector<std::string> lines;
    const bool open = d.read_stderr(lines);
    for (const std::string& l : lines)
      if (l.find("ready:") != std::string::npos) return;
    if (!open || d.exited()) throw BenchError("the daemon exited while starting:" + d.log_tail());
    if (mono_ns() > deadline) throw BenchError("the daemon was not ready in 30 s" + d.log_tail());
  }
}

// Keeps the daemon's stderr drained for `ns`.
void idle_for(DaemonProcess& d, int64_t ns) {
  const int64_t end = mono_ns() + ns;
  for (int64_t now = mono_ns(); now < end; now = mono_ns()) {
    pollfd p{d.stderr_fd(), POLLIN, 0};
    ::poll(&p, 1, static_cast<int>(std::max<int64_t>(1, (end - now) / 1000000)));
    std::vector<std::string> lines;
    d.read_stderr(lines);
    if (d.exited()) throw BenchError("the daemon exited:" + d.log_tail());
  }
}

uint64_t read_counter(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw BenchError(errno_text("open " + path));
  char buf[64];
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) throw BenchError(errno_text("read " + path));
  buf[n] = '\0';
  return std::strtoull(buf, nullptr, 10);
}

}  // namespace

int cmd_counters(int argc, char** argv) {
  const Args a(argc, argv, {"socket", "seconds", "sysfs", "figure", "run", "results"}, {});
  const int64_t seconds = static_cast<int64_t>(a.num("seconds", 30));
  DaemonProcess d(a.command(), {}, nullptr);
  wait_ready_line(d);
  // Settled: the start's reads are done (each port's first sample, the baseline).
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const json before = daemon_status(a.str("socket"));
  const CpuTime cpu0 = cpu_time(d.pid());
  const ContextSwitches sw0 = context_switches(d.pid());
  const int64_t t0 = mono_ns();
  idle_for(d, seconds * 1'000'000'000);
  const CpuTime cpu1 = cpu_time(d.pid());
  const ContextSwitches sw1 = context_switches(d.pid());
  const double window_s = static_cast<double>(mono_ns() - t0) / 1e9;
  const json after = daemon_status(a.str("socket"));
  d.stop();
  const json& l0 = before.at("link_health");
  const json& l1 = after.at("link_health");
  const uint64_t samples = l1.at("samples").get<uint64_t>() - l0.at("samples").get<uint64_t>();
  const uint64_t reads =
      l1.at("counter_reads").get<uint64_t>() - l0.at("counter_reads").get<uint64_t>();
  const double daemon_cpu_s = (cpu1 - cpu0).best();

  // The 1 s poller: the same files of the same ports, every second, as long.
  std::vector<std::string> files;
  for (const json& p : l1.at("ports")) {
    for (const auto& [name, value] : p.at("counters").items()) {
      files.push_back(a.str("sysfs") + "/class/infiniband/" + p.at("device").get<std::string>() +
                      "/ports/" + std::to_string(p.at("port").get<uint32_t>()) + "/" +
                      (name.rfind("hw_counters/", 0) == 0 ? name : "counters/" + name));
    }
  }
  int64_t poller_cpu_ns = 0;
  uint64_t poller_reads = 0;
  uint64_t sum = 0;
  for (int64_t s = 0; s < seconds; ++s) {
    const int64_t c0 = thread_cpu_ns();
    for (const std::string& f : files)
      sum += read_counter(f);
    poller_cpu_ns += thread_cpu_ns() - c0;
    poller_reads += files.size();
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  const uint64_t ports = l1.at("ports").size();
  json r = {{"kind", "counters"},
            {"figure", a.str("figure", "")},
            {"run", a.num("run", 0)},
            {"seconds", window_s},
            {"interval_s", l1.at("interval_s")},
            {"ports", ports},
            {"samples", samples},
            {"counter_reads", reads},
            {"daemon_cpu_s", daemon_cpu_s},
            {"daemon_cpu_per_sample_us", samples ? daemon_cpu_s * 1e6 / samples : 0.0},
            {"voluntary", sw1.voluntary - sw0.voluntary},
            {"reads_per_port_hour", ports && window_s > 0 ? reads * 3600.0 / window_s / ports : 0},
            {"poller_reads", poller_reads},
            {"poller_cpu_s", static_cast<double>(poller_cpu_ns) / 1e9},
            {"poller_cpu_per_read_us",
             poller_reads ? static_cast<double>(poller_cpu_ns) / 1e3 / poller_reads : 0.0},
            {"poller_reads_per_port_hour", ports ? files.size() * 3600.0 / ports : 0},
            {"checksum", sum % 2}};
  emit_result(a.str("results", ""), r.dump());
  return 0;
}

}  // namespace rdma_eventd::bench
