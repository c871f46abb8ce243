// What /proc says about a process the test started: for checks that a daemon does not leak
// descriptors or memory, and does not wake up when it has nothing to do.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace rdmatest {

// Entries of /proc/PID/fd.
size_t open_fds(pid_t pid);
// A "kB" field of /proc/PID/status ("VmRSS", "VmHWM"), in bytes. HarnessError if absent.
uint64_t status_bytes(pid_t pid, const std::string& field);
// voluntary_ctxt_switches of the process's main thread: it grows each time the thread sleeps
// and wakes up again (a timer, an fd, a signal).
uint64_t main_thread_wakeups(pid_t pid);
// The same summed over the threads it has now (a thread that ended takes its count with it).
uint64_t all_threads_wakeups(pid_t pid);
// Entries of /proc/PID/task: its threads.
size_t thread_count(pid_t pid);
// CPU time the process used, user and system, in clock ticks (/proc/PID/stat utime + stime).
uint64_t cpu_ticks(pid_t pid);

}  // namespace rdmatest
