#include "latency_samples.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <ctime>

namespace rdma_eventd::bench {
namespace {

constexpr float kNoSample = -1;

// Nearest rank: the smallest sample with at least p of all samples at or below it.
double percentile_us(const std::vector<float>& sorted, double p) {
  if (sorted.empty()) return 0;
  const auto rank = static_cast<size_t>(std::ceil(p * static_cast<double>(sorted.size())));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

}  // namespace

LatencySamples::LatencySamples(size_t subscribers, uint64_t events)
    : events_(events),
      injected_(new std::atomic<int64_t>[events]),
      samples_(subscribers * events, kNoSample) {
  for (uint64_t k = 0; k < events; ++k)
    injected_[k].store(0, std::memory_order_relaxed);
}

SubscriberSet::RecordHook LatencySamples::hook(const SubscriberSet& subs) {
  return [this, &subs](size_t conn, uint64_t seq, int64_t read_ns) {
    const uint64_t base = subs.hello_seq(conn);
    if (seq <= base || seq - base > events_) return;
    const uint64_t k = seq - base - 1;
    const int64_t t0 = injected_[k].load(std::memory_order_acquire);
    if (t0 == 0 || read_ns < t0) return;
    samples_[conn * events_ + k] = static_cast<float>(read_ns - t0) / 1000.0f;
  };
}

void LatencySamples::summarize(nlohmann::json& r) const {
  std::vector<float> got;
  got.reserve(samples_.size());
  for (float s : samples_)
    if (s >= 0) got.push_back(s);
  std::sort(got.begin(), got.end());
  double sum = 0;
  for (float s : got)
    sum += s;
  r["samples"] = got.size();
  r["samples_expected"] = samples_.size();
  r["p50_us"] = percentile_us(got, 0.50);
  r["p99_us"] = percentile_us(got, 0.99);
  r["p999_us"] = percentile_us(got, 0.999);
  r["max_us"] = got.empty() ? 0.0 : got.back();
  r["mean_us"] = got.empty() ? 0.0 : sum / static_cast<double>(got.size());
}

nlohmann::json port_err_request(const std::string& target) {
  return SimControl::event(target, 10);  // IBV_EVENT_PORT_ERR
}

Injection inject_at_rate(const SimControl& sim, const nlohmann::json& request, uint64_t events,
                         uint64_t rate, LatencySamples& samples) {
  Injection in;
  const int64_t period = 1000000000 / static_cast<int64_t>(rate);
  in.start_ns = mono_ns() + 10000000;
  const std::string line = request.dump() + "\n";
  SimControl::Request req = sim.connect();
  for (uint64_t k = 0; k < events; ++k) {
    const int64_t due = in.start_ns + static_cast<int64_t>(k) * period;
    sleep_until(due);
    const int64_t t0 = mono_ns();
    samples.injected(k, t0);
    req.send_line(line);
    in.late_ns = std::max(in.late_ns, t0 - due);
    req.reply();
    if (k + 1 < events) req = sim.connect();
  }
  in.end_ns = mono_ns();
  return in;
}

void sleep_until(int64_t t_ns) {
  const timespec ts{static_cast<time_t>(t_ns / 1000000000), static_cast<long>(t_ns % 1000000000)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

InjectedRun run_injected(const std::string& socket, size_t subscribers, const SimControl& sim,
                         const nlohmann::json& request, uint64_t events, uint64_t rate, pid_t timed,
                         LatencySamples& samples) {
  SubscriberSet subs(socket, subscribers);
  subs.start(events, samples.hook(subs));
  InjectedRun run;
  const CpuTime cpu_before = cpu_time(timed);
  run.injection = inject_at_rate(sim, request, events, rate, samples);
  run.complete = subs.wait(run.injection.end_ns + 30'000'000'000);
  run.cpu = cpu_time(timed) - cpu_before;
  run.totals = subs.stop_and_total();
  return run;
}

nlohmann::json injection_result(const char* kind, const Args& a, size_t subscribers,
                                uint64_t events, uint64_t rate, const std::string& target) {
  return {{"kind", kind},           {"figure", a.str("figure", "")},
          {"run", a.num("run", 0)}, {"subscribers", subscribers},
          {"events", events},       {"rate", rate},
          {"target", target}};
}

}  // namespace rdma_eventd::bench
