// rdma-eventctl history --incidents: fault records of many hosts grouped into incidents, each
// given out as soon as no later record can join it. Pure: records in, closed incidents out.
//
// Each fault is about a subject (faults.h: a port's link, a device, the SM's view of a port, a
// host's applications). A subject's faults, each within the gap of the one before, are one
// episode: a port flapping for hours is one episode however long it lasts. Episodes that begin
// each within the gap of the one before are one incident, which lasts until its last episode
// ends. So a fault of an episode already under way never draws another subject's new episode
// in: a port that keeps flapping does not make one incident of everything else that happens
// meanwhile.
//
// Memory holds the episodes under way, the incidents they belong to (their hosts, counts and
// the fabric window's last signals), the entries of the last second (held to be taken in time
// order) and each stream's seqs as at most `runs_per_stream` runs: never the records.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <queue>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "faults.h"
#include "hosts_within.h"
#include "incident.h"
#include "seen_records.h"

namespace rdma_eventd_fleet {

class IncidentGrouper {
 public:
  using Emit = std::function<void(Incident&&)>;
  IncidentGrouper(IncidentOptions options, Emit emit);

  // One entry, in journal order. Entries that are not faults, and copies of a record already
  // added (the same stream and seq), are left out. Returns whether it counted.
  bool add(const FaultInput& in);
  // The end of the input: every open incident is given out, in the order they end.
  void finish();

  size_t open_incidents() const { return incidents_.size(); }
  size_t open_episodes() const { return episodes_.size(); }
  // Faults held back to be taken in time order (those of the last reorder_us).
  size_t waiting() const { return waiting_.size(); }

 private:
  // A fault as it waits to be taken: its own copy of the fields the grouping reads.
  struct Held {
    int64_t time_us;
    uint64_t order;  // arrival, so that equal times keep the journal's order
    std::string host, event, device, health, link_change;
    uint32_t port;
    bool operator>(const Held& o) const {
      return time_us != o.time_us ? time_us > o.time_us : order > o.order;
    }
  };
  struct Open {
    Incident incident;
    size_t episodes = 0;  // under way
    int64_t latest_beginning_us = 0;
    HostsWithin link_losses;
    HostsWithin sm_notices;
  };
  struct Episode {
    uint64_t incident;
    int64_t last_us;
    bool lost_link = false;  // its first port_err counted
    bool noticed = false;    // its first SM notice counted
  };

  void release(int64_t up_to_us);
  void take(const Held& f, int64_t at_us, bool late = false);
  Open& incident_for_new_episode(int64_t at_us);
  void end_episodes_before(int64_t time_us);
  void give_out(std::vector<Incident>& ended);

  IncidentOptions options_;
  Emit emit_;
  SeenRecords seen_;
  std::priority_queue<Held, std::vector<Held>, std::greater<>> waiting_;
  uint64_t arrivals_ = 0;
  int64_t newest_us_ = INT64_MIN;
  int64_t taken_up_to_us_ = INT64_MIN;                 // every fault at or before this was taken
  std::unordered_map<std::string, Episode> episodes_;  // by subject key
  // (last + gap, subject key), in time order and, for episodes ending at the same time, in the
  // order of their keys: never of their addresses, so the incidents come out in one order
  // whatever the allocator did.
  struct EndingOrder {
    bool operator()(const std::pair<int64_t, const std::string*>& a,
                    const std::pair<int64_t, const std::string*>& b) const {
      return a.first != b.first ? a.first < b.first : *a.second < *b.second;
    }
  };
  std::set<std::pair<int64_t, const std::string*>, EndingOrder> endings_;
  std::map<uint64_t, Open> incidents_;  // by number, in order begun
  uint64_t next_incident_ = 0;
  std::optional<uint64_t> joinable_;  // the incident with the latest beginning, while open
};

}  // namespace rdma_eventd_fleet
