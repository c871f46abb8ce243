#include "slurm_node.h"

#include <cstdio>

namespace rdma_eventd_slurm {

SlurmNode::Result SlurmNode::read(std::chrono::milliseconds timeout, NodeState& node,
                                  std::string* message) {
  const std::vector<std::string> show = {"show", "node", "-o", config_.node_name};
  const CommandResult shown = runner_.run(config_.scontrol, show, timeout);
  NodeParse parsed = NodeParse::kUnreadable;
  if (shown.kind == CommandResult::kExited) {
    parsed = parse_node_state(shown.output, config_.node_name, node);
  }
  if (parsed == NodeParse::kNotFound) {
    *message = "Slurm does not know node '" + config_.node_name +
               "' (set node_name in the configuration): the node is left as it is";
    return Result::kUnknownNode;
  }
  if (!shown.ok()) {
    *message = describe_failure(config_.scontrol, show, shown);
    return Result::kFailed;
  }
  if (parsed == NodeParse::kUnreadable) {
    *message = "'" + command_text(config_.scontrol, show) +
               "' printed no State= for the node: the node is left as it is";
    return Result::kFailed;
  }
  return Result::kDone;
}

Action SlurmNode::decide_for(const rdma_eventd::HealthReply* health, const NodeState& node) const {
  const std::string ours = owned_by_us(node, config_.reason_prefix) ? node.reason : std::string();
  return decide(wanted_state(health, config_, ours), node, config_.reason_prefix);
}

SlurmNode::Result SlurmNode::reconcile(const rdma_eventd::HealthReply* health,
                                       std::chrono::milliseconds timeout, std::string* message,
                                       Action* action_out) {
  NodeState node;
  if (const Result r = read(timeout, node, message); r != Result::kDone) return r;
  Action action = decide_for(health, node);
  if (action.kind != Action::kNone && !dry_run_) {
    // An admin's drain may have come since the read: read again, and decide from what is
    // there now, so that a drain of theirs is neither overwritten nor resumed. (scontrol has
    // no conditional update: what is left is the few milliseconds of one scontrol call.)
    NodeState again;
    if (const Result r = read(timeout, again, message); r != Result::kDone) return r;
    if (!(again == node)) action = decide_for(health, again);
  }
  if (action_out) *action_out = action;
  const std::vector<std::string> args = scontrol_args(action, config_.node_name);
  if (args.empty()) {
    *message = action.why;
    return Result::kDone;
  }
  if (dry_run_) {
    const std::string command = command_text(config_.scontrol, args);
    if (command != printed_) {
      std::printf("%s\n", command.c_str());
      std::fflush(stdout);
      printed_ = command;
    }
    *message = "would run it (dry run): " + action.why;
    return Result::kDone;
  }
  const CommandResult updated = runner_.run(config_.scontrol, args, timeout);
  if (!updated.ok()) {
    *message = describe_failure(config_.scontrol, args, updated);
    return Result::kFailed;
  }
  switch (action.kind) {
    case Action::kDrain:
      *message = "drained " + config_.node_name + ": " + action.reason;
      break;
    case Action::kUpdateReason:
      *message = "updated the reason of " + config_.node_name + ": " + action.reason;
      break;
    case Action::kResume:
      *message = "resumed " + config_.node_name + ": " + action.why;
      break;
    case Action::kNone:
      break;
  }
  return Result::kDone;
}

}  // namespace rdma_eventd_slurm
