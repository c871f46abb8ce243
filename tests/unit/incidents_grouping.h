// The unit tests' way of driving the incident grouper: faults on a clock of their own (times in
// microseconds from an arbitrary origin), the incidents given out as one line each.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "incident_grouper.h"

namespace rdma_eventd_fleet::grouping_test {

inline constexpr int64_t kSecondUs = 1'000'000;
inline constexpr int64_t kGroupingT0 = 1'764'000'000LL * kSecondUs;

// A record as the journal holds it; each host has its own stream, seqs count up per host.
struct FaultAt {
  int64_t at_us;  // from kGroupingT0
  std::string host;
  std::string event;
  std::string device = "mlx5_0";
  uint32_t port = 1;
  std::string health;
  uint64_t seq = 0;         // 0: the next of the host's stream
  std::string link_change;  // link_quality records
};

// The incidents the grouper gives out for `entries` fed in this order, in the order it gives
// them out, as one line each: "start+end class hosts=a,b records=N: evidence".
class Grouping {
 public:
  explicit Grouping(IncidentOptions options = {})
      : grouper_(options, [this](Incident&& i) { out_.push_back(std::move(i)); }) {}

  bool add(const FaultAt& e) {
    uint64_t seq = e.seq ? e.seq : ++seqs_[e.host];
    const std::string stream = "stream-" + e.host;
    return grouper_.add({.time_us = kGroupingT0 + e.at_us,
                         .host = e.host,
                         .event = e.event,
                         .device = e.device,
                         .port = e.port,
                         .health = e.health,
                         .link_change = e.link_change,
                         .stream = stream,
                         .seq = seq});
  }

  std::vector<std::string> run(const std::vector<FaultAt>& entries) {
    for (const auto& e : entries)
      add(e);
    grouper_.finish();
    return lines();
  }

  std::vector<std::string> lines() const {
    std::vector<std::string> lines;
    for (const auto& i : out_) {
      std::string hosts;
      for (const auto& [name, h] : i.hosts)
        hosts += (hosts.empty() ? "" : ",") + name;
      lines.push_back(std::to_string(i.start_us - kGroupingT0) + "+" +
                      std::to_string(i.end_us - i.start_us) + " " + std::string(class_name(i.cls)) +
                      " hosts=" + hosts + " records=" + std::to_string(i.records) + ": " +
                      i.evidence);
    }
    return lines;
  }

  IncidentGrouper grouper_;
  std::vector<Incident> out_;
  std::map<std::string, uint64_t> seqs_;
};

}  // namespace rdma_eventd_fleet::grouping_test
