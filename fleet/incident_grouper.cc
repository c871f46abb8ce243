#include "incident_grouper.h"

#include <algorithm>
#include <limits>

namespace rdma_eventd_fleet {
namespace {

// The key of a fault's subject: its kind, the host, and the device and port where they matter.
std::string subject_key(Subject s, std::string_view host, std::string_view device, uint32_t port) {
  std::string key(1, static_cast<char>(s));
  key += host;
  if (s == Subject::kApplication) return key;
  key += '\0';
  key += device;
  if (s == Subject::kDevice) return key;
  key += '\0';
  key.append(reinterpret_cast<const char*>(&port), sizeof port);
  return key;
}

std::string port_name(std::string_view device, uint32_t port) {
  return std::string(device) + "/" + std::to_string(port);
}

}  // namespace

IncidentGrouper::IncidentGrouper(IncidentOptions options, Emit emit)
    : options_(options), emit_(std::move(emit)), seen_(options.runs_per_stream) {}

bool IncidentGrouper::add(const FaultInput& in) {
  if (seen_.seen_before(in.stream, in.seq)) return false;
  if (!is_fault(in.event, in.health, in.link_change)) return false;
  Held h{in.time_us,
         arrivals_++,
         std::string(in.host),
         std::string(in.event),
         std::string(in.device),
         std::string(in.health),
         std::string(in.link_change),
         in.port};
  if (in.time_us <= taken_up_to_us_) {
    // Later than reorder_us out of order: taken now, as if it came at the time already reached
    // (its own time still widens its incident and host).
    take(h, taken_up_to_us_, in.time_us < taken_up_to_us_);
    return true;
  }
  newest_us_ = std::max(newest_us_, in.time_us);
  waiting_.push(std::move(h));
  release(time_minus(newest_us_, options_.reorder_us));
  return true;
}

void IncidentGrouper::release(int64_t up_to_us) {
  while (!waiting_.empty() && waiting_.top().time_us <= up_to_us) {
    take(waiting_.top(), waiting_.top().time_us);
    waiting_.pop();
  }
  taken_up_to_us_ = std::max(taken_up_to_us_, up_to_us);
  // Nothing still to come is before this: the episodes that ended by then end now, so that an
  // incident is given out as the input moves on, not at its next fault.
  end_episodes_before(taken_up_to_us_);
}

IncidentGrouper::Open& IncidentGrouper::incident_for_new_episode(int64_t at_us) {
  if (joinable_) {
    Open& open = incidents_.at(*joinable_);
    if (at_us <= time_plus(open.latest_beginning_us, options_.gap_us)) return open;
  }
  const uint64_t number = next_incident_++;
  Open& open = incidents_
                   .try_emplace(number, Open{{},
                                             0,
                                             at_us,
                                             HostsWithin(options_.fabric_window_us),
                                             HostsWithin(options_.fabric_window_us)})
                   .first->second;
  joinable_ = number;
  return open;
}

namespace {

void add_to(Incident& incident, const std::string& host, std::string_view event,
            std::string_view device, uint32_t port, const std::string& name, int64_t t) {
  if (incident.records++ == 0) incident.start_us = incident.end_us = t;
  incident.start_us = std::min(incident.start_us, t);
  incident.end_us = std::max(incident.end_us, t);
  ++incident.events[name];
  auto [it, fresh] = incident.hosts.try_emplace(host);
  IncidentHost& h = it->second;
  if (fresh) h.first_us = h.last_us = t;
  h.first_us = std::min(h.first_us, t);
  h.last_us = std::max(h.last_us, t);
  ++h.events[name];
  if (!device.empty()) h.devices.emplace(device);
  if (is_port_fault(event, port)) h.ports.emplace(port_name(device, port));
  if (port != 0 && is_sm_notice(event)) h.sm_ports.emplace(port_name(device, port));
  if (is_link_loss(event)) {
    incident.first_down_us = incident.downs ? std::min(incident.first_down_us, t) : t;
    incident.last_down_us = incident.downs ? std::max(incident.last_down_us, t) : t;
    ++incident.downs;
  }
}

}  // namespace

void IncidentGrouper::take(const Held& f, int64_t at_us, bool late) {
  end_episodes_before(at_us);
  const Subject subject = subject_of(f.event);
  auto [it, fresh] = episodes_.try_emplace(subject_key(subject, f.host, f.device, f.port));
  Episode& episode = it->second;
  Open* open = nullptr;
  if (fresh) {
    open = &incident_for_new_episode(at_us);
    episode.incident = joinable_.value();
    ++open->episodes;
    open->latest_beginning_us = std::max(open->latest_beginning_us, at_us);
  } else {
    open = &incidents_.at(episode.incident);
    endings_.erase({time_plus(episode.last_us, options_.gap_us), &it->first});
  }
  episode.last_us = fresh ? at_us : std::max(episode.last_us, at_us);
  endings_.emplace(time_plus(episode.last_us, options_.gap_us), &it->first);
  add_to(open->incident, f.host, f.event, f.device, f.port,
         counted_name(f.event, f.health, f.link_change), f.time_us);
  open->incident.late_records += late;
  const std::string* host = &open->incident.hosts.find(f.host)->first;
  if (is_link_loss(f.event) && !episode.lost_link) {
    episode.lost_link = true;
    open->link_losses.add(at_us, host);
  }
  if (is_sm_notice(f.event) && !episode.noticed) {
    episode.noticed = true;
    open->sm_notices.add(at_us, host);
  }
}

void IncidentGrouper::end_episodes_before(int64_t time_us) {
  std::vector<Incident> ended;
  while (!endings_.empty() && endings_.begin()->first < time_us) {
    const auto episode = episodes_.find(*endings_.begin()->second);
    endings_.erase(endings_.begin());
    const uint64_t number = episode->second.incident;
    episodes_.erase(episode);
    auto open = incidents_.find(number);
    if (--open->second.episodes > 0) continue;
    open->second.incident.link_losses = open->second.link_losses.best();
    open->second.incident.sm_notices = open->second.sm_notices.best();
    ended.push_back(std::move(open->second.incident));
    incidents_.erase(open);
    if (joinable_ == number) joinable_.reset();
  }
  give_out(ended);
}

void IncidentGrouper::give_out(std::vector<Incident>& ended) {
  // In the order they end (the earlier start first among equals, then by their hosts' names):
  // the order in which a later fault could no longer have joined them. One order for one
  // input, whatever the allocator did: the text and the JSON of two runs are the same bytes.
  std::stable_sort(ended.begin(), ended.end(), [](const Incident& a, const Incident& b) {
    if (a.end_us != b.end_us) return a.end_us < b.end_us;
    if (a.start_us != b.start_us) return a.start_us < b.start_us;
    return std::lexicographical_compare(
        a.hosts.begin(), a.hosts.end(), b.hosts.begin(), b.hosts.end(),
        [](const auto& x, const auto& y) { return x.first < y.first; });
  });
  for (auto& incident : ended) {
    classify(incident, options_);
    emit_(std::move(incident));
  }
}

void IncidentGrouper::finish() {
  release(std::numeric_limits<int64_t>::max());
  std::vector<Incident> ended;
  for (auto& [number, open] : incidents_) {
    open.incident.link_losses = open.link_losses.best();
    open.incident.sm_notices = open.sm_notices.best();
    ended.push_back(std::move(open.incident));
  }
  incidents_.clear();
  episodes_.clear();
  endings_.clear();
  joinable_.reset();
  give_out(ended);
}

}  // namespace rdma_eventd_fleet
