// rdma-eventd-slurm's follow mode as a policy over the one daemon follower
// (client/follower.h): at every act, the daemon's health reply (or its absence) goes through
// SlurmNode to scontrol; a failure is retried by the follower with its backoff. What the
// follower and the node say is logged through `log`, each once per change.
#pragma once

#include <functional>
#include <string>

#include "client/follower.h"
#include "config.h"
#include "slurm_node.h"

namespace rdma_eventd_slurm {

class SlurmFollowPolicy final : public rdma_eventd::FollowerPolicy {
 public:
  using Log = std::function<void(const std::string&)>;
  SlurmFollowPolicy(const Config& config, bool dry_run, CommandRunner& runner, Log log,
                    const rdma_eventd::SteadyTime& time = rdma_eventd::steady_time(),
                    uint64_t seed = 0)
      : config_(config), node_(config, dry_run, runner, time, seed), log_(std::move(log)) {
    if (const std::string error = node_.load_drain_record(); !error.empty()) log_(error);
  }
  Outcome act(const std::vector<rdma_eventd::Message>* replies, std::string* failure) override;
  void on_event(const rdma_eventd::FollowerEvent& event) override;
  std::chrono::milliseconds act_again_in() const override { return node_.recheck_in(); }

 private:
  const Config& config_;
  SlurmNode node_;
  Log log_;
  std::string last_message_;
};

// The follower's settings for the configuration: port_health records wake it, the health reply
// is asked, the node is reconciled every reconcile_interval_s, and every retry (the daemon,
// scontrol) backs off from 0.5 s to reconcile_interval_s, at most 60 s.
rdma_eventd::FollowerOptions follower_options(const Config& config);

}  // namespace rdma_eventd_slurm
