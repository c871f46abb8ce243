#include "slurm_node.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "drain_limit.h"
#include "rdma_eventd/internal/atomic_file.h"
#include "rdma_eventd/internal/small_file.h"
#include "schema/health_view.h"

namespace rdma_eventd_slurm {

using rdma_eventd::internal::read_small_file;
using rdma_eventd::internal::SmallFile;

namespace {
constexpr size_t kMaxDrainRecordBytes = 1 << 20;
}  // namespace

SlurmNode::SlurmNode(const Config& config, bool dry_run, CommandRunner& runner,
                     const rdma_eventd::SteadyTime& time, uint64_t seed)
    : config_(config),
      dry_run_(dry_run),
      runner_(runner),
      time_(time),
      random_(seed != 0 ? seed : std::random_device{}()) {}

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

Action SlurmNode::decide_for(const rdma_eventd::HealthReply* health, const NodeState& node) {
  const std::string ours = owned_by_us(node, config_.reason_prefix) ? node.reason : std::string();
  // The record is the drain's only while the node holds the reason it was written with; or, read
  // at start, while the node is in service: a drain lifted while the follower was not running
  // (`scontrol reboot nextstate=resume` resumes the node at its reboot), whose ports are judged
  // once more.
  const bool recorded =
      record_ && record_->node == node.name &&
      ((!ours.empty() && record_->reason == node.reason) || (record_carried_ && node.in_service()));
  return decide(
      wanted_state(health, config_, ours, recorded ? &record_->ports : nullptr, &wanted_ports_),
      node, config_.reason_prefix);
}

void SlurmNode::forget_drain_record() {
  record_.reset();
  record_carried_ = false;
  if (!dry_run_) ::unlink(drain_record_path().c_str());
}

std::string SlurmNode::drain_record_path() const {
  return config_.state_directory + "/drain.json";
}

std::string SlurmNode::load_drain_record() {
  const std::string path = drain_record_path();
  const SmallFile file = read_small_file(path, kMaxDrainRecordBytes);
  if (file.error == ENOENT) return "";
  if (!file.ok()) {
    return "cannot read " + path + ": " +
           (file.too_large ? std::string("larger than 1 MiB") : std::strerror(file.error)) +
           "; the ports of a drain of ours are known by the names in its reason";
  }
  std::string error;
  record_ = parse_drain_record(file.text, &error);
  record_carried_ = record_.has_value();
  if (!record_) {
    return path + ": not a drain record (" + error +
           "); the ports of a drain of ours are known by the names in its reason";
  }
  return "";
}

std::string SlurmNode::keep_drain_record(const Action& action, const std::string& node) {
  const std::string path = drain_record_path();
  if (action.kind == Action::kResume) {
    record_.reset();
    record_carried_ = false;
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
      return "cannot remove " + path + ": " + std::strerror(errno);
    }
    return "";
  }
  if (action.kind != Action::kDrain && action.kind != Action::kUpdateReason) return "";
  record_ = DrainRecord{node, action.reason, wanted_ports_};
  record_carried_ = false;
  // The directory is the unit's StateDirectory=; the HealthCheckProgram mode makes it itself.
  if (::mkdir(config_.state_directory.c_str(), 0700) != 0 && errno != EEXIST) {
    return "cannot make " + config_.state_directory + ": " + std::strerror(errno) +
           "; after a reboot the ports of this drain are known by the names in its reason";
  }
  if (const int err = rdma_eventd::internal::write_file_atomically(
          path, drain_record_json(*record_), {.mode = 0600, .sync = true})) {
    return "cannot write " + path + ": " + std::strerror(err) +
           "; after a reboot the ports of this drain are known by the names in its reason";
  }
  return "";
}

SlurmNode::Result SlurmNode::reconcile(const rdma_eventd::HealthReply* health,
                                       std::chrono::milliseconds timeout, std::string* message,
                                       Action* action_out) {
  NodeState node;
  if (const Result r = read(timeout, node, message); r != Result::kDone) return r;
  note_operator_resume(node);
  Action action = decide_for(health, node);
  if (action.kind != Action::kNone && !dry_run_) {
    // An admin's drain may have come since the read: read again, and decide from what is
    // there now, so that a drain of theirs is neither overwritten nor resumed. (scontrol has
    // no conditional update: what is left is the few milliseconds of one scontrol call, and of
    // sinfo's for a new drain under the drain limit.)
    NodeState again;
    if (const Result r = read(timeout, again, message); r != Result::kDone) return r;
    if (!(again == node)) action = decide_for(health, again);
  }
  respect_operator_resume(health, action);
  // A record read at start, of a drain lifted meanwhile, that calls for no drain now: over.
  if (record_carried_ && node.in_service() && action.kind != Action::kDrain &&
      action.kind != Action::kHeldBack) {
    forget_drain_record();
  }
  recheck_in_ = std::chrono::milliseconds(0);
  if (action.kind != Action::kDrain) drain_due_.reset();  // a drain wanted again splays again
  if (action.kind == Action::kDrain && config_.drain_limit.kind != DrainLimit::kOff) {
    if (const Result r = limit_drain(node, timeout, action, message); r != Result::kDone) return r;
  }
  if (action_out) *action_out = action;
  const std::vector<std::string> args = scontrol_args(action, node.name);
  if (args.empty()) {
    *message = action.why;
    // The dry run says what it would hold back, as it says what it would run.
    if (dry_run_ && action.kind == Action::kHeldBack && action.why != printed_) {
      std::printf("# %s\n", action.why.c_str());
      std::fflush(stdout);
      printed_ = action.why;
    }
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
    // A resume that failed may still have been applied (slurmctld going down in the middle):
    // a drain found lifted at the next read is then not taken for an operator's resume.
    if (action.kind == Action::kResume) ours_at_last_read_.clear();
    return Result::kFailed;
  }
  drain_due_.reset();
  // What the node holds of ours now, for telling an operator's resume at the next read.
  ours_at_last_read_ = action.kind == Action::kResume ? "" : action.reason;
  const std::string kept = keep_drain_record(action, node.name);
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
    case Action::kHeldBack:
      break;
  }
  if (!kept.empty()) *message += " (" + kept + ")";
  return Result::kDone;
}

void SlurmNode::note_operator_resume(const NodeState& node) {
  // A drain of ours lifted, or taken over, by someone else while the follower runs: the record
  // is of no drain now.
  const bool ours = owned_by_us(node, config_.reason_prefix);
  if (record_ && !record_carried_ && !ours) forget_drain_record();
  // A record read at start whose reason is not the one our drain has: of an earlier drain.
  if (record_ && record_carried_ && ours && record_->reason != node.reason) forget_drain_record();
  if (!ours_at_last_read_.empty() && node.in_service()) {
    resumed_over_ = ports_in_reason(ours_at_last_read_, config_.reason_prefix);
  }
  ours_at_last_read_ = ours ? node.reason : "";
}

void SlurmNode::respect_operator_resume(const rdma_eventd::HealthReply* health, Action& action) {
  if (resumed_over_.empty()) return;
  if (health && health->enabled && rdma_eventd::view_health(*health).bad.empty()) {
    resumed_over_.clear();  // every port healthy: what the operator accepted is over
    return;
  }
  if (action.kind != Action::kDrain) return;
  const std::vector<std::string> wanted = ports_in_reason(action.reason, config_.reason_prefix);
  const bool accepted =
      !wanted.empty() && std::all_of(wanted.begin(), wanted.end(), [&](const std::string& p) {
        return std::find(resumed_over_.begin(), resumed_over_.end(), p) != resumed_over_.end();
      });
  if (!accepted) {
    resumed_over_.clear();  // another port went bad: drained again, for all of them
    return;
  }
  std::string ports;
  for (const std::string& p : resumed_over_)
    ports += (ports.empty() ? "" : ", ") + p;
  action = Action{Action::kNone, "",
                  "left in service: an operator resumed it while it was drained for " + ports +
                      "; it is drained again if another port goes bad"};
}

SlurmNode::Result SlurmNode::limit_drain(const NodeState& node, std::chrono::milliseconds timeout,
                                         Action& action, std::string* message) {
  const rdma_eventd::SteadyTimePoint now = time_.now();
  if (!drain_due_) {
    const uint64_t splay_ms = uint64_t{config_.drain_splay_s} * 1000;
    const uint64_t wait_ms = splay_ms == 0 ? 0 : random_() % (splay_ms + 1);
    drain_due_ = now + std::chrono::milliseconds(wait_ms);
  }
  if (now < *drain_due_) {
    recheck_in_ = std::chrono::ceil<std::chrono::milliseconds>(*drain_due_ - now);
    action = Action{
        Action::kHeldBack, action.reason,
        "a drain waits " + std::to_string((recheck_in_.count() + 999) / 1000) +
            " s first (drain_splay_s " + std::to_string(config_.drain_splay_s) +
            "), so that the nodes of one fabric event count each other's drains: " + action.reason};
    return Result::kDone;
  }
  const std::string sinfo = sinfo_program(config_);
  const std::vector<std::string> args = sinfo_args(node.partitions);
  const CommandResult listed = runner_.run(sinfo, args, timeout);
  if (!listed.ok()) {
    *message = describe_failure(sinfo, args, listed) + "; the drain waits for it (drain_limit)";
    return Result::kFailed;
  }
  std::string why = "more than " + std::to_string(kMaxCommandOutput >> 20) + " MiB";
  const auto count = listed.truncated
                         ? std::nullopt
                         : count_drains(listed.output, config_.reason_prefix, node.name, &why);
  if (!count) {
    *message = "'" + command_text(sinfo, args) + "' printed " + why +
               "; the drain waits for it (drain_limit)";
    return Result::kFailed;
  }
  const size_t allowed = drains_allowed(config_.drain_limit, count->nodes);
  if (count->ours < allowed) return Result::kDone;
  const std::string where =
      node.partitions.empty() ? "the cluster" : "partition " + node.partitions;
  action = Action{Action::kHeldBack, action.reason,
                  "held back by the drain limit: " + std::to_string(count->ours) + " of the " +
                      std::to_string(count->nodes) + " nodes of " + where +
                      " are drained by rdma-eventd already, and drain_limit " +
                      limit_text(config_.drain_limit) + " allows " + std::to_string(allowed) +
                      "; the node is drained once fewer are: " + action.reason};
  return Result::kDone;
}

}  // namespace rdma_eventd_slurm
