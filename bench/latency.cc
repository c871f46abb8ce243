// Latency from injection to a subscriber's read, at a fixed event rate.
//
// Event k is injected at start + k / rate (inject_at_rate: "rdma-sim event DEV/PORT
// port_err", one raw event, one record; with --inject devlink, "rdma-sim devlink report DEV
// REPORTER", one devlink health notification, one record; the clock is read just before the
// request is sent). Every
// subscriber reads on the reader thread; the sample for (subscriber, event) is the time of the read
// that completed the record's line minus the injection time. Record seq hello_seq + 1 + k is event
// k (nothing else happens on the fabric meanwhile). The daemon's CPU time is taken over the whole
// run. With --reporters N, N idle reporters of the client library are connected for the run.
#include <sys/prctl.h>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "idle_reporters.h"
#include "latency_samples.h"
#include "proc_stats.h"
#include "sim_control.h"
#include "subscribers.h"

namespace rdma_eventd::bench {

using nlohmann::json;

int cmd_latency(int argc, char** argv) {
  const Args a(argc, argv,
               {"sim", "socket", "daemon-pid", "subscribers", "events", "rate", "target", "figure",
                "run", "results", "reporters", "inject", "devlink-reporter"},
               {});
  const uint64_t events = a.num("events");
  const uint64_t rate = a.num("rate", 1000);
  const size_t nsubs = a.num("subscribers", 1);
  const std::string target = a.str("target", "mlx5_0/1");
  const auto pid = static_cast<pid_t>(a.num("daemon-pid"));
  if (events == 0 || rate == 0) throw BenchError("--events and --rate must be positive");
  // --inject devlink: --target is a device, --devlink-reporter one of its reporters that does not
  // recover (each report is then one notification, one record).
  const std::string inject = a.str("inject", "port_err");
  const std::string devlink_reporter = a.str("devlink-reporter", "fw");
  nlohmann::json request;
  if (inject == "port_err") {
    request = port_err_request(target);
  } else if (inject == "devlink") {
    request = SimControl::devlink_report(target, devlink_reporter);
  } else {
    throw BenchError("--inject takes port_err or devlink, not '" + inject + "'");
  }
  const SimControl sim(a.str("sim"));
  // The pacing sleeps: without this the kernel may wake this thread up to 50 us late.
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);

  // Idle reporters (--reporters N), connected for the whole run: what they cost the fan-out.
  const IdleReporters idle(a.str("socket"), a.num("reporters", 0));
  LatencySamples samples(nsubs, events);
  const InjectedRun run =
      run_injected(a.str("socket"), nsubs, sim, request, events, rate, pid, samples);
  const Injection& in = run.injection;
  const StreamTotals& totals = run.totals;
  const Memory mem = memory(pid);

  json r = injection_result("latency", a, nsubs, events, rate, target);
  r.update(json{
      {"inject", inject},
      {"complete", run.complete},
      {"injection_seconds", static_cast<double>(in.end_ns - in.start_ns) / 1e9},
      {"max_injection_lateness_us", static_cast<double>(in.late_ns) / 1e3},
      {"records", totals.records},
      {"bytes", totals.bytes},  // the records' lines, newlines included (the hello is not)
      {"lost_records", totals.lost_records},
      {"missing", totals.missing},
      {"unexpected", totals.unexpected},
      {"reader_cpu_s", totals.reader_cpu_s},
      {"reader_busy", totals.reader_wall_s > 0 ? totals.reader_cpu_s / totals.reader_wall_s : 0},
      {"rss_kib", mem.rss_kib},
      {"hwm_kib", mem.hwm_kib},
      {"reporters", idle.describe()}});
  if (inject == "devlink") r["devlink_reporter"] = devlink_reporter;
  samples.summarize(r);
  add_cpu(r, run.cpu, events);
  emit_result(a.str("results", ""), r.dump());
  return run.complete ? 0 : 1;
}

}  // namespace rdma_eventd::bench
