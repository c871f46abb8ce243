// The port health section of docs/benchmarks.md: what the health model costs per event, from
// the 1-device storm run with port health off and on, interleaved (off, on, off, ..., off).
#include <algorithm>

#include "report.h"

namespace rdma_eventd::bench {
namespace {

using nlohmann::json;

constexpr double kHealthCostTarget = 1.05;  // CPU per event, health on ÷ off
const char* const kOff = "health.off";
const char* const kOn = "health.on";

// `key` of `figure`'s run `run`, if it was measured.
std::optional<double> value_of(const Results& r, const std::string& figure, int run,
                               const std::string& key) {
  for (const json& j : r.of(figure))
    if (j.value("run", 0) == run && j.contains(key) && j[key].is_number())
      return j[key].get<double>();
  return std::nullopt;
}

// Each run with health on against the two runs with it off around it (runs r and r + 1): their
// mean cancels load that rises or falls steadily over the three.
std::optional<Spread> on_over_off(const Results& r, const std::string& key) {
  std::vector<double> v;
  for (const json& on : r.of(kOn)) {
    const int run = on.value("run", 0);
    const auto before = value_of(r, kOff, run, key), after = value_of(r, kOff, run + 1, key);
    if (!before || !after || *before + *after <= 0 || !on.contains(key)) continue;
    v.push_back(on[key].get<double>() / ((*before + *after) / 2));
  }
  return spread_of(v);
}

// Each run with health off against the one before it: the noise between like runs.
std::optional<Spread> off_over_off(const Results& r, const std::string& key) {
  std::vector<double> v;
  for (const json& later : r.of(kOff)) {
    const auto earlier = value_of(r, kOff, later.value("run", 0) - 1, key);
    if (earlier && *earlier > 0 && later.contains(key))
      v.push_back(later[key].get<double>() / *earlier);
  }
  return spread_of(v);
}

// Whether every run of `figure` read all its events, with nothing lost or out of order.
bool lossless(const Results& r, const std::string& figure) {
  return std::all_of(r.of(figure).begin(), r.of(figure).end(), [](const json& j) {
    return j.value("complete", false) && j.value("lost_records", 0) == 0 &&
           j.value("missing", 0) == 0 && j.value("unexpected", 0) == 0;
  });
}

std::string verdicts_of_each_run(const Results& r, const std::string& figure) {
  std::string s;
  for (double v : r.values(figure, "verdict_records"))
    s += (s.empty() ? "" : ", ") + grouped(v);
  return s.empty() ? "–" : s;
}

void row(std::ostringstream& out, const Results& r, const std::string& figure,
         const std::string& name) {
  const auto eps = r.spread(figure, "events_per_second");
  const auto cpu = r.spread(figure, "cpu_per_event_us");
  out << "| " << name << " | " << r.of(figure).size() << " | " << median_only(eps, 0, true) << " ("
      << spread_only(eps, 0, true) << ") | " << with_spread(cpu, 3) << " | "
      << (lossless(r, figure) ? "none" : "**some, or incomplete**") << " | "
      << verdicts_of_each_run(r, figure) << " |\n";
}

}  // namespace

void health_section(std::ostringstream& out, const Results& r, std::vector<TargetRow>& targets) {
  const json first = r.first(kOff);
  const std::string figure = "port health on ÷ off, CPU per event (1 device, journal off)";
  out << "## Port health\n\n";
  if (first.is_null() || r.of(kOn).empty()) {
    not_measured(out, targets, figure, "≤ 1.05× (within noise)");
    return;
  }
  const auto cost = on_over_off(r, "cpu_per_event_us");
  const auto noise = off_over_off(r, "cpu_per_event_us");
  const auto speed = on_over_off(r, "events_per_second");
  out << "What the port health model (docs/health.md) costs per event. The 1-device storm of "
         "\"Storm throughput\" ("
      << grouped(first.value("count", 0.0))
      << " raw events on `mlx5_0/1`, alternately `port_err` and `port_active`; journal off, one "
         "subscriber), with the daemon's shipped health settings (`health.enabled: true`, a "
         "fresh state file) and with `health.enabled: false`, nothing else different. Every "
         "`port_err` and `port_active` record goes through the model (each `port_err` counts as "
         "a down, even though the link was never down): after `flap_downs` (3) of them the port "
         "is `flapping` (one `port_health` record: `healthy` → `flapping`, `flaps_in_window`), "
         "and every later record still updates its window of downs and is "
         "judged, making no new verdict. The model's verdicts are `port_health` records with "
         "seqs of their own: the subscriber counts them apart from the storm's records (the "
         "storm's clock, its events/s and its loss check count the injected events only). The "
         "runs alternate, off, on, off, ..., off, so that each run with health on is compared "
         "with the mean of the runs with it off just before and just after it; \"off ÷ off\" is "
         "each run with health off against the one before it, the noise between like runs. "
         "CPU per event is the daemon's CPU time over the storm (every thread; the state file "
         "written at most once a second is in it) divided by the storm's events.\n\n"
      << "| port health | runs | events/s (spread) | daemon CPU per event (µs) | records lost | "
         "`port_health` records, each run |\n|---|---|---|---|---|---|\n";
  row(out, r, kOff, "off");
  row(out, r, kOn, "on");
  out << "\n| ratio, run by run | median | spread (min–max) |\n|---|---|---|\n"
      << "| CPU per event, on ÷ off (the off runs around it) | " << median_only(cost, 3) << "× | "
      << spread_only(cost, 3) << " |\n"
      << "| CPU per event, off ÷ off (the run before) | " << median_only(noise, 3) << "× | "
      << spread_only(noise, 3) << " |\n"
      << "| events/s, on ÷ off (the off runs around it) | " << median_only(speed, 3) << "× | "
      << spread_only(speed, 3) << " |\n\n";

  // Met only when the storm drove the model: every run with health on made a verdict, and no
  // run with it off did.
  const auto on_verdicts = r.values(kOn, "verdict_records");
  const bool driven = !on_verdicts.empty() &&
                      *std::min_element(on_verdicts.begin(), on_verdicts.end()) > 0 &&
                      r.total(kOff, "verdict_records") == 0;
  const bool complete = lossless(r, kOn) && lossless(r, kOff);
  std::string met = cost ? met_text(cost->median <= kHealthCostTarget) : met_text(std::nullopt);
  if (cost && !driven) met = "**no** (the storm made no verdict: the model was not driven)";
  if (cost && !complete) met = "**no** (records lost or runs incomplete)";
  targets.push_back(
      {figure, cost ? fixed(cost->median, 3) + "×" : "–", spread_only(cost, 3),
       "≤ 1.05× (within noise; off ÷ off: " +
           (noise ? fixed(noise->min, 3) + "–" + fixed(noise->max, 3) + "×" : std::string("–")) +
           ")",
       met});
}

}  // namespace rdma_eventd::bench
