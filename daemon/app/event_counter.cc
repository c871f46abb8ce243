#include "app/event_counter.h"

#include <algorithm>

#include "rdma_eventd/internal/same_text.h"
#include "rdma_eventd/protocol.h"

namespace rdma_eventd::daemon {
namespace {

bool link_up(PortState s) {
  return s == PortState::kActive || s == PortState::kActiveDefer;
}

}  // namespace

EventCounter::Ports::value_type* EventCounter::find(std::string_view device, uint32_t port) {
  Recent& recent = recent_[port % recent_.size()];
  if (recent.entry && recent.entry->first.second == port &&
      internal::same_text(recent.entry->first.first, device))
    return recent.entry;
  auto it = ports_.find(std::pair<std::string_view, uint32_t>{device, port});
  if (it == ports_.end()) {
    if (ports_.size() >= max_ports_) return nullptr;
    it = ports_.emplace(std::pair{std::string(device), port}, Counts{}).first;
  }
  recent.entry = &*it;
  return recent.entry;
}

void EventCounter::count(const Record& r) {
  // Port-scoped as filters see it: a port block, or a port_health record (about one port).
  const uint32_t port = port_scoped(r) ? r.port : 0;
  auto* entry = find(r.device, port);
  if (!entry) {
    ++untracked_;
    return;
  }
  Counts& counts = entry->second;
  const auto kind = static_cast<size_t>(r.event);
  if (kind < counts.events.size()) ++counts.events[kind];
  if (r.port_info && r.previous && link_up(r.previous->state) && !link_up(r.port_info->state)) {
    ++counts.down_transitions;
  }
}

StatusReply::EventCounts EventCounter::counts() const {
  StatusReply::EventCounts out;
  out.untracked = untracked_;
  for (const auto& [where, c] : ports_) {
    StatusReply::EventCount one{where.first, where.second, {}, c.down_transitions};
    for (size_t k = 0; k < c.events.size(); ++k) {
      if (c.events[k] == 0) continue;
      one.events.emplace_back(event_name(static_cast<EventKind>(k)), c.events[k]);
    }
    std::sort(one.events.begin(), one.events.end());
    out.ports.push_back(std::move(one));
  }
  return out;
}

}  // namespace rdma_eventd::daemon
