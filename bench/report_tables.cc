// The sections of docs/benchmarks.md after the storms: latency, fan-out, idle cost, memory,
// start-up.
#include <algorithm>
#include <cmath>

#include "report.h"

namespace rdma_eventd::bench {
namespace {

using nlohmann::json;

constexpr double kRssTargetKib = 16 * 1024;  // at 1,000 subscribers
constexpr double kReadyTargetMs = 50;        // 16 devices

const char* const kSubscriberCounts[] = {"1", "100", "1000"};

std::string subscribers_of(const Results& r, const std::string& fig, const std::string& fallback) {
  const json j = r.first(fig);
  return j.is_null() ? fallback : grouped(j.value("subscribers", 0.0));
}

std::string latency_figure(const std::string& n) {
  return "latency." + n;
}
std::string fanout_figure(const std::string& n) {
  return "fanout." + n;
}

}  // namespace

void latency_section(std::ostringstream& out, const Results& r, std::vector<TargetRow>&) {
  const json first = r.first(latency_figure("1"));
  out << "## Latency\n\n";
  if (first.is_null()) {
    out << "Not measured in this run.\n\n";
  } else {
    out << grouped(first.value("events", 0.0)) << " events at " << grouped(first.value("rate", 0.0))
        << " events/s, each one raw `port_err` on `" << first.value("target", "")
        << "` (one record), with the daemon watching the 16 devices × 2 ports fabric, journal "
           "off. Each event is sent on a control connection made in advance, and its time is "
           "read just before the send; each subscriber is a connection to the daemon's socket, "
           "all read with epoll by one thread of the bench program, and a sample is the time "
           "of the read that completed the record's line minus the event's injection time. "
           "Samples: every subscriber × every event. Percentiles are nearest-rank, in µs; each "
           "cell is the median over the runs and the spread. \"Injected\" is the rate the "
           "injection kept (a late injection is followed by the next ones at once); \"reader "
           "busy\" is the share of the run the bench program's reader thread spent on the CPU: "
           "near 100%, the subscribers' side, not the daemon, sets the latency.\n\n"
        << "| subscribers | p50 (µs) | p99 (µs) | p99.9 (µs) | max (µs), worst run | samples per "
           "run "
           "| records lost | injected (events/s) | reader busy |\n"
           "|---|---|---|---|---|---|---|---|---|\n";
    for (const char* n : kSubscriberCounts) {
      const std::string fig = latency_figure(n);
      if (r.of(fig).empty()) continue;
      const auto max = r.spread(fig, "max_us");
      const auto samples = r.spread(fig, "samples");
      const double expected = r.first(fig).value("samples_expected", 0.0);
      const double lost = r.total(fig, "lost_records") + r.total(fig, "missing");
      std::vector<double> rate, busy = r.values(fig, "reader_busy");
      for (const json& j : r.of(fig))
        if (j.value("injection_seconds", 0.0) > 0)
          rate.push_back(j.value("events", 0.0) / j.value("injection_seconds", 1.0));
      for (double& b : busy)
        b *= 100;
      out << "| " << subscribers_of(r, fig, n) << " | " << with_spread(r.spread(fig, "p50_us"), 1)
          << " | " << with_spread(r.spread(fig, "p99_us"), 1) << " | "
          << with_spread(r.spread(fig, "p999_us"), 1) << " | " << (max ? fixed(max->max, 1) : "–")
          << " | " << (samples ? grouped(samples->min) : "–") << " of " << grouped(expected)
          << " | " << (lost > 0 ? "**" + grouped(lost) + "**" : std::string("none")) << " | "
          << median_only(spread_of(rate), 0, true) << " | "
          << (spread_of(busy) ? fixed(spread_of(busy)->median, 0) + "%" : "–") << " |\n";
    }
    out << "\n";
  }
}

void fanout_section(std::ostringstream& out, const Results& r, std::vector<TargetRow>&) {
  const json storm = r.first(fanout_figure("1"));
  const json any = r.first(latency_figure("1")).is_null() ? storm : r.first(latency_figure("1"));
  out << "## Fan-out: the daemon's CPU time per event\n\n";
  if (any.is_null()) {
    out << "Not measured in this run.\n\n";
    return;
  }
  const bool schedstat = any.value("cpu_source", "") == "schedstat";
  out << "The daemon's CPU time over a run (every thread), divided by the run's events, in µs: "
      << (schedstat ? "the scheduler's run time of each thread (`/proc/PID/task/*/schedstat`, "
                      "in ns), and next to it utime + stime from `/proc/PID/stat`, which "
                      "is the same time counted in ticks of "
                    : "utime + stime from `/proc/PID/stat`, counted in ticks of ")
      << fixed(any.value("clock_tick_s", 0.01) * 1000, 0)
      << " ms (good to one tick divided by the events). Measured during the latency runs "
         "above (1,000 events/s) and during a storm of "
      << (storm.is_null() ? std::string("N") : grouped(storm.value("count", 0.0)))
      << " events over the 32 ports, read by as many subscribers (a subscriber that falls more "
         "than `socket.max_queued_bytes`, 1 MiB, behind loses records and is told so: counted "
         "below). The ratios are to the 1-subscriber figure, run by run.\n\n"
      << "| subscribers | at 1,000 events/s (µs) | × 1 subscriber | utime+stime (µs) | in a storm "
         "(µs) | × 1 subscriber | utime+stime (µs) | storm: records lost |\n"
         "|---|---|---|---|---|---|---|---|\n";
  const auto ratio_cell = [&](const std::string& fig, const std::string& one) {
    const auto q = r.ratio(fig, one, "cpu_per_event_us");
    return q ? with_spread(q, 2) : std::string("–");
  };
  for (const char* n : kSubscriberCounts) {
    const std::string lat = latency_figure(n), fan = fanout_figure(n);
    if (r.of(lat).empty() && r.of(fan).empty()) continue;
    const double lost = r.total(fan, "lost_records") + r.total(fan, "missing");
    out << "| " << subscribers_of(r, lat, subscribers_of(r, fan, n)) << " | "
        << with_spread(r.spread(lat, "cpu_per_event_us"), 2) << " | "
        << ratio_cell(lat, latency_figure("1")) << " | "
        << median_only(r.spread(lat, "utime_stime_per_event_us"), 2) << " | "
        << with_spread(r.spread(fan, "cpu_per_event_us"), 2) << " | "
        << ratio_cell(fan, fanout_figure("1")) << " | "
        << median_only(r.spread(fan, "utime_stime_per_event_us"), 2) << " | "
        << (r.of(fan).empty() ? "–"
            : lost > 0        ? "**" + grouped(lost) + "**"
                              : "none")
        << " |\n";
  }
  out << "\n";
}

void idle_section(std::ostringstream& out, const Results& r, std::vector<TargetRow>& targets) {
  const json off = r.first("idle.off"), on = r.first("idle.on");
  out << "## Idle cost\n\n";
  if (off.is_null() && on.is_null()) {
    out << "Not measured in this run.\n\n";
    return;
  }
  const double seconds = (off.is_null() ? on : off).value("seconds", 0.0);
  const double usec = on.is_null() ? 0 : on.value("watchdog_usec", 0.0);
  out << "The daemon on the 16 devices × 2 ports fabric (journal on, one subscriber connected), "
         "on a host where udev runs (`/run/udev/control` exists: the daemon follows udev's "
         "events for hot-plug, with no timer; nothing is plugged meanwhile), started with "
         "`NOTIFY_SOCKET` (a datagram socket the bench program reads) and, for "
         "\"watchdog on\", `WATCHDOG_USEC="
      << grouped(usec)
      << "`. Once it is ready and every thread sleeps, its context switches (voluntary + "
         "nonvoluntary, summed over its threads from `/proc/PID/task/*/status`) and the "
         "datagrams it sends are counted over "
      << grouped(seconds)
      << " s with no events; with the watchdog on, the window starts just after a ping and "
         "ends just after the first ping past those seconds, the daemon asleep at both ends, "
         "so that no ping is half in and half out of it. A thread that wakes up goes back to "
         "sleep with a voluntary switch, so the voluntary switches count the wakeups; a "
         "nonvoluntary switch is a thread already awake being preempted (on a busy machine, "
         "while it handles a wakeup), which adds none. \"Other wakeups\" are the voluntary "
         "switches that no `WATCHDOG=1` accounts for, in the worst run. The runs of both rows "
         "run at the same time, each with its own daemon (an idle daemon competes for "
         "nothing).\n\n"
      << "| watchdog | window (s) | context switches | voluntary | nonvoluntary | `WATCHDOG=1` "
         "datagrams | other wakeups, worst run | other datagrams |\n"
         "|---|---|---|---|---|---|---|---|\n";
  const auto row = [&](const std::string& fig, const std::string& name) {
    if (r.of(fig).empty()) return;
    double extra = 0;
    for (const json& j : r.of(fig))
      extra = std::max(extra, j.value("voluntary", 0.0) - j.value("watchdog_pings", 0.0));
    const auto window = r.spread(fig, "seconds_measured");
    out << "| " << name << " | " << (window ? fixed(window->median, 1) : "–") << " | "
        << with_spread(r.spread(fig, "switches"), 0) << " | "
        << median_only(r.spread(fig, "voluntary"), 0) << " | "
        << median_only(r.spread(fig, "nonvoluntary"), 0) << " | "
        << with_spread(r.spread(fig, "watchdog_pings"), 0) << " | " << grouped(extra) << " | "
        << grouped(r.total(fig, "other_datagrams")) << " in all runs |\n";
  };
  row("idle.off", "off");
  row("idle.on", "on (`WATCHDOG_USEC=" + grouped(usec) + "`)");
  row("idle.no_udev", "off, **no udev** (a container)");
  row("idle.links", "off, **link quality on** (the shipped defaults)");
  out << "\n";
  out << "The first three rows run with `link_health.enabled` false: the floor. Link quality, on "
         "by default, reads every port's error counters once per `link_health.interval_s` "
         "(60 s) while a port is up: the last row, with the shipped defaults, is that timer's "
         "wakeups (docs/health.md, \"Link quality\"; its cost per read is in \"Link "
         "quality\" below).\n\n";
  if (!r.of("idle.no_udev").empty()) {
    out << "Where udev does not run (most containers), the daemon cannot be told about hot-plug "
           "and rescans the devices every 5 s instead (docs/architecture.md): the last row, "
           "measured the same way after the others, costs those wakeups and nothing else.\n\n";
  }

  const auto sw_off = r.spread("idle.off", "switches");
  targets.push_back({"context switches in " + grouped(seconds) + " s idle, watchdog off",
                     sw_off ? grouped(sw_off->median) : "–", spread_only(sw_off, 0), "0",
                     sw_off ? met_text(sw_off->max == 0) : met_text(std::nullopt)});
  // With the watchdog on: at least one ping per WATCHDOG_USEC, and no wakeup but the pings.
  std::optional<bool> only_pings;
  std::string why;
  const double needed = usec > 0 ? seconds * 1e6 / usec : 0;
  for (const json& j : r.of("idle.on")) {
    const double pings = j.value("watchdog_pings", 0.0);
    const double wakeups = j.value("voluntary", 0.0);
    bool ok = pings >= needed && wakeups <= pings && j.value("other_datagrams", 0) == 0;
    if (pings == 0) why = " (no `WATCHDOG=1` was sent)";
    only_pings = only_pings.value_or(true) && ok;
  }
  // Link quality on: one wakeup per interval (60 s), at most one more for the window's edges.
  const auto sw_links = r.spread("idle.links", "voluntary");
  if (sw_links) {
    const double allowed = std::ceil(seconds / 60) + 1;
    targets.push_back({"wakeups in " + grouped(seconds) + " s idle, link quality on (60 s)",
                       grouped(sw_links->median), spread_only(sw_links, 0),
                       "one per `interval_s` (≤ " + grouped(allowed) + ")",
                       met_text(sw_links->max <= allowed)});
  }
  const auto sw_on = r.spread("idle.on", "voluntary");
  targets.push_back({"wakeups (voluntary switches) in " + grouped(seconds) + " s idle, watchdog on",
                     sw_on ? grouped(sw_on->median) : "–", spread_only(sw_on, 0),
                     "only the `WATCHDOG=1` pings (≥ " + grouped(needed) + ")",
                     met_text(only_pings) + (only_pings && !*only_pings ? why : "")});
}

void memory_section(std::ostringstream& out, const Results& r, std::vector<TargetRow>& targets) {
  // One row: VmRSS and VmHWM of every run of `fig`, in MiB.
  const auto mib = [&](const std::string& fig, const std::string& key) {
    std::vector<double> v = r.values(fig, key);
    for (double& x : v)
      x /= 1024;
    return spread_of(v);
  };
  const auto row = [&](const std::string& fig, const std::string& label) {
    if (r.of(fig).empty()) return;
    out << "| " << label << " | " << with_spread(mib(fig, "rss_kib"), 1) << " | "
        << with_spread(mib(fig, "hwm_kib"), 1) << " |\n";
  };
  out << "## Memory\n\n"
      << "The daemon's `VmRSS` (resident now) and `VmHWM` (the most it was resident), from "
         "`/proc/PID/status`, in MiB.\n\n";
  if (r.of(fanout_figure("1000")).empty() && r.of(fanout_figure("1")).empty()) {
    out << "Not measured with subscribers in this run.\n\n";
  } else {
    const double settle_s = r.first(fanout_figure("1000")).value("settle_ms", 0.0) / 1000;
    out << "On the 16 devices × 2 ports fabric (journal off), right after the fan-out storm "
           "above and again "
        << fixed(settle_s, 0)
        << " s later, its subscribers still connected. During a storm the daemon holds what "
           "its subscribers have not read yet (up to `socket.max_queued_bytes` each); once it "
           "has been quiet for a second it gives the free memory back to the system "
           "(`malloc_trim`), and keeps its replay ring (`socket.ring_records`, 4,096 records) "
           "and its subscribers' state:\n\n"
        << "| subscribers | VmRSS right after (MiB) | VmRSS " << fixed(settle_s, 0)
        << " s later (MiB) | VmHWM (MiB) |\n|---|---|---|---|\n";
    for (const char* n : kSubscriberCounts) {
      const std::string fig = fanout_figure(n);
      if (r.of(fig).empty()) continue;
      out << "| " << subscribers_of(r, fig, n) << " | " << with_spread(mib(fig, "rss_kib"), 1)
          << " | " << with_spread(mib(fig, "rss_settled_kib"), 1) << " | "
          << with_spread(mib(fig, "hwm_kib"), 1) << " |\n";
    }
    out << "\n";
  }
  // The storms' daemons, journal off and on: the journal writer's queue holds up to 65,536
  // entries while journald catches up.
  const std::pair<const char*, const char*> storms[] = {
      {"storm.one.daemon_off", "1 device, journal off"},
      {"storm.one.daemon_on", "1 device, journal on"},
      {"storm.sixteen.daemon_off", "16 × 2 ports, journal off"},
      {"storm.sixteen.daemon_on", "16 × 2 ports, journal on"}};
  if (!r.of(storms[0].first).empty() || !r.of(storms[2].first).empty()) {
    out << "Right after the throughput storms above, one subscriber connected:\n\n"
        << "| storm | VmRSS (MiB) | VmHWM (MiB) |\n|---|---|---|\n";
    for (const auto& [fig, name] : storms)
      if (!r.of(fig).empty())
        row(fig, std::string(name) + ", " + grouped(r.first(fig).value("count", 0.0)) + " events");
    out << "\n";
  }
  // The daemon's size while it serves 1,000 subscribers: once a storm is over, not during it.
  const auto rss = r.spread(fanout_figure("1000"), "rss_settled_kib");
  targets.push_back({"RSS at " + subscribers_of(r, fanout_figure("1000"), "1,000") +
                         " subscribers, 16 × 2 ports, journal off, a few seconds after a storm "
                         "(MiB)",
                     rss ? fixed(rss->median / 1024, 1) : "–",
                     rss ? fixed(rss->min / 1024, 1) + "–" + fixed(rss->max / 1024, 1) : "–",
                     "≤ 16 MiB",
                     rss ? met_text(rss->median <= kRssTargetKib) : met_text(std::nullopt)});
}

void startup_section(std::ostringstream& out, const Results& r, std::vector<TargetRow>& targets) {
  const auto& runs = r.of("startup");
  out << "## Start-up\n\n";
  // READY=1 when every run sent it; otherwise the "ready:" log line, and the figure says so.
  const bool notify = !runs.empty() && std::all_of(runs.begin(), runs.end(), [](const json& j) {
    return j.contains("ready_notify_ms") && j["ready_notify_ms"].is_number();
  });
  const std::string key = notify ? "ready_notify_ms" : "ready_log_ms";
  const std::string what =
      notify ? "exec → READY=1" : "exec → the \"ready:\" log line (no READY=1 was sent)";
  const auto s = r.spread("startup", key);
  if (runs.empty()) {
    out << "Not measured in this run.\n\n";
  } else {
    int devices = runs.front().value("devices", -1);
    out << "The daemon (journal on, its socket, " << devices
        << " devices × 2 ports) spawned by the bench program with `NOTIFY_SOCKET`, from just "
           "before the spawn to `READY=1` on that socket; a daemon that does not send it is "
           "timed to its \"ready:\" log line on stderr instead (READY=1 is used whenever it "
           "comes), and the figure says which.\n\n"
        << "| measured | ms | spread (min–max) |\n|---|---|---|\n"
        << "| " << what << " | " << median_only(s, 2) << " | " << spread_only(s, 2) << " |\n";
    if (notify && r.spread("startup", "ready_log_ms"))
      out << "| exec → the \"ready:\" log line | "
          << median_only(r.spread("startup", "ready_log_ms"), 2) << " | "
          << spread_only(r.spread("startup", "ready_log_ms"), 2) << " |\n";
    out << "\n";
  }
  targets.push_back({"start-up with 16 devices, " + what + " (ms)", s ? fixed(s->median, 2) : "–",
                     spread_only(s, 2), "≤ 50 ms",
                     s ? met_text(s->median <= kReadyTargetMs) : met_text(std::nullopt)});
}

}  // namespace rdma_eventd::bench
