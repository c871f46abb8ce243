// The node's Slurm state through scontrol: read it, decide with the pure rules (policy.h), and
// change it (or, in a dry run, print the command that would).
#pragma once

#include <chrono>
#include <string>

#include "config.h"
#include "policy.h"

namespace rdma_eventd_slurm {

class SlurmNode {
 public:
  SlurmNode(const Config& config, bool dry_run) : config_(config), dry_run_(dry_run) {}

  enum class Result {
    kDone,         // the node is as wanted (or was left alone on purpose)
    kFailed,       // scontrol failed or timed out: try again later; nothing was guessed
    kUnknownNode,  // Slurm does not know the node
  };
  // Reads the node's state, and changes it when the rules say so. `timeout` bounds each
  // scontrol call. *message says what happened (an action, or what failed).
  Result reconcile(const Wanted& wanted, std::chrono::milliseconds timeout, std::string* message,
                   Action* action = nullptr);

 private:
  const Config& config_;
  bool dry_run_;
};

}  // namespace rdma_eventd_slurm
