// The node's Slurm state through scontrol: read it, decide with the pure rules (policy.h), and
// change it (or, in a dry run, print the command that would).
#pragma once

#include <chrono>
#include <string>

#include "config.h"
#include "node_state.h"
#include "policy.h"
#include "scontrol.h"

namespace rdma_eventd_slurm {

class SlurmNode {
 public:
  SlurmNode(const Config& config, bool dry_run, CommandRunner& runner = process_runner())
      : config_(config), dry_run_(dry_run), runner_(runner) {}

  enum class Result {
    kDone,         // the node is as wanted (or was left alone on purpose)
    kFailed,       // scontrol failed or timed out: try again later; nothing was guessed
    kUnknownNode,  // Slurm does not know the node
  };
  // Reads the node's state, and changes it when the rules say so, from the daemon's verdicts
  // (`health`; null when the daemon cannot be reached). `timeout` bounds each scontrol call.
  // *message says what happened (an action, or what failed).
  Result reconcile(const rdma_eventd::HealthReply* health, std::chrono::milliseconds timeout,
                   std::string* message, Action* action = nullptr);

 private:
  Result read(std::chrono::milliseconds timeout, NodeState& node, std::string* message);
  Action decide_for(const rdma_eventd::HealthReply* health, const NodeState& node) const;

  const Config& config_;
  bool dry_run_;
  CommandRunner& runner_;
  std::string printed_;  // the dry run's last command: printed once, not at every reconcile
};

}  // namespace rdma_eventd_slurm
