// What rdma-eventd-slurm does to the node (docs/scheduler.md): from the daemon's verdicts (its
// health reply) and the node's Slurm state, one action. Pure, so that the follower, the
// one-shot mode and the tests apply exactly the same rules.
//
// Ownership: a drain is ours when the node is drained (not down) and its reason starts with
// our prefix. We drain a node only when nobody else holds it (no drain, no down, no
// maintenance reservation, no reason of someone else's), update only our own reason, and resume
// only our own drain, once every port in service is healthy.
#pragma once

#include <string>
#include <vector>

#include "config.h"
#include "node_state.h"
#include "schema/health_reply.h"

namespace rdma_eventd_slurm {

inline constexpr size_t kMaxReasonBytes = 200;

// What the verdicts ask of the node.
struct Wanted {
  enum Kind {
    kDrain,    // a port in service has a verdict in drain_on: drained with `reason`
    kHealthy,  // every port in service is healthy: not drained by us
    kHold,     // a port is not healthy but its verdict is not in drain_on: leave as it is
    kUnknown,  // the daemon cannot be reached or judges nothing: leave as it is
  };
  Kind kind = kUnknown;
  std::string reason;
  friend bool operator==(const Wanted&, const Wanted&) = default;
};

// `health` is null when the daemon cannot be reached.
Wanted wanted_state(const rdma_eventd::HealthReply* health, const Config& config);

// The drain reason for the ports given (device/port and verdict), worst first, bounded to
// kMaxReasonBytes: "rdma-eventd: mlx5_1/1 fatal, mlx5_0/1 flapping (3 downs)", then "+N more".
std::string drain_reason(const std::string& prefix,
                         const std::vector<rdma_eventd::HealthReply::Port>& bad);

struct Action {
  enum Kind {
    kNone,
    kDrain,         // scontrol update nodename=N state=drain reason=R
    kUpdateReason,  // the same command: our drain, another set of ports
    kResume,        // scontrol update nodename=N state=resume
  };
  Kind kind = kNone;
  std::string reason;  // kDrain, kUpdateReason
  std::string why;     // for the log: why this action, or why none
  friend bool operator==(const Action&, const Action&) = default;
};

bool owned_by_us(const NodeState& node, const std::string& prefix);
Action decide(const Wanted& wanted, const NodeState& node, const std::string& prefix);

// The scontrol command line of an action (kNone: empty).
std::vector<std::string> scontrol_args(const Action& action, const std::string& node);

}  // namespace rdma_eventd_slurm
