// Injection-to-read latency samples, shared by the latency runs (latency.cc) and the floor under
// fan-out (floor.cc): event k's injection time, and for every subscriber the time of the read
// that completed the line of its record (seq hello_seq + 1 + k), in µs; and the injection both
// use (inject_at_rate) and the run around it (run_injected).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "proc_stats.h"
#include "sim_control.h"
#include "subscribers.h"
#include "util.h"

namespace rdma_eventd::bench {

class LatencySamples {
 public:
  LatencySamples(size_t subscribers, uint64_t events);

  // The reader's hook for `subs` (pass to SubscriberSet::start).
  SubscriberSet::RecordHook hook(const SubscriberSet& subs);
  // Event k was injected now (read just before the injection).
  void injected(uint64_t k, int64_t t_ns) { injected_[k].store(t_ns, std::memory_order_release); }

  // samples, samples_expected, p50_us, p99_us, p999_us, max_us, mean_us (nearest-rank).
  void summarize(nlohmann::json& result) const;

 private:
  uint64_t events_;
  std::unique_ptr<std::atomic<int64_t>[]> injected_;
  // Samples in µs as floats: 4 bytes each (1,000 subscribers x 10,000 events is 40 MB), 24
  // bits of precision, no ceiling; negative until taken.
  std::vector<float> samples_;
};

// Events injected at a fixed rate (inject_at_rate).
struct Injection {
  int64_t start_ns = 0;  // event 0's due time
  int64_t end_ns = 0;    // just after the last event's request was answered
  int64_t late_ns = 0;   // the latest any event was injected after its due time
};

// Sends `request` (port_err_request: a raw IBV_EVENT_PORT_ERR on a port, one record, no state
// change; or SimControl::devlink_report) `events` times through the simulator's control socket,
// event k at start + k / rate (an absolute schedule: a late injection does not delay the
// following ones). The connection for each request is made in advance and the clock read just
// before its send, which `samples` gets as event k's injection time. The latency runs and the
// floor inject alike, so their samples cover the same path from the injection to the
// consumer's read.
Injection inject_at_rate(const SimControl& sim, const nlohmann::json& request, uint64_t events,
                         uint64_t rate, LatencySamples& samples);

// A raw IBV_EVENT_PORT_ERR on `target` ("mlx5_0/1").
nlohmann::json port_err_request(const std::string& target);

// A run of the latency runs and of the floor under fan-out: `subscribers` subscribers of
// `socket` read while inject_at_rate injects; `timed` (the daemon, the writer) is timed in
// CPU over it.
struct InjectedRun {
  bool complete = false;  // every subscriber got every record in time
  CpuTime cpu;            // of `timed`
  StreamTotals totals;
  Injection injection;
};
InjectedRun run_injected(const std::string& socket, size_t subscribers, const SimControl& sim,
                         const nlohmann::json& request, uint64_t events, uint64_t rate, pid_t timed,
                         LatencySamples& samples);

// What such a run's result starts with: kind, figure, run, subscribers, events, rate, target.
nlohmann::json injection_result(const char* kind, const Args& a, size_t subscribers,
                                uint64_t events, uint64_t rate, const std::string& target);

// Sleeps until CLOCK_MONOTONIC reaches `t_ns` (an absolute schedule: a late wakeup does not
// delay the following ones).
void sleep_until(int64_t t_ns);

}  // namespace rdma_eventd::bench
