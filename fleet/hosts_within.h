// The fabric rule's measure: of all spans of a fixed length (the fabric window), the one that
// holds the most distinct hosts' signals (link losses, or SM notices). Fed in time order, it
// keeps only the signals of the last window, so memory follows how many came at once, never how
// many came in all.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "incident.h"

namespace rdma_eventd_fleet {

class HostsWithin {
 public:
  explicit HostsWithin(int64_t window_us) : window_us_(window_us) {}

  // One signal of `host` at `time_us`, not before the last one added. `host` must outlive this
  // object (the grouper passes its incident's own copy of the name).
  void add(int64_t time_us, const std::string* host);

  // The window with the most hosts so far (the earliest of equals), and every host counted.
  const Together& best() const { return best_; }

 private:
  struct Signal {
    int64_t time_us;
    const std::string* host;
  };
  int64_t window_us_;
  std::deque<Signal> window_;                                 // the signals of the last window
  std::unordered_map<const std::string*, size_t> in_window_;  // host -> its signals there
  std::unordered_set<const std::string*> every_host_;
  Together best_;
};

}  // namespace rdma_eventd_fleet
