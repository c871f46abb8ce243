// The daemon's life outside storms: how long it takes to be ready, and what it costs when
// nothing happens.
//
//   startup  spawns the daemon with NOTIFY_SOCKET and times exec -> READY=1. A daemon that
//            sends no READY=1 is timed to its "ready:" log line instead, and the result says
//            which (READY=1 is preferred whenever it comes within --grace-ms of the line).
//   idle     spawns the daemon with NOTIFY_SOCKET (and WATCHDOG_USEC with --watchdog-usec),
//            waits until it is ready (and has done its first devlink dump, when it follows
//            devlink), has one subscriber and every thread sleeps, then
//            counts its context switches (every thread, voluntary + nonvoluntary) and the
//            datagrams it sends over --seconds with no events.
#include <poll.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "commands.h"
#include "daemon_process.h"
#include "proc_stats.h"
#include "subscribers.h"

namespace rdma_eventd::bench {
namespace {

using nlohmann::json;

struct Ready {
  int64_t notify_ns = 0;  // READY=1 received (0: never)
  int64_t log_ns = 0;     // the "ready:" line read (0: never)
  std::string log_line;
  std::vector<std::string> datagrams;  // everything received meanwhile
};

Ready wait_ready(DaemonProcess& d, NotifySocket& notify, int64_t grace_ns, int64_t timeout_ns) {
  Ready r;
  const int64_t deadline = mono_ns() + timeout_ns;
  for (;;) {
    const int64_t now = mono_ns();
    const int64_t first = r.notify_ns && r.log_ns ? 0 : r.notify_ns ? r.notify_ns : r.log_ns;
    if (r.notify_ns && r.log_ns) return r;
    if (first && now > first + grace_ns) return r;
    if (!first && now > deadline)
      throw BenchError("the daemon was not ready within " +
                       std::to_string(timeout_ns / 1000000000) + " s:" + d.log_tail());
    const int64_t until = first ? first + grace_ns : deadline;
    pollfd p[2] = {{notify.fd(), POLLIN, 0}, {d.stderr_fd(), POLLIN, 0}};
    ::poll(p, 2, static_cast<int>(std::max<int64_t>(1, (until - now) / 1000000)));
    const int64_t t = mono_ns();
    while (auto dg = notify.receive()) {
      r.datagrams.push_back(*dg);
      if (!r.notify_ns && has_line(*dg, "READY=1")) r.notify_ns = t;
    }
    std::vector<std::string> lines;
    const bool open = d.read_stderr(lines);
    for (const std::string& l : lines) {
      if (!r.log_ns && l.find("ready:") != std::string::npos) {
        r.log_ns = t;
        r.log_line = l;
      }
    }
    if (!open || d.exited()) throw BenchError("the daemon exited while starting:" + d.log_tail());
  }
}

// "info: ready: watching 16 devices" -> 16
int devices_in(const std::string& ready_line) {
  const size_t at = ready_line.find("watching ");
  return at == std::string::npos ? -1 : std::atoi(ready_line.c_str() + at + 9);
}

// Each thread's voluntary switches in the window, the main thread's first ("main"), then the
// others' in the order of their IDs (a thread started within the window counts from 0).
json voluntary_by_thread(const ContextSwitches& before, const ContextSwitches& after, pid_t pid) {
  json out = json::object();
  for (const auto& [tid, count] : after.voluntary_by_thread) {
    const auto b = before.voluntary_by_thread.find(tid);
    const uint64_t was = b == before.voluntary_by_thread.end() ? 0 : b->second;
    out[tid == std::to_string(pid) ? std::string("main") : tid] = count - was;
  }
  return out;
}

}  // namespace

int cmd_startup(int argc, char** argv) {
  const Args a(argc, argv, {"grace-ms", "timeout-s", "figure", "run", "results"}, {});
  NotifySocket notify;
  int64_t spawned = 0;
  DaemonProcess d(a.command(), {"NOTIFY_SOCKET=" + notify.address()}, &spawned);
  const Ready r = wait_ready(d, notify, static_cast<int64_t>(a.num("grace-ms", 500)) * 1000000,
                             static_cast<int64_t>(a.num("timeout-s", 30)) * 1000000000);
  d.stop();
  const auto ms = [&](int64_t t) {
    return t ? json(static_cast<double>(t - spawned) / 1e6) : json();
  };
  json r_json = {{"kind", "startup"},
                 {"figure", a.str("figure", "")},
                 {"run", a.num("run", 0)},
                 {"ready_notify_ms", ms(r.notify_ns)},
                 {"ready_log_ms", ms(r.log_ns)},
                 {"devices", devices_in(r.log_line)},
                 {"datagrams", r.datagrams}};
  emit_result(a.str("results", ""), r_json.dump());
  return 0;
}

// What the daemon sent and logged during the idle window.
struct Window {
  uint64_t pings = 0, other_count = 0, log_lines = 0;
  std::vector<std::string> others;  // the first few datagrams that were not pings
  std::vector<std::string> logged;  // the first few log lines
};

// Reads the daemon's datagrams and log lines until `end` (or, with stop_at_ping, until the next
// WATCHDOG=1, which it counts); returns whether that ping came.
bool watch_until(DaemonProcess& d, NotifySocket& notify, int64_t end, Window& w,
                 bool stop_at_ping = false) {
  for (int64_t now = mono_ns(); now < end; now = mono_ns()) {
    pollfd p[2] = {{notify.fd(), POLLIN, 0}, {d.stderr_fd(), POLLIN, 0}};
    ::poll(p, 2, static_cast<int>(std::max<int64_t>(1, (end - now) / 1000000)));
    bool pinged = false;
    while (auto dg = notify.receive()) {
      if (has_line(*dg, "WATCHDOG=1")) {
        ++w.pings;
        pinged = true;
      } else {
        ++w.other_count;
        if (w.others.size() < 5) w.others.push_back(*dg);
      }
    }
    std::vector<std::string> lines;
    d.read_stderr(lines);
    w.log_lines += lines.size();
    for (std::string& l : lines)
      if (w.logged.size() < 5) w.logged.push_back(std::move(l));
    if (d.exited()) throw BenchError("the daemon exited while idle:" + d.log_tail());
    if (stop_at_ping && pinged) return true;
  }
  return false;
}

void next_ping(DaemonProcess& d, NotifySocket& notify, int64_t timeout_ns, Window& w) {
  if (!watch_until(d, notify, mono_ns() + timeout_ns, w, true)) {
    throw BenchError("no WATCHDOG=1 within " + std::to_string(timeout_ns / 1000000) + " ms");
  }
}

void wait_asleep(DaemonProcess& d) {
  const int64_t deadline = mono_ns() + 5'000'000'000;
  while (!all_threads_sleeping(d.pid())) {
    if (mono_ns() > deadline) throw BenchError("the daemon did not go to sleep within 5 s");
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

// A daemon that follows devlink dumps its reporters after READY=1, and a reporter it finds in
// error is a record of its own (found_in_error): the window starts once that first dump is
// done, as on a host where the daemon has been up a while.
void wait_devlink_dumped(const std::string& socket) {
  const int64_t deadline = mono_ns() + 10'000'000'000;
  for (;;) {
    const json devlink = daemon_status(socket).value("devlink", json::object());
    if (!devlink.value("enabled", false) || !devlink.value("available", false) ||
        devlink.value("dumps", 0) > 0)
      return;
    if (mono_ns() > deadline) throw BenchError("the daemon's first devlink dump took over 10 s");
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

int cmd_idle(int argc, char** argv) {
  const Args a(argc, argv,
               {"socket", "seconds", "watchdog-usec", "grace-ms", "figure", "run", "results"}, {});
  const uint64_t seconds = a.num("seconds", 60);
  const uint64_t watchdog_usec = a.num("watchdog-usec", 0);
  NotifySocket notify;
  std::vector<std::string> env = {"NOTIFY_SOCKET=" + notify.address()};
  if (watchdog_usec) env.push_back("WATCHDOG_USEC=" + std::to_string(watchdog_usec));
  DaemonProcess d(a.command(), env, nullptr);
  const Ready ready =
      wait_ready(d, notify, static_cast<int64_t>(a.num("grace-ms", 500)) * 1000000, 30'000'000'000);

  wait_devlink_dumped(a.str("socket"));
  // One subscriber, as on a host where a monitor is always connected.
  SubscriberSet subscriber(a.str("socket"), 1);
  wait_asleep(d);

  // What the daemon sent before it went to sleep (a STATUS= line for the new subscriber) is
  // not part of the window.
  while (notify.receive()) {
  }
  // With the watchdog on, the window runs from just after one ping to just after another, the
  // daemon asleep at both ends: every wakeup in it is either one of the pings counted or
  // something else, never a ping half in and half out of the window.
  const int64_t ping_timeout_ns = static_cast<int64_t>(watchdog_usec) * 2000;
  Window w;
  if (watchdog_usec) {
    next_ping(d, notify, ping_timeout_ns, w);
    wait_asleep(d);
  }
  const ContextSwitches before = context_switches(d.pid());
  const int64_t start = mono_ns();
  const int64_t end = start + static_cast<int64_t>(seconds) * 1000000000;
  w = Window{};
  watch_until(d, notify, end, w);
  if (watchdog_usec) {
    next_ping(d, notify, ping_timeout_ns, w);
    wait_asleep(d);
  }
  const ContextSwitches after = context_switches(d.pid());
  const double measured_s = static_cast<double>(mono_ns() - start) / 1e9;
  const json by_thread = voluntary_by_thread(before, after, d.pid());
  // After the window (the request wakes it): whether it was following devlink meanwhile.
  const nlohmann::json devlink = daemon_status(a.str("socket")).value("devlink", nlohmann::json());
  d.stop();

  json r = {{"kind", "idle"},
            {"figure", a.str("figure", "")},
            {"run", a.num("run", 0)},
            {"seconds", seconds},
            {"seconds_measured", measured_s},
            {"watchdog_usec", watchdog_usec},
            {"voluntary", after.voluntary - before.voluntary},
            {"nonvoluntary", after.nonvoluntary - before.nonvoluntary},
            {"switches", after.total() - before.total()},
            {"threads", after.threads},
            {"voluntary_by_thread", by_thread},
            {"watchdog_pings", w.pings},
            {"other_datagrams", w.other_count},
            {"other_samples", w.others},
            {"log_lines", w.log_lines},
            {"log_samples", w.logged},
            {"ready_by", ready.notify_ns ? "READY=1" : "log line"},
            {"devlink_available", devlink.is_object() && devlink.value("available", false)}};
  emit_result(a.str("results", ""), r.dump());
  return 0;
}

}  // namespace rdma_eventd::bench
