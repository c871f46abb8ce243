// A Slurm node's state and reason, read from `scontrol show node -o NAME` (Slurm 22.05's
// one-line form: `NodeName=n1 Arch=... State=IDLE+DRAIN ... Reason=TEXT [user@time]`, then
// ` Comment=TEXT` and ` Extra=TEXT` when those are set). Pure.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace rdma_eventd_slurm {

struct NodeState {
  std::string name;             // Slurm's NodeName (the name asked for may be its NodeHostName)
  std::string base;             // IDLE, ALLOCATED, MIXED, DOWN, UNKNOWN, FUTURE, ...
  std::set<std::string> flags;  // DRAIN, NOT_RESPONDING, MAINT, RESERVED, COMPLETING, ...
  std::string reason;           // without the " [user@time]" Slurm appends; "" when none
  std::string partitions;       // Partitions=: "debug" or "a,b"; "" when in none
  bool has(std::string_view flag) const { return flags.count(std::string(flag)) > 0; }
  bool drained() const { return has("DRAIN"); }
  bool down() const { return base == "DOWN"; }
  // Neither drained nor down, and no reason of anyone's on it.
  bool in_service() const { return !drained() && !down() && reason.empty(); }
  friend bool operator==(const NodeState&, const NodeState&) = default;
};

enum class NodeParse { kOk, kNotFound, kUnreadable };

// Parses the output of `scontrol show node -o NAME` for node `name`: its NodeName= line, else
// the one line whose NodeHostName= is `name` (a node whose Slurm name is not its host name,
// asked for by host name). kNotFound when Slurm does not know the node ("Node n9 not found");
// kUnreadable when the text has no such line with a State=.
NodeParse parse_node_state(std::string_view output, std::string_view name, NodeState& out);

}  // namespace rdma_eventd_slurm
