#include "policy.h"

#include <algorithm>
#include <cstdlib>
#include <tuple>

#include "schema/health_view.h"

namespace rdma_eventd_slurm {

using rdma_eventd::HealthReply;
using rdma_eventd::HealthView;

namespace {

std::string port_item(const HealthReply::Port& p) {
  if (p.health == "healthy" && rdma_eventd::link_not_judged(p))
    return rdma_eventd::port_name(p) + " not_judged (" + p.link_quality_reason + ")";
  std::string item = rdma_eventd::port_name(p) + " " + p.health;
  if (p.health == "flapping") {
    // "(3 downs/1h)"; a daemon that does not say its window (0) gives "(3 downs)".
    item += " (" + std::to_string(p.downs_in_window) + " down" +
            (p.downs_in_window == 1 ? "" : "s") +
            (p.window_s ? "/" + rdma_eventd::short_duration(p.window_s) : "") + ")";
  } else if (p.health == "degraded") {
    item += " (" + p.reason + ")";
  } else if (!p.counted) {
    item += " (never up)";  // since the daemon's state was lost: a reboot
  }
  return item;
}

// The reason without its parenthesised details: the set of ports and verdicts. A count that
// moves (a fourth down) does not rewrite the reason, nor does a detail that comes or goes
// ("down" and "down (never up)"); another port or verdict does.
std::string without_details(std::string_view reason) {
  std::string out;
  int depth = 0;
  for (char c : reason) {
    if (c == '(' && depth++ == 0 && !out.empty() && out.back() == ' ') out.pop_back();
    if (depth == 0) out += c;
    if (c == ')' && depth > 0) --depth;
  }
  return out;
}

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// "mlx5_0/1": a device name, a slash, a port number.
bool is_port_name(std::string_view s) {
  const size_t slash = s.rfind('/');
  if (slash == 0 || slash == std::string_view::npos || slash + 1 == s.size()) return false;
  return s.find_first_not_of("0123456789", slash + 1) == std::string_view::npos;
}

// Whether drain_on asks for this port's drain: by its verdict, or, degraded, by its reason
// ("bit_errors": a link that loses bits, while a slower link is left in service).
bool drains(const Config& config, const HealthReply::Port& p) {
  if (config.drain_on.count(p.health)) return true;
  return p.health == "degraded" && config.drain_on.count(p.reason) &&
         std::find(kDrainableReasons.begin(), kDrainableReasons.end(), p.reason) !=
             kDrainableReasons.end();
}

const HealthReply::Port* find_port(const HealthReply& h, std::string_view name) {
  for (const HealthReply::Port& p : h.ports) {
    if (rdma_eventd::port_name(p) == name) return &p;
  }
  return nullptr;
}

// A port of our drain as the daemon shows it now: by node GUID and number when they are known
// (a renamed adapter is still itself; another adapter that took its name is not), else by name.
const HealthReply::Port* find_drained(const HealthReply& h, const DrainedPort& d) {
  if (d.node_guid.empty()) return find_port(h, d.name);
  for (const HealthReply::Port& p : h.ports) {
    if (p.node_guid == d.node_guid && p.port == d.port) return &p;
  }
  return nullptr;
}

// "mlx5_0/1" of a reason, as a port of our drain known by its name only.
DrainedPort named_port(const std::string& name) {
  const size_t slash = name.rfind('/');
  return {name, "", static_cast<uint32_t>(std::strtoul(name.c_str() + slash + 1, nullptr, 10))};
}

// The name a missing port goes by in the reason: its own, unless another adapter has it now.
DrainedPort missing_as(const HealthReply& h, const DrainedPort& d) {
  if (d.node_guid.empty() || !find_port(h, d.name)) return d;
  return {d.node_guid + "/" + std::to_string(d.port), d.node_guid, d.port};
}

}  // namespace

std::vector<std::string> ports_in_reason(std::string_view reason, std::string_view prefix) {
  std::vector<std::string> ports;
  if (!starts_with(reason, prefix)) return ports;
  // Items are separated by commas outside parentheses ("mlx5_2/1 degraded (errors, x/1)"); an
  // item's port is its first word, up to a space or a parenthesis.
  const auto take = [&ports](std::string_view item) {
    while (!item.empty() && item.front() == ' ')
      item.remove_prefix(1);
    const std::string_view name = item.substr(0, item.find_first_of(" ("));
    if (is_port_name(name)) ports.emplace_back(name);
  };
  const std::string_view items = reason.substr(prefix.size());
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    if (items[i] == '(') ++depth;
    if (items[i] == ')' && depth > 0) --depth;
    if (items[i] == ',' && depth == 0) {
      take(items.substr(start, i - start));
      start = i + 1;
    }
  }
  take(items.substr(start));
  return ports;
}

std::string drain_reason(const std::string& prefix, const std::vector<HealthReply::Port>& bad,
                         const std::vector<std::string>& missing) {
  // Missing ports rank with gone ones: a device that left, as far as anyone can tell now.
  std::vector<std::tuple<int, std::string, std::string>> items;  // -rank, name, text
  for (const HealthReply::Port& p : bad) {
    items.emplace_back(-rdma_eventd::verdict_rank(p.health), rdma_eventd::port_name(p),
                       port_item(p));
  }
  for (const std::string& name : missing) {
    items.emplace_back(-rdma_eventd::verdict_rank("gone"), name, name + " missing");
  }
  std::sort(items.begin(), items.end());
  std::vector<std::string> texts;
  for (auto& item : items)
    texts.push_back(std::move(std::get<2>(item)));
  return rdma_eventd::bounded_list(prefix, texts, kMaxReasonBytes);
}

Wanted wanted_state(const HealthReply* health, const Config& config, std::string_view our_reason,
                    const std::vector<DrainedPort>* drained_for,
                    std::vector<DrainedPort>* drain_ports) {
  if (drain_ports) drain_ports->clear();  // a drain for no port (the daemon unreachable) has none
  if (!health) {
    if (config.drain_when_daemon_unreachable) {
      return {Wanted::kDrain, config.reason_prefix + " rdma-eventd unreachable"};
    }
    return {Wanted::kUnknown, ""};
  }
  const HealthView view = rdma_eventd::view_health(*health);
  if (!health->enabled) return {Wanted::kUnknown, ""};
  std::vector<HealthReply::Port> bad;
  for (const HealthReply::Port* p : view.bad) {
    if (drains(config, *p)) bad.push_back(*p);
  }
  // Healthy by its verdict, its link not judged: drained only where drain_on asks.
  if (config.drain_on.count(std::string(kNotJudged))) {
    for (const HealthReply::Port* p : view.not_judged)
      bad.push_back(*p);
  }
  std::vector<DrainedPort> ours;
  if (drained_for) {
    ours = *drained_for;
  } else {
    for (const std::string& name : ports_in_reason(our_reason, config.reason_prefix))
      ours.push_back(named_port(name));
  }
  // What our drain was for and the daemon no longer shows in service: not proven healthy.
  std::vector<DrainedPort> missing;
  bool named_healthy = true;  // every port our drain is for is healthy again
  for (const DrainedPort& d : ours) {
    const HealthReply::Port* p = find_drained(*health, d);
    if (!p) {
      missing.push_back(missing_as(*health, d));
    } else if (!p->counted) {
      bad.push_back(*p);
    }
    if (!p || p->health != "healthy") named_healthy = false;
  }
  if (!bad.empty() || !missing.empty()) {
    if (drain_ports) {
      for (const HealthReply::Port& p : bad)
        drain_ports->push_back({rdma_eventd::port_name(p), p.node_guid, p.port});
      drain_ports->insert(drain_ports->end(), missing.begin(), missing.end());
    }
    std::vector<std::string> missing_names;
    for (const DrainedPort& d : missing)
      missing_names.push_back(d.name);
    return {Wanted::kDrain, drain_reason(config.reason_prefix, bad, missing_names)};
  }
  switch (view.judgement) {
    case HealthView::Judgement::kUnknown:
      return {Wanted::kUnknown, ""};
    case HealthView::Judgement::kHealthy:
      return {Wanted::kHealthy, ""};
    case HealthView::Judgement::kUnhealthy:
      break;
  }
  // A port is not healthy, and no verdict drains (a link slower than expected, kept in service
  // on purpose). That holds the node as it is, but not a drain of ours whose ports are all
  // healthy again: what it was for is over, and the reason would name ports that are fine.
  if (!our_reason.empty() && named_healthy) return {Wanted::kNothingDrains, ""};
  return {Wanted::kHold, ""};
}

bool owned_by_us(const NodeState& node, const std::string& prefix) {
  return node.drained() && !node.down() && starts_with(node.reason, prefix);
}

Action decide(const Wanted& wanted, const NodeState& node, const std::string& prefix) {
  const bool ours = owned_by_us(node, prefix);
  // Someone else's hold on the node: an admin's or NHC's drain, a down (theirs or Slurm's), a
  // maintenance reservation (Slurm 22.05 prints +MAINTENANCE; any other reservation holds jobs,
  // not the hardware), a reason of theirs. Theirs stands, and ours is not added on top.
  const bool theirs = !ours && (node.drained() || node.down() || node.has("MAINTENANCE") ||
                                node.has("MAINT") || node.base == "FUTURE" || !node.reason.empty());
  switch (wanted.kind) {
    case Wanted::kUnknown:
      return {Action::kNone, "", "the verdicts are unknown: the node is left as it is"};
    case Wanted::kHold:
      return {Action::kNone, "", "no port has a verdict that drains: the node is left as it is"};
    case Wanted::kNothingDrains:
      if (ours) {
        return {Action::kResume, "",
                "every port it was drained for is healthy, and no other port's verdict drains"};
      }
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
    case Action::kHeldBack:
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
