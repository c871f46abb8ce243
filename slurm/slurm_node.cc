#include "slurm_node.h"

#include <cstdio>

#include "node_state.h"
#include "scontrol.h"

namespace rdma_eventd_slurm {

SlurmNode::Result SlurmNode::reconcile(const Wanted& wanted, std::chrono::milliseconds timeout,
                                       std::string* message, Action* action_out) {
  const std::vector<std::string> show = {"show", "node", "-o", config_.node_name};
  const CommandResult shown = run_command(config_.scontrol, show, timeout);
  if (!shown.ok()) {
    NodeState ignored;
    if (shown.kind == CommandResult::kExited &&
        parse_node_state(shown.output, config_.node_name, ignored) == NodeParse::kNotFound) {
      *message = "Slurm does not know node '" + config_.node_name +
                 "' (set node_name in the configuration): the node is left as it is";
      return Result::kUnknownNode;
    }
    *message = describe_failure(config_.scontrol, show, shown);
    return Result::kFailed;
  }
  NodeState node;
  switch (parse_node_state(shown.output, config_.node_name, node)) {
    case NodeParse::kOk:
      break;
    case NodeParse::kNotFound:
      *message = "Slurm does not know node '" + config_.node_name +
                 "' (set node_name in the configuration): the node is left as it is";
      return Result::kUnknownNode;
    case NodeParse::kUnreadable:
      *message = "'" + command_text(config_.scontrol, show) +
                 "' printed no State= for the node: the node is left as it is";
      return Result::kFailed;
  }
  const Action action = decide(wanted, node, config_.reason_prefix);
  if (action_out) *action_out = action;
  const std::vector<std::string> args = scontrol_args(action, config_.node_name);
  if (args.empty()) {
    *message = action.why;
    return Result::kDone;
  }
  if (dry_run_) {
    std::printf("%s\n", command_text(config_.scontrol, args).c_str());
    std::fflush(stdout);
    *message = "would run it (dry run): " + action.why;
    return Result::kDone;
  }
  const CommandResult updated = run_command(config_.scontrol, args, timeout);
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
