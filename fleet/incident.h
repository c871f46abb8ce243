// An incident of the fleet: faults of any hosts that began together, its class and the evidence
// for it. Pure data, and the classification (classify.cc).
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <string_view>

namespace rdma_eventd_fleet {

enum class IncidentClass { kFabric, kHost, kPort, kSm, kApplication };
std::string_view class_name(IncidentClass c);

// How the incidents' text and page show a time and a span: "2026-11-28T10:15:30.123Z" (the
// millisecond is enough for a person) and "12.3 s".
std::string incident_time(int64_t us);
std::string incident_duration(int64_t us);

// Times come from the journal, any value a host sent: sums and differences that cannot overflow.
inline int64_t time_plus(int64_t t, int64_t d) {
  return t > std::numeric_limits<int64_t>::max() - d ? std::numeric_limits<int64_t>::max() : t + d;
}
inline int64_t time_minus(int64_t t, int64_t d) {
  return t < std::numeric_limits<int64_t>::min() + d ? std::numeric_limits<int64_t>::min() : t - d;
}
// From `from` to `to` (to >= from), at most the largest int64_t.
inline int64_t time_span(int64_t from, int64_t to) {
  const uint64_t span = static_cast<uint64_t>(to) - static_cast<uint64_t>(from);
  return span > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
             ? std::numeric_limits<int64_t>::max()
             : static_cast<int64_t>(span);
}

struct IncidentOptions {
  // A subject's faults each within this of the one before are one episode (a port flapping for
  // hours is one); episodes that begin each within this of the one before are one incident.
  int64_t gap_us = 5'000'000;
  // A fabric incident: this many hosts or more losing links, or seeing SM notices, within
  // fabric_window_us of each other (docs/fleet.md says why these defaults).
  size_t fabric_hosts = 3;
  int64_t fabric_window_us = 2'000'000;
  // Entries of a merged journal come in time order only within this much (a host's clock that
  // stepped back): entries are held this long and taken in time order.
  int64_t reorder_us = 1'000'000;
  // Each stream's seqs are kept as at most this many runs (seen_records.h), so that memory
  // does not grow with the records: only the faults are read, so their seqs have gaps (the
  // other records) and each is a run of its own. Past the limit the oldest runs merge: only a
  // fault that arrives after this many newer faults of its own stream could be taken for a
  // copy, and entries come in time order, so a stream's seqs come in order but for a clock
  // that stepped back. 16: a stream's state is a few hundred bytes, 10,000 hosts' a few MiB.
  size_t runs_per_stream = 16;
};

// One host's part in an incident.
struct IncidentHost {
  std::set<std::string> devices;
  std::set<std::string> ports;             // "mlx5_0/1": ports whose link or verdict had a fault
  std::set<std::string> sm_ports;          // ports with SM, LID or re-registration notices
  std::map<std::string, uint64_t> events;  // event name -> count; port_health by verdict
                                           // ("port_health flapping")
  int64_t first_us = 0;
  int64_t last_us = 0;
};

// Hosts whose link losses (or SM notices) came close together: of every span of
// fabric_window_us, the one that held the most hosts.
struct Together {
  size_t hosts = 0;         // the most hosts within one window
  size_t signals = 0;       // the link losses (SM notices) of that window: ports
  int64_t spread_us = 0;    // from the first to the last of them
  size_t hosts_in_all = 0;  // hosts with one anywhere in the incident
};

struct Incident {
  int64_t start_us = 0;
  int64_t end_us = 0;
  IncidentClass cls = IncidentClass::kPort;
  std::string evidence;  // why this class, for a person: "3 hosts, 3 ports down within 0.4 s; ..."
  std::map<std::string, IncidentHost> hosts;  // by name, as the journal has it (any bytes)
  std::map<std::string, uint64_t> events;     // over all hosts
  uint64_t records = 0;
  // Records that came more than reorder_us out of time order (a host's clock that stepped
  // back): grouped as if they came when they were read; their own times are still shown.
  uint64_t late_records = 0;
  // Port downs (port_err): their count and the first and last one's time.
  uint64_t downs = 0;
  int64_t first_down_us = 0;
  int64_t last_down_us = 0;
  // The beginnings of links lost (a port's episode's first port_err) and of SM notices (a
  // port's first notice), by host, measured against the fabric window.
  Together link_losses;
  Together sm_notices;
};

// Sets `cls` and `evidence` from the rest (done by the grouper when an incident closes).
void classify(Incident& incident, const IncidentOptions& options);

}  // namespace rdma_eventd_fleet
