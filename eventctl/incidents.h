// rdma-eventctl history --incidents: fault records of many hosts grouped into incidents by time,
// each with a class (fabric, host, port, application) and the evidence for it. Pure: records
// in, closed incidents out as soon as no later record can join them, so that memory holds the
// open incidents and their hosts, never the records.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "history_repeats.h"

namespace rdma_eventctl {

// What the grouper needs of one journal entry (its RDMA_* fields, _HOSTNAME and its time).
struct FaultInput {
  int64_t time_us = 0;     // __REALTIME_TIMESTAMP
  std::string_view host;   // _HOSTNAME
  std::string_view event;  // RDMA_EVENT
  std::string_view device;
  uint32_t port = 0;
  std::string_view health;  // RDMA_HEALTH (port_health)
  std::string_view stream;
  uint64_t seq = 0;  // 0: none (never a copy)
};

// Whether a record is a fault: port_err, port_health with a verdict other than healthy,
// device_fatal, device_removed, sm_change, lid_change, client_reregister, module_error,
// module_disabled, app_report.
bool is_fault(std::string_view event, std::string_view health);

// The journal's RDMA_EVENT values a fault can have (for a journal match).
const std::vector<std::string_view>& fault_events();

enum class IncidentClass { kFabric, kHost, kPort, kApplication };
std::string_view class_name(IncidentClass c);

// How the incidents' text and page show a time and a span: "2026-11-28T10:15:30.123Z" (the
// millisecond is enough for a person) and "12.3 s".
std::string incident_time(int64_t us);
std::string incident_duration(int64_t us);

struct IncidentOptions {
  int64_t gap_us = 5'000'000;  // an incident ends when no fault came for this long
  size_t fabric_hosts = 3;     // hosts that lose links or see SM/LID changes: a fabric incident
  // Entries of a merged journal come in time order only within this much (different hosts'
  // clocks and files): an incident is given out once the input is this far past its gap.
  int64_t reorder_us = 1'000'000;
  // Each stream's seqs are kept as at most this many runs (history_repeats.h), so that memory
  // does not grow with the records: only the faults are read, so their seqs have gaps (the
  // other records) and each is a run of its own. Past the limit the oldest runs merge: only a
  // fault that arrives after this many newer faults of its own stream could be taken for a copy.
  size_t runs_per_stream = 64;
};

// One host's part in an incident.
struct IncidentHost {
  std::set<std::string> devices;
  std::set<std::string> ports;  // "mlx5_0/1": ports with a fault (not device-wide records)
  std::map<std::string, uint64_t> events;  // event name -> count; port_health by verdict
                                           // ("port_health:flapping")
  int64_t first_us = 0;
  int64_t last_us = 0;
};

struct Incident {
  int64_t start_us = 0;
  int64_t end_us = 0;
  IncidentClass cls = IncidentClass::kPort;
  std::string evidence;  // why this class, for a person: "3 hosts, 3 ports down within 0.4 s; ..."
  std::map<std::string, IncidentHost> hosts;
  std::map<std::string, uint64_t> events;  // over all hosts
  uint64_t records = 0;
  // Port downs (port_err): their count and the first and last one's time.
  uint64_t downs = 0;
  int64_t first_down_us = 0;
  int64_t last_down_us = 0;
};

class IncidentGrouper {
 public:
  using Emit = std::function<void(Incident&&)>;
  IncidentGrouper(IncidentOptions options, Emit emit);

  // One entry, in journal order. Entries that are not faults, and copies of a record already
  // added (the same stream and seq), are left out. Returns whether it counted.
  bool add(const FaultInput& in);
  // The end of the input: every open incident is given out, oldest first.
  void finish();

  size_t open_incidents() const { return open_.size(); }

 private:
  void close_before(int64_t watermark_us);
  void give_out(Incident& incident);

  IncidentOptions options_;
  Emit emit_;
  SeenRecords seen_;
  std::vector<Incident> open_;  // by start; few: those within gap + reorder of the newest entry
  int64_t newest_us_ = INT64_MIN;
};

// Sets `cls` and `evidence` from the rest (done by the grouper when an incident closes).
void classify(Incident& incident, size_t fabric_hosts);

}  // namespace rdma_eventctl
