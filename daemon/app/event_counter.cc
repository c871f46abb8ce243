#include "app/event_counter.h"

#include <algorithm>

#include "rdma_eventd/protocol.h"

namespace rdma_eventd::daemon {
namespace {

bool link_up(PortState s) {
  return s == PortState::kActive || s == PortState::kActiveDefer;
}

}  // namespace

void EventCounter::count(const Record& r) {
  // Port-scoped as filters see it: a port block, or a port_health record (about one port).
  const RecordKey key = key_of(r);
  const uint32_t port = key.port_scoped ? r.port : 0;
  auto it = ports_.find(std::pair<std::string_view, uint32_t>{r.device, port});
  if (it == ports_.end()) {
    if (ports_.size() >= max_ports_) {
      ++untracked_;
      return;
    }
    it = ports_.emplace(std::pair{r.device, port}, Counts{}).first;
  }
  const auto kind = static_cast<size_t>(r.event);
  if (kind < it->second.events.size()) ++it->second.events[kind];
  if (r.port_info && r.previous && link_up(r.previous->state) && !link_up(r.port_info->state)) {
    ++it->second.down_transitions;
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
