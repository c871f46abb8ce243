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
#include <string_view>
#include <vector>

#include "config.h"
#include "drain_record.h"
#include "node_state.h"
#include "schema/health_reply.h"

namespace rdma_eventd_slurm {

inline constexpr size_t kMaxReasonBytes = 200;

// What the verdicts ask of the node.
struct Wanted {
  enum Kind {
    kDrain,          // a port in service has a verdict (or degraded, a reason) in drain_on: drained
                     // with `reason`
    kHealthy,        // proven healthy: not drained by us
    kHold,           // a port is not healthy but neither its verdict nor its reason drains: leave
                     // as it is
    kNothingDrains,  // as kHold, but every port our drain names is healthy again: our drain
                     // is resumed (a port kept in service on purpose never holds it)
    kUnknown,        // the daemon cannot be reached or has nothing to judge: leave as it is
  };
  Kind kind = kUnknown;
  std::string reason;
  friend bool operator==(const Wanted&, const Wanted&) = default;
};

// `health` is null when the daemon cannot be reached. `our_reason` is the reason of the node's
// drain when the drain is ours, else "". `drained_for`: the ports that drain is for by identity
// (the follower's drain record, when it was written for that reason); null: the ports the
// reason names, by name. A port of the record is looked up by node GUID and number, whatever
// its name is now; one the daemon does not show is missing, named by the node GUID when another
// adapter has its name now ("0c42:a103:00f6:5e44/1 missing"). For kDrain, *drain_ports (when
// given) receives every port the drain is for, by identity where the daemon or the record said
// it: what the next record holds.
Wanted wanted_state(const rdma_eventd::HealthReply* health, const Config& config,
                    std::string_view our_reason = "",
                    const std::vector<DrainedPort>* drained_for = nullptr,
                    std::vector<DrainedPort>* drain_ports = nullptr);

// The drain reason for the ports given (device/port and verdict), worst first in the daemon's
// order, bounded to kMaxReasonBytes: "rdma-eventd: mlx5_1/1 fatal, mlx5_0/1 flapping (3
// downs/1h)", then "+N more". `missing`: ports of an earlier reason of ours that the daemon no
// longer shows ("mlx5_0/1 missing").
std::string drain_reason(const std::string& prefix,
                         const std::vector<rdma_eventd::HealthReply::Port>& bad,
                         const std::vector<std::string>& missing = {});

// The ports ("mlx5_0/1") a reason of ours names, in its order; none when the reason does not
// start with `prefix`. The ports behind "+N more" are not named.
std::vector<std::string> ports_in_reason(std::string_view reason, std::string_view prefix);

struct Action {
  enum Kind {
    kNone,
    kDrain,         // scontrol update nodename=N state=drain reason=R
    kUpdateReason,  // the same command: our drain, another set of ports
    kResume,        // scontrol update nodename=N state=resume
    kHeldBack,      // a drain that the drain limit holds back (or its splay delays): no command
  };
  Kind kind = kNone;
  std::string reason;  // kDrain, kUpdateReason, kHeldBack (the drain's)
  std::string why;     // for the log: why this action, or why none
  friend bool operator==(const Action&, const Action&) = default;
};

bool owned_by_us(const NodeState& node, const std::string& prefix);
Action decide(const Wanted& wanted, const NodeState& node, const std::string& prefix);

// The scontrol command line of an action (kNone: empty).
std::vector<std::string> scontrol_args(const Action& action, const std::string& node);

}  // namespace rdma_eventd_slurm
