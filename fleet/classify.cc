// An incident's class and the evidence for it (docs/fleet.md, section 5, has the table).
#include <cstdio>

#include "faults.h"
#include "incident.h"
#include "rdma_eventd/internal/enum_names.h"
#include "rdma_eventd/record.h"
#include "text_lists.h"

namespace rdma_eventd_fleet {
namespace {

uint64_t count_of(const std::map<std::string, uint64_t>& m, std::string_view key) {
  const auto it = m.find(std::string(key));
  return it == m.end() ? 0 : it->second;
}

std::string plural(uint64_t n, std::string_view one, std::string_view many) {
  return std::to_string(n) + " " + std::string(n == 1 ? one : many);
}

// "2 sm_change, 1 client_reregister": the SM notices of the incident, or "".
std::string notices_text(const Incident& incident) {
  std::string text;
  for (const auto event : {"sm_change", "lid_change", "client_reregister"}) {
    if (const uint64_t n = count_of(incident.events, event))
      text += (text.empty() ? "" : ", ") + std::to_string(n) + " " + event;
  }
  return text;
}

bool has_port_faults(const IncidentHost& h) {
  for (const auto& [event, n] : h.events) {
    const std::string_view name(event);
    if (subject_of(name.substr(0, name.find(' '))) == Subject::kPort) return true;
  }
  return false;
}

bool has_sm_notices(const IncidentHost& h) {
  for (const auto& [event, n] : h.events)
    if (is_sm_notice(event)) return true;
  return false;
}

// What makes a host's part a host problem rather than a port's: its device failed or went, or
// several of its ports lost their link or got a bad verdict at once (SM notices do not count:
// a subnet manager's failover reaches every rail of a host). Empty when none.
std::string host_evidence(const std::string& name, const IncidentHost& h) {
  if (count_of(h.events, "device_fatal") || count_of(h.events, "port_health fatal")) {
    return name + ": device fatal (" + joined(h.devices, ", ") + "): the adapter failed";
  }
  // The adapter's own health reporters (devlink): its firmware or its queues reported errors.
  if (count_of(h.events, "devlink_health error") ||
      count_of(h.events, "devlink_health error_again") ||
      count_of(h.events, "devlink_health found_in_error") ||
      count_of(h.events, "devlink_health recovery_refused")) {
    return name + ": adapter health reporters in error (" +
           (h.devices.empty() ? std::string("no RDMA device") : joined(h.devices, ", ")) +
           "): the adapter's firmware or queues (devlink health)";
  }
  if (count_of(h.events, "device_removed") || count_of(h.events, "port_health gone")) {
    return name + ": device gone (" + joined(h.devices, ", ") +
           "): the adapter or its driver went away";
  }
  if (h.ports.size() >= 2) {
    return name + ": " + std::to_string(h.ports.size()) + " ports at once (" +
           joined(h.ports, ", ") + "): the host or its adapter";
  }
  return {};
}

std::string port_evidence(const std::string& name, const IncidentHost& h) {
  const std::string where = !h.ports.empty()     ? *h.ports.begin()
                            : !h.devices.empty() ? *h.devices.begin()
                                                 : std::string("-");
  std::string text = name + " " + where + ": " + counts_text(h.events);
  // Downs the counters saw (link_downed) are downs like those with an event.
  const uint64_t hidden_downs = count_of(h.events, "link_quality hidden_down");
  const uint64_t downs = count_of(h.events, "port_err") + hidden_downs;
  if (count_of(h.events, "module_error") || count_of(h.events, "module_disabled")) {
    text += ": module errors, the cable or transceiver";
  } else if (downs >= 2 || count_of(h.events, "port_health flapping")) {
    text += ": the link flaps, the cable or transceiver";
  } else if (count_of(h.events, "link_quality bad")) {
    text += ": errors on the link (its error counters), the cable or transceiver";
  } else if (hidden_downs) {
    text += ": one link lost too briefly for an event (link_downed)";
  } else if (downs) {
    text += ": one link lost";
  }
  return text;
}

std::string sm_evidence(const std::string& name, const IncidentHost& h) {
  return name + " " + joined(h.sm_ports, ", ") + ": " + counts_text(h.events) +
         ": the subnet manager changed the port's SM, LID or registration; no link lost";
}

// The fabric window as set: "2 s", "500 ms".
std::string window_text(int64_t us) {
  if (us % 1'000'000 == 0) return std::to_string(us / 1'000'000) + " s";
  if (us % 1000 == 0) return std::to_string(us / 1000) + " ms";
  return std::to_string(us) + " us";
}

std::string fabric_evidence(const Incident& incident, const IncidentOptions& options) {
  const Together& links = incident.link_losses;
  const Together& notices = incident.sm_notices;
  std::string text;
  if (links.hosts >= options.fabric_hosts) {
    text = plural(links.hosts, "host", "hosts") + ", " + plural(links.signals, "port", "ports") +
           " down within " + incident_duration(links.spread_us);
  } else {
    text = plural(notices.hosts, "host", "hosts") + " with SM notices within " +
           incident_duration(notices.spread_us);
  }
  const std::string notices_seen = notices_text(incident);
  if (!notices_seen.empty()) text += "; " + notices_seen;
  if (count_of(incident.events, "sm_change")) return text + ": subnet manager failover";
  if (!notices_seen.empty()) return text + ": the subnet manager swept the fabric";
  return text + ": links lost together, a switch or its links";
}

// For an incident of several hosts that is not the fabric: why not.
std::string not_fabric_prefix(const Incident& incident, const IncidentOptions& options) {
  size_t signalling = 0;  // hosts that lost a link or saw an SM notice
  for (const auto& [name, h] : incident.hosts) {
    if (count_of(h.events, "port_err") || has_sm_notices(h)) ++signalling;
  }
  if (signalling >= options.fabric_hosts) {
    const size_t together = std::max(incident.link_losses.hosts, incident.sm_notices.hosts);
    return plural(signalling, "host", "hosts") +
           " lost links or saw SM notices, not together: at most " + std::to_string(together) +
           " within " + window_text(options.fabric_window_us) + " (a fabric incident needs " +
           std::to_string(options.fabric_hosts) + "); ";
  }
  if (incident.hosts.size() < 2) return {};
  std::string text = plural(incident.hosts.size(), "host", "hosts");
  if (signalling != incident.hosts.size()) {
    text += ", " + std::to_string(signalling) + " losing links or seeing SM notices";
  }
  return text + " (fewer than the " + std::to_string(options.fabric_hosts) +
         " of a fabric incident); ";
}

}  // namespace

std::string_view class_name(IncidentClass c) {
  // In IncidentClass's order.
  static constexpr std::string_view kNames[] = {"fabric", "host", "port", "sm", "application"};
  return rdma_eventd::internal::enum_name(kNames, c, "port");
}

std::string incident_time(int64_t us) {
  const std::string full = rdma_eventd::format_rfc3339_us(us);  // ...30.123456Z
  return full.size() > 4 ? full.substr(0, full.size() - 4) + "Z" : full;
}

std::string incident_duration(int64_t us) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", static_cast<double>(us) / 1e6);
  return text;
}

void classify(Incident& incident, const IncidentOptions& options) {
  if (incident.link_losses.hosts >= options.fabric_hosts ||
      incident.sm_notices.hosts >= options.fabric_hosts) {
    incident.cls = IncidentClass::kFabric;
    incident.evidence = fabric_evidence(incident, options);
    return;
  }

  const uint64_t reports = count_of(incident.events, "app_report");
  if (reports == incident.records) {
    incident.cls = IncidentClass::kApplication;
    incident.evidence = plural(reports, "app_report", "app_reports") + " from " +
                        plural(incident.hosts.size(), "host", "hosts") +
                        ", no fault the daemon saw itself";
    return;
  }

  // The worst host decides: a failed device or several ports, then a port, then SM notices;
  // hosts with application reports only say nothing about the fabric.
  const std::string prefix = not_fabric_prefix(incident, options);
  for (const auto& [name, h] : incident.hosts) {
    std::string evidence = host_evidence(name, h);
    if (!evidence.empty()) {
      incident.cls = IncidentClass::kHost;
      incident.evidence = prefix + evidence;
      return;
    }
  }
  for (const auto& [name, h] : incident.hosts) {
    if (has_port_faults(h)) {
      incident.cls = IncidentClass::kPort;
      incident.evidence = prefix + port_evidence(name, h);
      return;
    }
  }
  for (const auto& [name, h] : incident.hosts) {
    if (has_sm_notices(h)) {
      incident.cls = IncidentClass::kSm;
      incident.evidence = prefix + sm_evidence(name, h);
      return;
    }
  }
}

}  // namespace rdma_eventd_fleet
