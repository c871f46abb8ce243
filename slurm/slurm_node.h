// The node's Slurm state through scontrol: read it, decide with the pure rules (policy.h), and
// change it (or, in a dry run, print the command that would).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <random>
#include <string>

#include "client/follower.h"
#include "config.h"
#include "drain_record.h"
#include "node_state.h"
#include "policy.h"
#include "scontrol.h"

namespace rdma_eventd_slurm {

class SlurmNode {
 public:
  // `time` and `seed` (0: a new random sequence) time the drain's splay (drain_splay_s).
  SlurmNode(const Config& config, bool dry_run, CommandRunner& runner = process_runner(),
            const rdma_eventd::SteadyTime& time = rdma_eventd::steady_time(), uint64_t seed = 0);

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

  // When a drain waits out its splay: how long until it is due, for the follower to act again
  // then; 0 otherwise.
  std::chrono::milliseconds recheck_in() const { return recheck_in_; }

  // Reads the drain record (state_directory/drain.json) that an earlier run left: the ports of
  // a drain of ours by identity, across a reboot. Returns "" (read, or none there), or what is
  // wrong with it, for the log; a record that cannot be read is not used, and the reason's
  // names stand in for it.
  std::string load_drain_record();

 private:
  Result read(std::chrono::milliseconds timeout, NodeState& node, std::string* message);
  Action decide_for(const rdma_eventd::HealthReply* health, const NodeState& node);
  // After scontrol did `action` on `node` (its NodeName): the drain record written (a drain, a
  // new reason) or removed (a resume). Returns "" or what failed, for the log.
  std::string keep_drain_record(const Action& action, const std::string& node);
  std::string drain_record_path() const;
  void forget_drain_record();  // in memory, and on disk unless a dry run
  // An operator's resume of our drain, seen at a read: remembered, and a drain for no port
  // beyond those it was for is not made again (kNone) until another port goes bad or every
  // port is healthy.
  void note_operator_resume(const NodeState& node);
  void respect_operator_resume(const rdma_eventd::HealthReply* health, Action& action);
  // A new drain (kDrain) under the drain limit: held back (kHeldBack) while its splay runs or
  // the partitions hold as many drains of ours as the limit allows.
  Result limit_drain(const NodeState& node, std::chrono::milliseconds timeout, Action& action,
                     std::string* message);

  const Config& config_;
  bool dry_run_;
  CommandRunner& runner_;
  std::string printed_;  // the dry run's last command: printed once, not at every reconcile
  const rdma_eventd::SteadyTime& time_;
  std::mt19937_64 random_;
  std::optional<rdma_eventd::SteadyTimePoint> drain_due_;  // a drain wanted: when its splay ends
  std::string ours_at_last_read_;          // the reason of our drain at the last read, or ""
  std::vector<std::string> resumed_over_;  // the ports of our drain an operator resumed
  std::optional<DrainRecord> record_;      // the drain record, as on disk
  bool record_carried_ = false;            // read at start, and not of the node's drain yet
  std::vector<DrainedPort> wanted_ports_;  // the ports of the last drain decided, by identity
  std::chrono::milliseconds recheck_in_{0};
};

}  // namespace rdma_eventd_slurm
