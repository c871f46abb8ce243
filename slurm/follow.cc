#include "follow.h"

#include <algorithm>

#include "schema/health_reply.h"

namespace rdma_eventd_slurm {

using rdma_eventd::FollowerEvent;

rdma_eventd::FollowerOptions follower_options(const Config& config) {
  rdma_eventd::FollowerOptions o;
  o.subscription.events.push_back(rdma_eventd::EventKind::kPortHealth);
  o.queries = {rdma_eventd::Op::kHealth};
  o.query_timeout = std::chrono::seconds(5);
  o.initial_backoff = std::chrono::milliseconds(500);
  // Never longer than a minute: with a reconcile interval of hours, a drain must still land
  // within a minute of slurmctld's return.
  o.max_backoff =
      std::clamp<std::chrono::milliseconds>(std::chrono::seconds(config.reconcile_interval_s),
                                            o.initial_backoff, std::chrono::seconds(60));
  o.refresh_interval = std::chrono::seconds(config.reconcile_interval_s);
  // Every node of a cluster runs one: restarted together (an upgrade, a reboot of the racks) or
  // losing slurmctld together, they would reconcile and retry in the same second, each a call of
  // scontrol to the one controller. Each wait is lengthened by up to half at random.
  o.jitter = 0.5;
  return o;
}

SlurmFollowPolicy::Outcome SlurmFollowPolicy::act(const std::vector<rdma_eventd::Message>* replies,
                                                  std::string* failure) {
  std::optional<rdma_eventd::HealthReply> health;
  if (replies) {
    std::string why;
    health = rdma_eventd::health_from_json(replies->at(0).text(), &why);
    if (!health) {
      *failure = "unreadable health reply from rdma-eventd: " + why;
      return Outcome::kRetry;
    }
  }
  std::string message;
  Action action;
  const auto result =
      node_.reconcile(health ? &*health : nullptr, std::chrono::seconds(config_.scontrol_timeout_s),
                      &message, &action);
  if (result != SlurmNode::Result::kDone) {
    *failure = message;
    return Outcome::kRetry;
  }
  // Actions are logged every time; why nothing was done (a drain held back too), once per change.
  const bool done = action.kind != Action::kNone && action.kind != Action::kHeldBack;
  if (done || message != last_message_) log_(message);
  last_message_ = message;
  return Outcome::kDone;
}

void SlurmFollowPolicy::on_event(const FollowerEvent& event) {
  switch (event.kind) {
    case FollowerEvent::kConnected:
      log_("following rdma-eventd at " + config_.socket + " (stream " + event.text +
           (event.restarted ? ", a new one: the daemon restarted" : "") + "), node " +
           config_.node_name);
      last_message_.clear();  // say what the reconciliation at the connection finds
      break;
    case FollowerEvent::kConnectionLost:
      log_("lost rdma-eventd's connection: " + event.text);
      break;
    case FollowerEvent::kDaemonAway:
      log_("cannot reach rdma-eventd at " + config_.socket + ": " + event.text +
           (config_.drain_when_daemon_unreachable
                ? "; the node is drained until it is back"
                : "; the node is left as it is until it is back"));
      break;
    case FollowerEvent::kActFailing:
      log_(event.text + "; retrying");
      break;
    case FollowerEvent::kActRecovered:
      log_("Slurm answers again");
      break;
  }
}

}  // namespace rdma_eventd_slurm
