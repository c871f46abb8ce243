#include "incidents_output.h"

#include <cstdio>

#include "rdma_eventd/record.h"

namespace rdma_eventctl {
namespace {

template <typename Container>
std::string joined(const Container& items) {
  std::string text;
  for (const auto& item : items)
    text += (text.empty() ? "" : ",") + item;
  return text;
}

std::string counts(const std::map<std::string, uint64_t>& events) {
  std::string text;
  for (const auto& [name, n] : events)
    text += (text.empty() ? "" : ", ") + std::to_string(n) + " " + name;
  return text;
}

}  // namespace

std::string format_incident(const Incident& incident, size_t max_hosts) {
  std::string text = incident_time(incident.start_us) + "  " +
                     incident_duration(incident.end_us - incident.start_us) + "  " +
                     std::string(class_name(incident.cls)) + "  " + incident.evidence + "\n";
  size_t shown = 0;
  for (const auto& [name, h] : incident.hosts) {
    if (shown++ == max_hosts) {
      text += "  ... and " + std::to_string(incident.hosts.size() - max_hosts) + " more hosts\n";
      break;
    }
    const std::string where = h.ports.empty() ? joined(h.devices) : joined(h.ports);
    text += "  " + (name.empty() ? std::string("-") : name) + "  " + where + "  " +
            counts(h.events) + "\n";
  }
  return text;
}

nlohmann::ordered_json incident_json(const Incident& incident) {
  using nlohmann::ordered_json;
  ordered_json hosts = ordered_json::array();
  for (const auto& [name, h] : incident.hosts) {
    hosts.push_back({{"host", name},
                     {"first", rdma_eventd::format_rfc3339_us(h.first_us)},
                     {"last", rdma_eventd::format_rfc3339_us(h.last_us)},
                     {"devices", h.devices},
                     {"ports", h.ports},
                     {"events", h.events}});
  }
  return {{"start", rdma_eventd::format_rfc3339_us(incident.start_us)},
          {"end", rdma_eventd::format_rfc3339_us(incident.end_us)},
          {"duration_s", static_cast<double>(incident.end_us - incident.start_us) / 1e6},
          {"class", class_name(incident.cls)},
          {"evidence", incident.evidence},
          {"records", incident.records},
          {"port_downs", incident.downs},
          {"events", incident.events},
          {"hosts", std::move(hosts)}};
}

}  // namespace rdma_eventctl
