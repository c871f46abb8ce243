#include "incidents_output.h"

#include <cstdio>

#include "rdma_eventd/record.h"

namespace rdma_eventctl {
namespace {

// "2026-11-28T10:15:30.123Z": milliseconds are enough for a person.
std::string time_ms(int64_t us) {
  const std::string full = rdma_eventd::format_rfc3339_us(us);  // ...30.123456Z
  return full.size() > 4 ? full.substr(0, full.size() - 4) + "Z" : full;
}

std::string duration(int64_t us) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", static_cast<double>(us) / 1e6);
  return text;
}

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
  std::string text = time_ms(incident.start_us) + "  " +
                     duration(incident.end_us - incident.start_us) + "  " +
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
