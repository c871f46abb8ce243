// Storm throughput: `rdma-sim storm --count N` sent straight to the simulator's control socket
// (the clock starts just before the send), and the time until the consumer has read N events.
//
//   storm      the consumer is the daemon; the clock stops when its subscribers have read
//              (or been told they lost) all N records. With --source devx the storm is
//              `rdma-sim devx-storm` on the DEVX event channels of --targets' devices instead.
//              Also: the daemon's CPU time, the queries it made (the simulator counts them per
//              context), its memory after the storm, and, with the journal on, what reached
//              journald. The port_health records that the health model makes of the storm are
//              counted apart (verdict_records). With --reporters N, N idle reporters of the
//              client library are connected for the storm.
//   consumers  the consumers are other programs already running on the fabric
//              (ibv_asyncwatch, the raw loop); the clock stops when their contexts have acked
//              N events, watched in the simulator's shared state every --poll-us.
#include <poll.h>
#include <signal.h>

#include <ctime>
#include <nlohmann/json.hpp>
#include <thread>

#include "commands.h"
#include "idle_reporters.h"
#include "proc_stats.h"
#include "sim_control.h"
#include "subscribers.h"

namespace rdma_eventd::bench {
namespace {

using nlohmann::json;

json base_result(const Args& a, const char* kind) {
  return {{"kind", kind},
          {"figure", a.str("figure", "")},
          {"run", a.num("run", 0)},
          {"count", a.num("count")},
          {"targets", a.str("targets", "all")}};
}

std::vector<std::string> targets_of(const Args& a) {
  const std::string t = a.str("targets", "all");
  return t == "all" ? std::vector<std::string>{} : split(t, ',');
}

json counters_json(const SimState::Counters& c) {
  json j = {{"contexts", c.contexts}};
  for (size_t k = 0; k < std::size(SimState::kCountedCalls); ++k)
    j[SimState::kCountedCalls[k].name] = c.calls[k];
  return j;
}

// The calls counted between b and a; the contexts, a's.
SimState::Counters minus(const SimState::Counters& a, const SimState::Counters& b) {
  SimState::Counters d = a;
  for (size_t k = 0; k < d.calls.size(); ++k)
    d.calls[k] -= b.calls[k];
  return d;
}

// With the journal on, waits (at most `seconds`) until the journal writer has dealt with every
// record: written, refused or dropped. Returns the status's "journal" object and how long that
// took after the subscribers were done.
json settle_journal(const std::string& socket, double seconds) {
  const int64_t start = mono_ns();
  for (;;) {
    const json st = daemon_status(socket);
    json j = st.value("journal", json::object());
    if (!j.value("enabled", false)) return j;
    const uint64_t handled = j.value("written", uint64_t{0}) + j.value("failed", uint64_t{0}) +
                             j.value("dropped", uint64_t{0});
    const uint64_t records = st["counters"].value("records", uint64_t{0});
    const double waited = static_cast<double>(mono_ns() - start) / 1e9;
    if (handled >= records || waited > seconds) {
      j["records"] = records;
      j["settled"] = handled >= records;
      j["settle_s"] = waited;
      return j;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace

int cmd_storm(int argc, char** argv) {
  const Args a(
      argc, argv,
      {"sim", "socket", "daemon-pid", "count", "targets", "source", "subscribers", "timeout-s",
       "journal-wait-s", "settle-ms", "max-queued-bytes", "figure", "run", "results", "reporters"},
      {});
  const uint64_t count = a.num("count");
  const std::string source = a.str("source", "verbs");
  if (source != "verbs" && source != "devx")
    throw BenchError("--source " + source + ": verbs or devx");
  const auto pid = static_cast<pid_t>(a.num("daemon-pid"));
  const std::string socket = a.str("socket");
  const SimControl sim(a.str("sim"));
  const SimState state(a.str("sim"));

  // Idle reporters (--reporters N), connected for the whole storm: what they cost the fan-out.
  const IdleReporters idle(socket, a.num("reporters", 0));
  SubscriberSet subs(socket, a.num("subscribers", 1));
  subs.start(count);
  SimControl::Request req = sim.connect();
  const auto queries_before = state.of({pid});
  const CpuTime cpu_before = cpu_time(pid);
  const ContextSwitches switches_before = context_switches(pid);
  const int64_t t0 = req.send(source == "devx" ? SimControl::devx_storm(count, targets_of(a))
                                               : SimControl::storm(count, targets_of(a)));
  const json reply = req.reply();
  const bool complete =
      subs.wait(mono_ns() + static_cast<int64_t>(a.num("timeout-s", 600)) * 1000000000);
  const int64_t t1 = complete ? subs.done_ns() : mono_ns();
  const auto queries = minus(state.of({pid}), queries_before);
  const StreamTotals totals = subs.stop_and_total();
  const Memory mem = memory(pid);

  json r = base_result(a, "storm");
  const double seconds = static_cast<double>(t1 - t0) / 1e9;
  r["source"] = source;
  r["subscribers"] = subs.size();
  r["reporters"] = idle.describe();
  if (const uint64_t q = a.num("max-queued-bytes", 0); q > 0) r["max_queued_bytes"] = q;
  r["complete"] = complete;
  r["seconds"] = seconds;
  r["events_per_second"] = static_cast<double>(count) / seconds;
  r["injection_seconds"] = reply.value("seconds", 0.0);
  r["records"] = totals.records;
  r["verdict_records"] = totals.verdict_records;
  r["lost_records"] = totals.lost_records;
  r["lost_lines"] = totals.lost_lines;
  r["missing"] = totals.missing;
  r["unexpected"] = totals.unexpected;
  r["other_lines"] = totals.other_lines;
  r["connections_closed"] = totals.connections_closed;
  r["bytes"] = totals.bytes;
  r["reader_cpu_s"] = totals.reader_cpu_s;
  r["reader_busy"] = totals.reader_wall_s > 0 ? totals.reader_cpu_s / totals.reader_wall_s : 0;
  r["daemon_queries"] = counters_json(queries);
  r["query_latency_us"] = state.query_latency_us();
  r["rss_kib"] = mem.rss_kib;
  r["hwm_kib"] = mem.hwm_kib;
  r["journal"] = settle_journal(socket, static_cast<double>(a.num("journal-wait-s", 120)));
  // Taken once the journal writer has sent what it had queued: with the journal on, its last
  // entries go out after the subscribers have every record.
  add_cpu(r, cpu_time(pid) - cpu_before, count);
  const ContextSwitches switches = context_switches(pid);
  r["context_switches"] = {{"voluntary", switches.voluntary - switches_before.voluntary},
                           {"nonvoluntary", switches.nonvoluntary - switches_before.nonvoluntary}};
  if (const uint64_t settle_ms = a.num("settle-ms", 0); settle_ms > 0) {
    // The daemon a while after the storm, its subscribers still connected: what it keeps once
    // it has given back what the storm needed for a moment (docs/architecture.md).
    const timespec ts{static_cast<time_t>(settle_ms / 1000),
                      static_cast<long>(settle_ms % 1000) * 1000000};
    nanosleep(&ts, nullptr);
    r["settle_ms"] = settle_ms;
    r["rss_settled_kib"] = memory(pid).rss_kib;
  }
  emit_result(a.str("results", ""), r.dump());
  return complete ? 0 : 1;
}

int cmd_consumers(int argc, char** argv) {
  const Args a(argc, argv,
               {"sim", "pids", "contexts", "count", "targets", "poll-us", "timeout-s", "figure",
                "run", "results", "consumer"},
               {});
  const uint64_t count = a.num("count");
  const uint64_t poll_us = a.num("poll-us", 1000);
  std::vector<pid_t> pids;
  for (const std::string& p : split(a.str("pids"), ','))
    pids.push_back(static_cast<pid_t>(std::stoi(p)));
  const SimControl sim(a.str("sim"));
  const SimState state(a.str("sim"));

  // The consumers are ready once they have opened all their devices (--contexts in all, one
  // per process by default): a context exists as soon as its device is open.
  const size_t contexts = a.num("contexts", pids.size());
  std::vector<int> slots;
  const int64_t ready_deadline = mono_ns() + 20'000'000'000;
  while ((slots = state.slots(pids)).size() < contexts) {
    for (pid_t p : pids)
      if (::kill(p, 0) != 0) throw BenchError("consumer " + std::to_string(p) + " is gone");
    if (mono_ns() > ready_deadline)
      throw BenchError("the consumers did not open their " + std::to_string(contexts) +
                       " devices within 20 s");
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const SimState::Counters before = state.sum(slots);

  SimControl::Request req = sim.connect();
  const int64_t t0 = req.send(SimControl::storm(count, targets_of(a)));
  const int64_t deadline = t0 + static_cast<int64_t>(a.num("timeout-s", 600)) * 1000000000;
  bool replied = false, complete = false;
  json reply;
  int64_t t1 = 0;
  SimState::Counters now = before;
  // Each round waits one interval, or less when the storm's reply comes, then looks.
  const timespec interval{static_cast<time_t>(poll_us / 1000000),
                          static_cast<long>(poll_us % 1000000) * 1000};
  while (!complete || !replied) {
    pollfd p{replied ? -1 : req.fd(), POLLIN, 0};
    if (::ppoll(&p, 1, complete ? nullptr : &interval, nullptr) > 0 && !replied) {
      reply = req.reply();
      replied = true;
    }
    if (complete) continue;
    now = state.sum(slots);
    if (now.acked() - before.acked() >= count) {
      t1 = mono_ns();
      complete = true;
    } else if (mono_ns() > deadline) {
      t1 = mono_ns();
      if (!replied) reply = req.reply();
      break;
    }
  }
  const SimState::Counters got = minus(now, before);

  json r = base_result(a, "consumers");
  const double seconds = static_cast<double>(t1 - t0) / 1e9;
  r["consumer"] = a.str("consumer", "");
  r["processes"] = pids.size();
  r["complete"] = complete;
  r["seconds"] = seconds;
  r["events_per_second"] = static_cast<double>(count) / seconds;
  r["injection_seconds"] = reply.value("seconds", 0.0);
  r["poll_us"] = poll_us;
  r["consumer_counters"] = counters_json(got);
  emit_result(a.str("results", ""), r.dump());
  return complete ? 0 : 1;
}

}  // namespace rdma_eventd::bench
