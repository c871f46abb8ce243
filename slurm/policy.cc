#include "policy.h"

#include <algorithm>
#include <tuple>

namespace rdma_eventd_slurm {

using rdma_eventd::HealthReply;

namespace {

// Worst first (docs/health.md's order of badness, reversed).
int severity_rank(const std::string& health) {
  static const char* const kOrder[] = {"gone", "fatal", "flapping", "down", "degraded"};
  for (int i = 0; i < 5; ++i) {
    if (health == kOrder[i]) return i;
  }
  return 5;
}

// The flap window as an operator reads it in a reason: 3600 -> "1h", 600 -> "10m", 90 -> "90s".
std::string short_duration(uint32_t s) {
  if (s % 3600 == 0) return std::to_string(s / 3600) + "h";
  if (s % 60 == 0) return std::to_string(s / 60) + "m";
  return std::to_string(s) + "s";
}

std::string port_item(const HealthReply::Port& p) {
  std::string item = p.device + "/" + std::to_string(p.port) + " " + p.health;
  if (p.health == "flapping") {
    // "(3 downs/1h)"; a daemon that does not say its window (0) gives "(3 downs)".
    item += " (" + std::to_string(p.downs_in_window) + " down" +
            (p.downs_in_window == 1 ? "" : "s") +
            (p.window_s ? "/" + short_duration(p.window_s) : "") + ")";
  } else if (p.health == "degraded") {
    item += " (" + p.reason + ")";
  }
  return item;
}

// The reason without its parenthesised details: the set of ports and verdicts. A count that
// moves (a fourth down) does not rewrite the reason; another port or verdict does.
std::string without_details(const std::string& reason) {
  std::string out;
  int depth = 0;
  for (char c : reason) {
    if (c == '(') ++depth;
    if (depth == 0) out += c;
    if (c == ')' && depth > 0) --depth;
  }
  return out;
}

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

}  // namespace

std::string drain_reason(const std::string& prefix, const std::vector<HealthReply::Port>& bad) {
  std::vector<HealthReply::Port> ports = bad;
  std::sort(ports.begin(), ports.end(), [](const auto& a, const auto& b) {
    return std::tuple(severity_rank(a.health), a.device, a.port) <
           std::tuple(severity_rank(b.health), b.device, b.port);
  });
  std::string reason = prefix;
  size_t shown = 0;
  for (const HealthReply::Port& p : ports) {
    const std::string item = (shown ? ", " : " ") + port_item(p);
    const size_t rest = ports.size() - shown - 1;
    // Room for " +N more" whenever ports would be left out after this one.
    const size_t more = rest ? (" +" + std::to_string(rest) + " more").size() : 0;
    if (reason.size() + item.size() + more > kMaxReasonBytes) break;
    reason += item;
    ++shown;
  }
  if (shown < ports.size()) {
    reason += " +" + std::to_string(ports.size() - shown) + " more";
  }
  return reason;
}

Wanted wanted_state(const HealthReply* health, const Config& config) {
  if (!health) {
    if (config.drain_when_daemon_unreachable) {
      return {Wanted::kDrain, config.reason_prefix + " rdma-eventd unreachable"};
    }
    return {Wanted::kUnknown, ""};
  }
  if (!health->enabled) return {Wanted::kUnknown, ""};
  std::vector<HealthReply::Port> bad;
  bool all_healthy = true;
  for (const HealthReply::Port& p : health->ports) {
    if (!p.counted) continue;
    if (p.health != "healthy") all_healthy = false;
    if (config.drain_on.count(p.health)) bad.push_back(p);
  }
  if (!bad.empty()) return {Wanted::kDrain, drain_reason(config.reason_prefix, bad)};
  if (all_healthy) return {Wanted::kHealthy, ""};
  return {Wanted::kHold, ""};
}

bool owned_by_us(const NodeState& node, const std::string& prefix) {
  return node.drained() && !node.down() && starts_with(node.reason, prefix);
}

Action decide(const Wanted& wanted, const NodeState& node, const std::string& prefix) {
  const bool ours = owned_by_us(node, prefix);
  // Someone else's hold on the node: an admin's or NHC's drain, a down (theirs or Slurm's), a
  // maintenance reservation, a reason of theirs. Theirs stands, and ours is not added on top.
  const bool theirs =
      !ours && (node.drained() || node.down() || node.has("MAINT") || node.has("RESERVED") ||
                node.base == "FUTURE" || !node.reason.empty());
  switch (wanted.kind) {
    case Wanted::kUnknown:
      return {Action::kNone, "", "the verdicts are unknown: the node is left as it is"};
    case Wanted::kHold:
      return {Action::kNone, "", "no port has a verdict that drains: the node is left as it is"};
    case Wanted::kHealthy:
      if (ours) return {Action::kResume, "", "every port in service is healthy"};
      return {Action::kNone, "", "healthy, and no drain of ours to resume"};
    case Wanted::kDrain:
      if (ours) {
        if (without_details(node.reason) == without_details(wanted.reason)) {
          return {Action::kNone, "", "drained already, for the same ports"};
        }
        return {Action::kUpdateReason, wanted.reason, "the set of bad ports changed"};
      }
      if (theirs) {
        return {Action::kNone, "",
                "not drained: the node is held by someone else (state " + node.base +
                    (node.reason.empty() ? "" : ", reason '" + node.reason + "'") + ")"};
      }
      return {Action::kDrain, wanted.reason, "a port in service has a verdict that drains"};
  }
  return {};
}

std::vector<std::string> scontrol_args(const Action& action, const std::string& node) {
  switch (action.kind) {
    case Action::kNone:
      return {};
    case Action::kDrain:
    case Action::kUpdateReason:
      return {"update", "nodename=" + node, "state=drain", "reason=" + action.reason};
    case Action::kResume:
      return {"update", "nodename=" + node, "state=resume"};
  }
  return {};
}

}  // namespace rdma_eventd_slurm
