// The floor under fan-out (floor.cc) next to the daemon's latency and CPU per event: what any
// daemon that writes each event to each subscriber's socket needs on this machine.
#include <tuple>

#include "report.h"

namespace rdma_eventd::bench {
namespace {

using nlohmann::json;

const char* const kRoles[] = {"1", "100", "1000"};
constexpr double kBareWriterTarget = 1.2;  // the daemon ÷ the bare writer, CPU and p99

std::string floor_figure(const std::string& n) {
  return "floor." + n;
}

// The fan-out targets in force: at each subscriber count, the daemon's CPU per event and its
// p99 at 1,000 events/s within 1.2× the bare writer's, run by run. The bare writer is what any
// daemon needs that writes each event to each subscriber's socket, so these hold on any
// machine where the floor itself can be measured.
void bare_writer_targets(const Results& r, std::vector<TargetRow>& targets) {
  for (const auto& [key, what, decimals] :
       {std::tuple{"cpu_per_event_us", "CPU per event", 2}, std::tuple{"p99_us", "p99 latency", 2}})
    for (const char* n : kRoles) {
      const std::string lat = "latency." + std::string(n);
      const auto ratio = r.ratio(lat, floor_figure(n), key);
      const json first = r.first(lat);
      const std::string subscribers =
          first.is_null() ? n : grouped(first.value("subscribers", 0.0));
      targets.push_back(
          {std::string(what) + " at 1,000 events/s, " + subscribers +
               " subscriber(s): rdma-eventd ÷ the bare writer",
           ratio ? fixed(ratio->median, decimals) + "×" : "–", spread_only(ratio, decimals),
           "≤ " + fixed(kBareWriterTarget, 1) + "×",
           ratio ? met_text(ratio->median <= kBareWriterTarget) : met_text(std::nullopt)});
    }
}

// The bare writer at 1 subscriber with the daemon's parts added (floor.cc, --steps), next to
// the bare writer and the daemon: how much of the daemon's CPU per event at 1,000 events/s any
// daemon built on these parts needs.
void parts_paragraph(std::ostringstream& out, const Results& r) {
  const std::string parts = floor_figure("1") + ".parts";
  if (r.of(parts).empty()) return;
  out << "**The daemon's parts on the bare writer.** At 1 subscriber the bare writer runs "
         "once more with three parts of the daemon's work added (`rdma-eventd-bench floor "
         "--steps libevent,query,record`): libevent's loop in place of its own `epoll_wait`, "
         "`ibv_query_port` for each event's port, as enrichment does, and each line written by "
         "the daemon's own record writer (`append_json`: the common keys, the port block and "
         "the changes, "
      << grouped(r.first(parts).value("record_bytes_sent", 0.0))
      << " bytes a line in this run). Nothing else of the daemon: no device view, no counts, no "
         "replay ring, no queue, one device watched. The ratios are to the bare writer, run by "
         "run.\n\n"
         "| 1 subscriber, 1,000 events/s | CPU per event (µs) | × bare writer |\n"
         "|---|---|---|\n";
  const auto row = [&](const std::string& name, const std::string& fig) {
    const auto ratio = r.ratio(fig, floor_figure("1"), "cpu_per_event_us");
    out << "| " << name << " | " << with_spread(r.spread(fig, "cpu_per_event_us"), 2) << " | "
        << (ratio ? with_spread(ratio, 2) : "–") << " |\n";
  };
  row("bare writer", floor_figure("1"));
  row("bare writer with libevent, the port query and the record", parts);
  row("rdma-eventd", "latency.1");
  out << "\n";
}

}  // namespace

void floor_section(std::ostringstream& out, const Results& r, std::vector<TargetRow>& targets) {
  out << "## The floor under fan-out\n\n";
  const json first = r.first(floor_figure("1"));
  bare_writer_targets(r, targets);
  if (first.is_null()) {
    out << "Not measured in this run.\n\n";
    return;
  }
  out << "The same events, injected the same way, and the same readers as the latency runs, "
         "with a bare writer in the daemon's place (`rdma-eventd-bench floor`): a process that "
         "opens `mlx5_0` with the simulator's libibverbs, as the daemon does, watches its "
         "async fd with epoll, and for each event it reads and acks sends one line of "
      << grouped(first.value("record_bytes", 0.0))
      << " bytes (as long as the daemon's records) to every subscriber, and does nothing "
         "else: no query, no JSON, no queue. Events that are ready together go out together, "
         "one `send` per subscriber per batch, as the daemon writes; like the daemon, it knows "
         "that none is left when a read finds the fd empty. It is the least that any daemon "
         "needs that reads each event from the device and writes it to each subscriber's "
         "socket, on this machine. Its CPU time per event and the latency its subscribers see "
         "are measured exactly as the daemon's; the daemon's columns repeat the latency and "
         "fan-out sections' figures.\n\n"
      << "| subscribers | bare writer CPU per event (µs) | × 1 subscriber | daemon CPU per event "
         "(µs) | bare writer p50 (µs) | bare writer p99 (µs) | bare writer p99.9 (µs) | daemon "
         "p99 (µs) | reader busy |\n"
         "|---|---|---|---|---|---|---|---|---|\n";
  for (const char* n : kRoles) {
    const std::string fig = floor_figure(n), lat = "latency." + std::string(n);
    if (r.of(fig).empty()) continue;
    const auto ratio = r.ratio(fig, floor_figure("1"), "cpu_per_event_us");
    std::vector<double> busy = r.values(fig, "reader_busy");
    for (double& b : busy)
      b *= 100;
    const double missing = r.total(fig, "missing");
    out << "| " << grouped(r.first(fig).value("subscribers", 0.0))
        << (missing > 0 ? " (" + grouped(missing) + " lines missing)" : "") << " | "
        << with_spread(r.spread(fig, "cpu_per_event_us"), 2) << " | "
        << (ratio ? with_spread(ratio, 2) : "–") << " | "
        << median_only(r.spread(lat, "cpu_per_event_us"), 2) << " | "
        << with_spread(r.spread(fig, "p50_us"), 1) << " | "
        << with_spread(r.spread(fig, "p99_us"), 1) << " | "
        << with_spread(r.spread(fig, "p999_us"), 1) << " | "
        << median_only(r.spread(lat, "p99_us"), 1) << " | "
        << (spread_of(busy) ? fixed(spread_of(busy)->median, 0) + "%" : "–") << " |\n";
  }
  out << "\n";

  parts_paragraph(out, r);

  const auto subscribers = [&](const std::string& role) {
    return grouped(r.first(floor_figure(role)).value("subscribers", 0.0));
  };
  const auto p99 = r.spread(floor_figure("100"), "p99_us");
  const auto ratio = r.ratio(floor_figure("1000"), floor_figure("1"), "cpu_per_event_us");
  if (p99)
    out << "At " << subscribers("100") << " subscribers the bare writer's p99 is **"
        << fixed(p99->median, 1) << " µs**. ";
  if (ratio)
    out << "Its CPU per event at " << subscribers("1000") << " subscribers is **"
        << fixed(ratio->median, 2) << "×** that at " << subscribers("1") << ". ";
  out << "The daemon's fan-out targets are its CPU per event and its p99 within "
      << fixed(kBareWriterTarget, 1) << "× the bare writer's at each count (\"Targets\"). ";
  out << "A target below the floor cannot be met by writing every event to every "
         "subscriber's socket as it happens; meeting it would need fewer writes than "
         "subscribers per event (holding events back to batch them, which costs the latency "
         "it is meant to save) or readers that share one buffer instead of a socket each.\n\n";
}

}  // namespace rdma_eventd::bench
