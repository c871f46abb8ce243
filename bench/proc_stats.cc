#include "proc_stats.h"

#include <dirent.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "util.h"

namespace rdma_eventd::bench {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw BenchError("cannot read " + path + " (has the process exited?)");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The fields after "(comm)": comm may hold spaces and parentheses, so split after the last ')'.
std::vector<std::string> stat_fields(const std::string& path) {
  const std::string text = read_file(path);
  const size_t close = text.rfind(')');
  if (close == std::string::npos) throw BenchError("malformed " + path);
  std::istringstream rest(text.substr(close + 1));
  std::vector<std::string> fields;
  for (std::string f; rest >> f;)
    fields.push_back(f);
  return fields;  // fields[0] is field 3 (state)
}

uint64_t status_value(const std::string& text, const std::string& key) {
  const size_t at = text.find("\n" + key + ":");
  if (at == std::string::npos) return 0;
  return std::strtoull(text.c_str() + at + key.size() + 2, nullptr, 10);
}

std::vector<std::string> task_ids(pid_t pid) {
  const std::string dir = "/proc/" + std::to_string(pid) + "/task";
  std::vector<std::string> ids;
  DIR* d = opendir(dir.c_str());
  if (!d) throw BenchError(errno_text("opendir " + dir));
  while (const dirent* e = readdir(d))
    if (e->d_name[0] != '.') ids.emplace_back(e->d_name);
  closedir(d);
  return ids;
}

}  // namespace

double clock_tick_seconds() {
  return 1.0 / static_cast<double>(sysconf(_SC_CLK_TCK));
}

CpuTime cpu_time(pid_t pid) {
  CpuTime t;
  const auto f = stat_fields("/proc/" + std::to_string(pid) + "/stat");
  if (f.size() < 13) throw BenchError("short /proc/" + std::to_string(pid) + "/stat");
  const uint64_t ticks = std::strtoull(f[11].c_str(), nullptr, 10) +  // utime (field 14)
                         std::strtoull(f[12].c_str(), nullptr, 10);   // stime (field 15)
  t.utime_stime = static_cast<double>(ticks) * clock_tick_seconds();
  t.has_schedstat = true;
  uint64_t ns = 0;
  for (const std::string& tid : task_ids(pid)) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + tid + "/schedstat");
    uint64_t run_ns = 0;
    if (!(in >> run_ns)) t.has_schedstat = false;
    ns += run_ns;
  }
  t.schedstat = t.has_schedstat ? static_cast<double>(ns) / 1e9 : 0;
  return t;
}

void add_cpu(nlohmann::json& r, const CpuTime& cpu, uint64_t events) {
  const double n = static_cast<double>(events);
  r["daemon_cpu_s"] = cpu.best();
  r["cpu_per_event_us"] = cpu.best() / n * 1e6;
  r["utime_stime_s"] = cpu.utime_stime;
  r["utime_stime_per_event_us"] = cpu.utime_stime / n * 1e6;
  r["cpu_source"] = cpu.has_schedstat ? "schedstat" : "utime+stime";
  r["clock_tick_s"] = clock_tick_seconds();
}

CpuTime operator-(const CpuTime& a, const CpuTime& b) {
  return CpuTime{a.utime_stime - b.utime_stime, a.schedstat - b.schedstat,
                 a.has_schedstat && b.has_schedstat};
}

ContextSwitches context_switches(pid_t pid) {
  ContextSwitches c;
  for (const std::string& tid : task_ids(pid)) {
    const std::string text =
        "\n" + read_file("/proc/" + std::to_string(pid) + "/task/" + tid + "/status");
    const uint64_t voluntary = status_value(text, "voluntary_ctxt_switches");
    c.voluntary += voluntary;
    c.voluntary_by_thread[tid] = voluntary;
    c.nonvoluntary += status_value(text, "nonvoluntary_ctxt_switches");
    ++c.threads;
  }
  return c;
}

Memory memory(pid_t pid) {
  const std::string text = "\n" + read_file("/proc/" + std::to_string(pid) + "/status");
  return Memory{status_value(text, "VmRSS"), status_value(text, "VmHWM")};
}

bool all_threads_sleeping(pid_t pid) {
  for (const std::string& tid : task_ids(pid)) {
    const auto f = stat_fields("/proc/" + std::to_string(pid) + "/task/" + tid + "/stat");
    if (f.empty() || f[0] != "S") return false;
  }
  return true;
}

}  // namespace rdma_eventd::bench
