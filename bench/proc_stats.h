// What /proc says about the daemon: its CPU time, its context switches, its memory, whether it
// sleeps.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace rdma_eventd::bench {

// The CPU time of the whole process, in seconds, two ways:
// - utime + stime (/proc/PID/stat fields 14 and 15, every thread), which the kernel keeps in
//   clock ticks (sysconf(_SC_CLK_TCK), 100 per second on Debian): only as fine as one tick;
// - the scheduler's run time of each thread (/proc/PID/task/*/schedstat, first field, in ns),
//   summed: the same time, to the nanosecond. 0 when the kernel has no schedstat.
struct CpuTime {
  double utime_stime = 0;
  double schedstat = 0;
  bool has_schedstat = false;
  // The precise one when there is one.
  double best() const { return has_schedstat ? schedstat : utime_stime; }
};
CpuTime cpu_time(pid_t pid);
CpuTime operator-(const CpuTime& a, const CpuTime& b);
double clock_tick_seconds();
// The result keys for `cpu` spent on `events`: daemon_cpu_s and cpu_per_event_us (the precise
// time), utime_stime_s and utime_stime_per_event_us, cpu_source, clock_tick_s.
void add_cpu(nlohmann::json& result, const CpuTime& cpu, uint64_t events);

// voluntary + nonvoluntary context switches, summed over every thread (/proc/PID/task/*/status;
// /proc/PID/status alone counts the main thread only).
struct ContextSwitches {
  uint64_t voluntary = 0;
  uint64_t nonvoluntary = 0;
  int threads = 0;
  std::map<std::string, uint64_t> voluntary_by_thread;  // by thread ID
  uint64_t total() const { return voluntary + nonvoluntary; }
};
ContextSwitches context_switches(pid_t pid);

// VmRSS and VmHWM (/proc/PID/status), in KiB.
struct Memory {
  uint64_t rss_kib = 0;
  uint64_t hwm_kib = 0;
};
Memory memory(pid_t pid);

// True when every thread of the process is asleep (state S): blocked in epoll_wait, on a
// condition variable. The start of a window that must see no wakeups.
bool all_threads_sleeping(pid_t pid);

}  // namespace rdma_eventd::bench
