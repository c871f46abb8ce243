// The storm sections of docs/benchmarks.md: throughput of the daemon next to ibv_asyncwatch
// and the raw loop on the same storms, and the same storm with slow queries.
#include <cmath>
#include <tuple>

#include "report.h"
#include "util.h"

namespace rdma_eventd::bench {
namespace {

using nlohmann::json;

constexpr double kStormTarget = 300000;         // events/s, 1 device, journal off
constexpr double kAsyncwatchRatioTarget = 1.5;  // × ibv_asyncwatch (16 devices: 16 of them)
constexpr double kRawRatioTarget = 0.5;         // × the raw loop
constexpr double kCpuPerEventTargetUs = 0.7;    // journal off
constexpr double kCpuPerRecordJournalTargetUs = 4;
constexpr double kInstructionsTarget = 2300;  // per event, 1-device storm, journal off
constexpr double kSlowQueryTarget = 200000;   // events/s with 20 us queries

// "none", or how many records were lost or never came, and in how many runs.
std::string losses(const Results& r, const std::string& fig) {
  const double lost = r.total(fig, "lost_records");
  const double missing = r.total(fig, "missing");
  size_t incomplete = 0, with_loss = 0;
  for (const json& j : r.of(fig)) {
    if (!j.value("complete", false)) ++incomplete;
    if (j.value("lost_records", 0) + j.value("missing", 0) > 0) ++with_loss;
  }
  if (r.of(fig).empty()) return "–";
  std::string s;
  if (lost + missing > 0)
    s = "**" + grouped(lost + missing) + " records lost** in " + std::to_string(with_loss) +
        " run" + (with_loss == 1 ? "" : "s");
  if (incomplete > 0)
    s += std::string(s.empty() ? "" : "; ") + "**" + std::to_string(incomplete) +
         " run(s) incomplete**";
  return s.empty() ? "none" : s;
}

bool storm_lossless(const Results& r, const std::string& fig) {
  return losses(r, fig) == "none";
}

std::string per_event(const Results& r, const std::string& fig, const std::string& key,
                      int decimals) {
  std::vector<double> v;
  for (const json& j : r.of(fig)) {
    const double count = j.value("count", 0.0);
    const json* at = &j;
    for (const std::string& part : split(key, '.'))
      at = at->contains(part) ? &(*at)[part] : nullptr;
    if (at && count > 0) v.push_back(at->get<double>() / count);
  }
  const auto s = spread_of(v);
  return s ? fixed(s->median, decimals) : "–";
}

std::string journal_note(const Results& r, const std::string& fig) {
  const auto written = r.spread(fig, "journal.written");
  const auto dropped = r.spread(fig, "journal.dropped");
  const auto records = r.spread(fig, "journal.records");
  if (!written || !records) return "";
  std::string s = "journald got " + grouped(written->median) + " of " + grouped(records->median) +
                  " records (median); " + grouped(dropped ? dropped->median : 0) +
                  " dropped by the daemon's journal queue";
  for (const json& j : r.of(fig))
    if (j.contains("journal") && !j["journal"].value("settled", true)) {
      s += "; the journal had not caught up after the wait";
      break;
    }
  return s;
}

std::string reader_note(const Results& r, const std::string& fig) {
  const auto busy = r.spread(fig, "reader_busy");
  return busy ? "subscriber reader busy " + fixed(busy->median * 100, 0) + "%" : "";
}

void storm_table(std::ostringstream& out, const Results& r, const std::string& topo,
                 const std::string& asyncwatch_text) {
  const std::string p = "storm." + topo + ".";
  out << "| consumer | events/s | spread (min–max) | records lost | daemon CPU per event (µs) "
         "| port queries per event | notes |\n|---|---|---|---|---|---|---|\n";
  const auto row = [&](const std::string& fig, const std::string& name, bool daemon,
                       const std::string& notes) {
    out << "| " << name << " | " << median_only(r.spread(p + fig, "events_per_second"), 0, true)
        << " | " << spread_only(r.spread(p + fig, "events_per_second"), 0, true) << " | "
        << losses(r, p + fig) << " | "
        << (daemon ? fixed(r.spread(p + fig, "cpu_per_event_us")
                               ? r.spread(p + fig, "cpu_per_event_us")->median
                               : 0,
                           2)
                   : "–")
        << " | " << (daemon ? per_event(r, p + fig, "daemon_queries.port_queries", 4) : "–")
        << " | " << notes << " |\n";
  };
  row("daemon_off", "rdma-eventd → 1 subscriber, journal off", true,
      reader_note(r, p + "daemon_off"));
  std::string on_notes = reader_note(r, p + "daemon_on");
  if (const std::string j = journal_note(r, p + "daemon_on"); !j.empty()) on_notes += "; " + j;
  row("daemon_on", "rdma-eventd → 1 subscriber, journal on", true, on_notes);
  if (!r.of(p + "devx_off").empty())
    row("devx_off", "rdma-eventd → 1 subscriber, journal off, **DEVX storm**", true,
        reader_note(r, p + "devx_off"));
  row("asyncwatch", asyncwatch_text, false, "");
  row("raw", "raw loop (`rdma-eventd-bench-raw`)", false, "");
  const auto aw = r.ratio(p + "daemon_off", p + "asyncwatch", "events_per_second");
  const auto raw = r.ratio(p + "daemon_off", p + "raw", "events_per_second");
  out << "| **rdma-eventd (journal off) ÷ ibv_asyncwatch** | " << median_only(aw, 2) << "× | "
      << spread_only(aw, 2) << " | | | | run by run |\n"
      << "| **rdma-eventd (journal off) ÷ raw loop** | " << median_only(raw, 2) << "× | "
      << spread_only(raw, 2) << " | | | | run by run |\n\n";
}

// A ratio target, taken run by run: "≥ 1.5×" and so on.
TargetRow ratio_row(const std::string& figure, const std::optional<Spread>& ratio, double target) {
  return {figure, ratio ? fixed(ratio->median, 2) + "×" : "–", spread_only(ratio, 2),
          "≥ " + fixed(target, 1) + "×",
          ratio ? met_text(ratio->median >= target) : met_text(std::nullopt)};
}

TargetRow at_most_row(const std::string& figure, const std::optional<Spread>& s, int decimals,
                      double target, const std::string& target_text) {
  const bool group = decimals == 0;
  return {figure, s ? (group ? grouped(s->median) : fixed(s->median, decimals)) : "–",
          spread_only(s, decimals, group), "≤ " + target_text,
          s ? met_text(s->median <= target) : met_text(std::nullopt)};
}

// The record path's targets in force (the hand-written "The targets, now" says why each is
// what it is): the storms against ibv_asyncwatch and the raw loop, run by run; the daemon's
// CPU per event with the journal off and on; and the one that does not depend on the machine,
// the instructions the daemon runs per event under callgrind (`--instructions`).
void storm_targets(const Results& r, std::vector<TargetRow>& targets) {
  for (const auto& [topo, devices, asyncwatch] :
       {std::tuple{"one", "1 device", "ibv_asyncwatch"},
        std::tuple{"sixteen", "16 devices", "16 ibv_asyncwatch processes"}}) {
    const std::string p = std::string("storm.") + topo + ".";
    targets.push_back(ratio_row(
        std::string("storm, ") + devices + ", journal off: rdma-eventd ÷ " + asyncwatch,
        r.ratio(p + "daemon_off", p + "asyncwatch", "events_per_second"), kAsyncwatchRatioTarget));
    targets.push_back(
        ratio_row(std::string("storm, ") + devices + ", journal off: rdma-eventd ÷ raw loop",
                  r.ratio(p + "daemon_off", p + "raw", "events_per_second"), kRawRatioTarget));
  }
  targets.push_back(at_most_row("daemon CPU per event, 1-device storm, journal off (µs)",
                                r.spread("storm.one.daemon_off", "cpu_per_event_us"), 2,
                                kCpuPerEventTargetUs, "0.7 µs"));
  targets.push_back(at_most_row("daemon CPU per record, 1-device storm, journal on (µs)",
                                r.spread("storm.one.daemon_on", "cpu_per_event_us"), 2,
                                kCpuPerRecordJournalTargetUs, "4 µs"));
  const auto instructions = r.spread(kInstructionsFigure, "per_event");
  TargetRow row = at_most_row(
      "instructions per event, 1-device storm, journal off (callgrind; the same on any machine)",
      instructions, 0, kInstructionsTarget, grouped(kInstructionsTarget));
  if (!instructions) row.met = "not counted: `--instructions FILE` counts it";
  targets.push_back(row);
}

}  // namespace

void storm_section(std::ostringstream& out, const Results& r, std::vector<TargetRow>& targets) {
  const json one = r.first("storm.one.daemon_off");
  const json sixteen = r.first("storm.sixteen.daemon_off");
  out << "## Storm throughput\n\n"
      << "`rdma-sim storm --count N` queues N raw events at once (no state change; alternately "
         "`port_err` and `port_active`, spread over the storm's ports). The clock starts just "
         "before the storm request goes to the simulator's control socket, and stops when the "
         "consumer has read N events:\n\n"
      << "- **rdma-eventd**: one subscriber on the daemon's socket, reading on a thread of its "
         "own with 1 MiB reads, has read N records (or been told it lost some: a `lost` line). "
      << (one.contains("max_queued_bytes")
              ? "The daemon keeps up to `socket.max_queued_bytes` = " +
                    grouped(one.value("max_queued_bytes", 0.0)) +
                    " bytes unsent for it (the default is 1 MiB): on a 2-core machine the "
                    "reader shares the CPUs with the daemon and the simulator, which are both "
                    "busy for the whole storm, and the scheduler can leave it off the CPU for "
                    "milliseconds at a time; the storm test (`tests/integration`) defines "
                    "keeping up with the same bound. "
              : std::string())
      << "Every record is enriched (one port query per port per batch) and serialized as JSON; "
         "with the journal on, each also goes to a real systemd-journald (private, volatile "
         "storage, no rate limit) through the daemon's journal writer thread. The storms run "
         "with the journal budget off (`journal.budget.enabled: false`, docs/health.md), so that "
         "the journal gets every record; with the default budget it would get each port's "
         "first 200 records and then one summary per port per 10 s. Every benchmark but \"Port "
         "health\" runs with port health off (`health.enabled: false`): its verdicts are records "
         "of their own (a storm of `port_err` makes each port `flapping`); \"Port health\" "
         "measures what it costs.\n"
      << "- **ibv_asyncwatch** (rdma-core's, output to /dev/null; one per device): its contexts "
         "have acked N events, seen in the simulator's shared state every millisecond (so its "
         "time is up to 1 ms long).\n"
      << "- **raw loop** (`bench/raw_consumer.c`): only `ibv_get_async_event` + "
         "`ibv_ack_async_event` until N events (several devices: their fds in one epoll set); "
         "watched like ibv_asyncwatch.\n"
      << "- **DEVX storm**: `rdma-sim devx-storm --count N` on the same devices instead: N "
         "PORT_MODULE_EVENT entries through each mlx5 device's DEVX event channel (72-byte "
         "reads, docs/simulator.md), read by the daemon alone, journal off. The storm's entries "
         "carry no module status the kernel defines, so each becomes a `vendor_event` record "
         "with its raw bytes in hex: the decoder's longest path. Neither ibv_asyncwatch nor the "
         "raw loop reads DEVX events, so this row has no ratio.\n\n"
      << "Each consumer runs alone on the fabric; a run measures all of them one after the "
         "other. The ratios are taken run by run.\n\n";
  // One storm's subsection: what it injected where, and its table.
  const auto storm = [&](const char* heading, const json& first, const char* where,
                         const std::string& key, const std::string& asyncwatch) {
    out << heading;
    if (first.is_null()) {
      out << "Not measured in this run.\n\n";
      return;
    }
    out << grouped(first.value("count", 0.0)) << where;
    storm_table(out, r, key, asyncwatch);
  };
  storm("### 1 device, 1 port\n\n", one,
        " events on `mlx5_0/1` of `sim/topologies/two-adapters.json`; the daemon watches "
        "`mlx5_0` only.\n\n",
        "one", "ibv_asyncwatch -d mlx5_0");
  storm("### 16 devices × 2 ports\n\n", sixteen,
        " events over the 32 ports of `sim/topologies/sixteen-devices.json`.\n\n", "sixteen",
        "16 × ibv_asyncwatch -d mlx5_N");

  const auto eps = r.spread("storm.one.daemon_off", "events_per_second");
  targets.push_back(
      {"storm, 1 device, journal off (events/s)", eps ? grouped(eps->median) : "–",
       spread_only(eps, 0, true), "≥ 300,000",
       eps ? met_text(eps->median >= kStormTarget && storm_lossless(r, "storm.one.daemon_off")) +
                 (storm_lossless(r, "storm.one.daemon_off") ? "" : " (records lost)")
           : met_text(std::nullopt)});
  storm_targets(r, targets);
}

void slow_query_section(std::ostringstream& out, const Results& r,
                        std::vector<TargetRow>& targets) {
  const std::string fig = "storm.slow.daemon_off";
  const json first = r.first(fig);
  out << "## Slow queries\n\n";
  if (first.is_null()) {
    not_measured(out, targets, "storm with 20 µs queries, 16 × 2 ports (events/s)", "≥ 200,000");
    return;
  }
  out << "The 16 devices × 2 ports storm again (" << grouped(first.value("count", 0.0))
      << " events, journal off, one subscriber), on a simulator started with "
         "`--query-latency-us "
      << first.value("query_latency_us", 0)
      << "`: every port, GID and P_Key query takes that much longer, like a firmware command. "
         "The daemon queries each port once per batch of events, so the cost is spread over "
         "the batch; the queries it made are counted by the simulator.\n\n"
      << "| storm | events/s | spread (min–max) | records lost | port queries per event | "
         "daemon CPU per event (µs) |\n|---|---|---|---|---|---|\n";
  const auto row = [&](const std::string& f, const std::string& name) {
    const auto cpu = r.spread(f, "cpu_per_event_us");
    out << "| " << name << " | " << median_only(r.spread(f, "events_per_second"), 0, true) << " | "
        << spread_only(r.spread(f, "events_per_second"), 0, true) << " | " << losses(r, f) << " | "
        << per_event(r, f, "daemon_queries.port_queries", 4) << " | "
        << (cpu ? fixed(cpu->median, 2) : "–") << " |\n";
  };
  row(fig, std::to_string(first.value("query_latency_us", 0)) + " µs per query");
  if (!r.of("storm.sixteen.daemon_off").empty())
    row("storm.sixteen.daemon_off", "0 µs (the storm above)");
  out << "\n";
  const auto eps = r.spread(fig, "events_per_second");
  targets.push_back({"storm with 20 µs queries, 16 × 2 ports (events/s)",
                     eps ? grouped(eps->median) : "–", spread_only(eps, 0, true), "≥ 200,000",
                     eps ? met_text(eps->median >= kSlowQueryTarget && storm_lossless(r, fig)) +
                               (storm_lossless(r, fig) ? "" : " (records lost)")
                         : met_text(std::nullopt)});
}

}  // namespace rdma_eventd::bench
