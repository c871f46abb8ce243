// Reporters that never report: what the ranks of a job hold open between failures, opened
// through the client library (rdmaev_reporter_open) as an application opens them. They connect
// to the daemon's report socket, or, where it has none, to its events socket, as every reporter
// did before the report socket (docs/protocol.md, "Versions"). docs/benchmarks.md, "Idle
// reporters", measures what they cost the daemon's fan-out either way.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

struct rdmaev_reporter;

namespace rdma_eventd::bench {

class IdleReporters {
 public:
  // Opens `count` reporters of `socket` (the events socket's path) and waits until the daemon
  // has accepted every one (its status counts them), so that a measurement that follows has
  // them all. Throws BenchError when one cannot be opened, or the daemon does not take them.
  IdleReporters(const std::string& socket, size_t count);
  ~IdleReporters();
  IdleReporters(const IdleReporters&) = delete;
  IdleReporters& operator=(const IdleReporters&) = delete;

  // For the result: how many, and where the daemon counts them ("report": on its report
  // socket; "events": as subscribers; "none" without any).
  nlohmann::json describe() const;

 private:
  std::vector<rdmaev_reporter*> reporters_;
  std::string counted_as_ = "none";
};

}  // namespace rdma_eventd::bench
