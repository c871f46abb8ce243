// Counts of the records the daemon published, by device, port and event, and each port's down
// transitions (its state left active): what Prometheus' counters are made of (docs/metrics.md).
// Kept by the daemon, so a client that restarts (rdma-eventctl metrics) reads the same totals.
// Every kind of the schema is counted by its number, with no list of kinds here.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include "rdma_eventd/record.h"
#include "schema/status_reply.h"

namespace rdma_eventd::daemon {

class EventCounter {
 public:
  // Ports (with the device-wide entries) it keeps counts for; a record about another one is
  // counted as untracked. Bounds the memory a stream of renamed or hot-plugged devices takes.
  static constexpr size_t kMaxPorts = 4096;

  explicit EventCounter(size_t max_ports = kMaxPorts) : max_ports_(max_ports) {}

  void count(const Record& record);
  // The status reply's "event_counts" block.
  StatusReply::EventCounts counts() const;

 private:
  struct Counts {
    std::array<uint64_t, kEventKindCount> events{};
    uint64_t down_transitions = 0;
  };
  // (device, port), looked up with the record's device name as it is: no copy per record.
  struct KeyLess {
    using is_transparent = void;
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return std::tie(a.first, a.second) < std::tie(b.first, b.second);
    }
  };
  using Ports = std::map<std::pair<std::string, uint32_t>, Counts, KeyLess>;  // port 0: the device
  // An entry found before, kept by port number: a batch is one device's records, mostly about a
  // few ports, so most records find their entry here with one name comparison instead of a walk
  // of the map (whose entries never move and are never erased).
  struct Recent {
    Ports::value_type* entry = nullptr;
  };
  // The entry of (device, port), added when new; nullptr when it is new and there are
  // max_ports_ already.
  Ports::value_type* find(std::string_view device, uint32_t port);

  size_t max_ports_;
  Ports ports_;
  std::array<Recent, 4> recent_{};
  uint64_t untracked_ = 0;
};

}  // namespace rdma_eventd::daemon
