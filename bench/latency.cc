// Latency from injection to a subscriber's read, at a fixed event rate.
//
// Event k is injected at start + k / rate (an absolute schedule, so a late injection does not
// delay the following ones): the control connection is made in advance, the clock is read
// just before the request is sent ("rdma-sim event DEV/PORT port_err": one raw event, one
// record), and the reply is read afterwards. Every subscriber reads on the reader thread;
// the sample for (subscriber, event) is the time of the read that completed the record's
// line minus the injection time. Record seq hello_seq + 1 + k is event k (nothing else
// happens on the fabric meanwhile). The daemon's CPU time is taken over the whole run.
#include <sys/prctl.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <ctime>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "proc_stats.h"
#include "sim_control.h"
#include "subscribers.h"

namespace rdma_eventd::bench {
namespace {

using nlohmann::json;

// Samples in µs as floats: 4 bytes each (1,000 subscribers x 10,000 events is 40 MB), 24 bits
// of precision, no ceiling.
constexpr float kNoSample = -1;

// Nearest rank: the smallest sample with at least p of all samples at or below it.
double percentile_us(const std::vector<float>& sorted, double p) {
  if (sorted.empty()) return 0;
  const auto rank = static_cast<size_t>(std::ceil(p * static_cast<double>(sorted.size())));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

void sleep_until(int64_t t_ns) {
  const timespec ts{static_cast<time_t>(t_ns / 1000000000), static_cast<long>(t_ns % 1000000000)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

}  // namespace

int cmd_latency(int argc, char** argv) {
  const Args a(argc, argv,
               {"sim", "socket", "daemon-pid", "subscribers", "events", "rate", "target", "figure",
                "run", "results"},
               {});
  const uint64_t events = a.num("events");
  const uint64_t rate = a.num("rate", 1000);
  const size_t nsubs = a.num("subscribers", 1);
  const std::string target = a.str("target", "mlx5_0/1");
  const auto pid = static_cast<pid_t>(a.num("daemon-pid"));
  if (events == 0 || rate == 0) throw BenchError("--events and --rate must be positive");
  const SimControl sim(a.str("sim"));
  // The pacing sleeps: without this the kernel may wake this thread up to 50 us late.
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);

  SubscriberSet subs(a.str("socket"), nsubs);
  std::unique_ptr<std::atomic<int64_t>[]> injected(new std::atomic<int64_t>[events]);
  for (uint64_t k = 0; k < events; ++k)
    injected[k].store(0, std::memory_order_relaxed);
  std::vector<float> samples(nsubs * events, kNoSample);
  subs.start(events, [&](size_t conn, uint64_t seq, int64_t read_ns) {
    const uint64_t base = subs.hello_seq(conn);
    if (seq <= base || seq - base > events) return;
    const uint64_t k = seq - base - 1;
    const int64_t t0 = injected[k].load(std::memory_order_acquire);
    if (t0 == 0 || read_ns < t0) return;
    samples[conn * events + k] = static_cast<float>(read_ns - t0) / 1000.0f;
  });

  const CpuTime cpu_before = cpu_time(pid);
  const int64_t period = 1000000000 / static_cast<int64_t>(rate);
  const int64_t start = mono_ns() + 10000000;
  int64_t late_ns = 0;
  const std::string line = SimControl::event(target, 10).dump() + "\n";  // IBV_EVENT_PORT_ERR
  SimControl::Request req = sim.connect();
  for (uint64_t k = 0; k < events; ++k) {
    const int64_t due = start + static_cast<int64_t>(k) * period;
    sleep_until(due);
    const int64_t t0 = mono_ns();
    injected[k].store(t0, std::memory_order_release);
    req.send_line(line);
    late_ns = std::max(late_ns, t0 - due);
    req.reply();
    if (k + 1 < events) req = sim.connect();
  }
  const int64_t end_inject = mono_ns();
  const bool complete = subs.wait(end_inject + 30'000'000'000);
  const CpuTime cpu = cpu_time(pid) - cpu_before;
  const StreamTotals totals = subs.stop_and_total();
  const Memory mem = memory(pid);

  std::vector<float> got;
  got.reserve(samples.size());
  for (float s : samples)
    if (s >= 0) got.push_back(s);
  std::sort(got.begin(), got.end());
  double sum = 0;
  for (float s : got)
    sum += s;

  json r = {
      {"kind", "latency"},
      {"figure", a.str("figure", "")},
      {"run", a.num("run", 0)},
      {"subscribers", nsubs},
      {"events", events},
      {"rate", rate},
      {"target", target},
      {"complete", complete},
      {"injection_seconds", static_cast<double>(end_inject - start) / 1e9},
      {"max_injection_lateness_us", static_cast<double>(late_ns) / 1e3},
      {"samples", got.size()},
      {"samples_expected", samples.size()},
      {"p50_us", percentile_us(got, 0.50)},
      {"p99_us", percentile_us(got, 0.99)},
      {"p999_us", percentile_us(got, 0.999)},
      {"max_us", got.empty() ? 0.0 : got.back()},
      {"mean_us", got.empty() ? 0.0 : sum / static_cast<double>(got.size())},
      {"records", totals.records},
      {"lost_records", totals.lost_records},
      {"missing", totals.missing},
      {"unexpected", totals.unexpected},
      {"reader_cpu_s", totals.reader_cpu_s},
      {"reader_busy", totals.reader_wall_s > 0 ? totals.reader_cpu_s / totals.reader_wall_s : 0},
      {"rss_kib", mem.rss_kib},
      {"hwm_kib", mem.hwm_kib}};
  add_cpu(r, cpu, events);
  emit_result(a.str("results", ""), r.dump());
  return complete ? 0 : 1;
}

}  // namespace rdma_eventd::bench
