#include "incidents_output.h"

#include <cstdio>
#include <set>

#include "escape.h"
#include "rdma_eventd/record.h"
#include "text_lists.h"

namespace rdma_eventd_fleet {
namespace {

template <typename Container>
nlohmann::ordered_json json_names(const Container& names) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& name : names)
    out.push_back(json_text(name));
  return out;
}

nlohmann::ordered_json json_counts(const std::map<std::string, uint64_t>& events) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const auto& [name, n] : events)
    out[json_text(name)] = n;
  return out;
}

nlohmann::ordered_json together_json(const Together& t) {
  return {{"hosts", t.hosts},
          {"ports", t.signals},
          {"within_s", static_cast<double>(t.spread_us) / 1e6}};
}

}  // namespace

std::string format_incident(const Incident& incident, size_t max_hosts) {
  std::string text = incident_time(incident.start_us) + "  " +
                     incident_duration(time_span(incident.start_us, incident.end_us)) + "  " +
                     std::string(class_name(incident.cls)) + "  " + printable(incident.evidence) +
                     "\n";
  size_t shown = 0;
  for (const auto& [name, h] : incident.hosts) {
    if (shown++ == max_hosts) {
      text += "  ... and " + std::to_string(incident.hosts.size() - max_hosts) + " more hosts\n";
      break;
    }
    // The ports with faults or SM notices, else the devices (device-wide records).
    std::set<std::string> ports = h.ports;
    ports.insert(h.sm_ports.begin(), h.sm_ports.end());
    const std::string where = ports.empty() ? joined(h.devices, ",") : joined(ports, ",");
    text += "  " + (name.empty() ? std::string("-") : printable(name)) + "  " + printable(where) +
            "  " + printable(counts_text(h.events)) + "\n";
  }
  return text;
}

nlohmann::ordered_json incident_json(const Incident& incident) {
  using nlohmann::ordered_json;
  ordered_json hosts = ordered_json::array();
  for (const auto& [name, h] : incident.hosts) {
    hosts.push_back({{"host", json_text(name)},
                     {"first", rdma_eventd::format_rfc3339_us(h.first_us)},
                     {"last", rdma_eventd::format_rfc3339_us(h.last_us)},
                     {"devices", json_names(h.devices)},
                     {"ports", json_names(h.ports)},
                     {"sm_ports", json_names(h.sm_ports)},
                     {"events", json_counts(h.events)}});
  }
  return {{"start", rdma_eventd::format_rfc3339_us(incident.start_us)},
          {"end", rdma_eventd::format_rfc3339_us(incident.end_us)},
          {"duration_s", static_cast<double>(time_span(incident.start_us, incident.end_us)) / 1e6},
          {"class", class_name(incident.cls)},
          {"evidence", json_text(incident.evidence)},
          {"records", incident.records},
          {"late_records", incident.late_records},
          {"port_downs", incident.downs},
          {"link_losses", together_json(incident.link_losses)},
          {"sm_notices", together_json(incident.sm_notices)},
          {"events", json_counts(incident.events)},
          {"hosts", std::move(hosts)}};
}

}  // namespace rdma_eventd_fleet
