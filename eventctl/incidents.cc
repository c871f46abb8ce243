#include "incidents.h"

#include <algorithm>
#include <cstdio>

#include "rdma_eventd/record.h"

namespace rdma_eventctl {
namespace {

constexpr std::string_view kPortErr = "port_err";
constexpr std::string_view kPortHealth = "port_health";
constexpr std::string_view kDeviceFatal = "device_fatal";
constexpr std::string_view kDeviceRemoved = "device_removed";
constexpr std::string_view kSmChange = "sm_change";
constexpr std::string_view kLidChange = "lid_change";
constexpr std::string_view kClientReregister = "client_reregister";
constexpr std::string_view kModuleError = "module_error";
constexpr std::string_view kModuleDisabled = "module_disabled";
constexpr std::string_view kAppReport = "app_report";

// Records that say something about a host's link to the fabric: what makes a fabric incident
// when enough hosts have them.
bool fabric_signal(std::string_view event) {
  return event == kPortErr || event == kSmChange || event == kLidChange ||
         event == kClientReregister;
}

// Whether the record is about a port (not its device as a whole, not an application's claim).
bool about_a_port(std::string_view event, uint32_t port) {
  return port != 0 && event != kDeviceFatal && event != kDeviceRemoved && event != kAppReport;
}

uint64_t count_of(const std::map<std::string, uint64_t>& m, std::string_view key) {
  const auto it = m.find(std::string(key));
  return it == m.end() ? 0 : it->second;
}

std::string spread_text(int64_t us) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", static_cast<double>(us) / 1e6);
  return text;
}

std::string plural(uint64_t n, std::string_view one, std::string_view many) {
  return std::to_string(n) + " " + std::string(n == 1 ? one : many);
}

// "3 port_err, 1 port_health flapping" for one host.
std::string counts_text(const IncidentHost& h) {
  std::string text;
  for (const auto& [name, n] : h.events) {
    text += (text.empty() ? "" : ", ") + std::to_string(n) + " " + name;
  }
  return text;
}

void merge_into(Incident& into, Incident& from) {
  into.start_us = std::min(into.start_us, from.start_us);
  into.end_us = std::max(into.end_us, from.end_us);
  into.records += from.records;
  for (auto& [name, n] : from.events)
    into.events[name] += n;
  for (auto& [name, host] : from.hosts) {
    auto [it, fresh] = into.hosts.try_emplace(name, std::move(host));
    if (fresh) continue;
    IncidentHost& h = it->second;
    h.devices.merge(host.devices);
    h.ports.merge(host.ports);
    for (auto& [event, n] : host.events)
      h.events[event] += n;
    h.first_us = std::min(h.first_us, host.first_us);
    h.last_us = std::max(h.last_us, host.last_us);
  }
  if (from.downs) {
    into.first_down_us =
        into.downs ? std::min(into.first_down_us, from.first_down_us) : from.first_down_us;
    into.last_down_us = std::max(into.last_down_us, from.last_down_us);
    into.downs += from.downs;
  }
}

void add_to(Incident& incident, const FaultInput& in) {
  ++incident.records;
  incident.start_us = std::min(incident.start_us, in.time_us);
  incident.end_us = std::max(incident.end_us, in.time_us);
  const std::string name =
      in.event == kPortHealth ? "port_health " + std::string(in.health) : std::string(in.event);
  ++incident.events[name];
  auto [it, fresh] = incident.hosts.try_emplace(std::string(in.host));
  IncidentHost& h = it->second;
  if (fresh) h.first_us = h.last_us = in.time_us;
  h.first_us = std::min(h.first_us, in.time_us);
  h.last_us = std::max(h.last_us, in.time_us);
  ++h.events[name];
  if (!in.device.empty()) h.devices.emplace(in.device);
  if (about_a_port(in.event, in.port)) {
    h.ports.emplace(std::string(in.device) + "/" + std::to_string(in.port));
  }
  if (in.event == kPortErr) {
    incident.first_down_us =
        incident.downs ? std::min(incident.first_down_us, in.time_us) : in.time_us;
    incident.last_down_us = std::max(incident.last_down_us, in.time_us);
    ++incident.downs;
  }
}

// What makes a host's part a host problem rather than a port's: its device failed or went, or
// several of its ports had faults at once. Empty when none.
std::string host_evidence(const std::string& name, const IncidentHost& h) {
  std::string devices;
  for (const auto& d : h.devices)
    devices += (devices.empty() ? "" : ", ") + d;
  if (count_of(h.events, kDeviceFatal) || count_of(h.events, "port_health fatal")) {
    return name + ": device fatal (" + devices + "): the adapter failed";
  }
  if (count_of(h.events, kDeviceRemoved) || count_of(h.events, "port_health gone")) {
    return name + ": device gone (" + devices + "): the adapter or its driver went away";
  }
  if (h.ports.size() >= 2) {
    std::string ports;
    for (const auto& p : h.ports)
      ports += (ports.empty() ? "" : ", ") + p;
    return name + ": " + std::to_string(h.ports.size()) + " ports at once (" + ports +
           "): the host or its adapter";
  }
  return {};
}

std::string port_evidence(const std::string& name, const IncidentHost& h) {
  const std::string where = !h.ports.empty()     ? *h.ports.begin()
                            : !h.devices.empty() ? *h.devices.begin()
                                                 : std::string("-");
  std::string text = name + " " + where + ": " + counts_text(h);
  if (count_of(h.events, kModuleError) || count_of(h.events, kModuleDisabled)) {
    text += ": module errors, the cable or transceiver";
  } else if (count_of(h.events, kPortErr) >= 2 || count_of(h.events, "port_health flapping")) {
    text += ": the link flaps, the cable or transceiver";
  } else if (count_of(h.events, kPortErr)) {
    text += ": one link lost";
  }
  return text;
}

}  // namespace

std::string incident_time(int64_t us) {
  const std::string full = rdma_eventd::format_rfc3339_us(us);  // ...30.123456Z
  return full.size() > 4 ? full.substr(0, full.size() - 4) + "Z" : full;
}

std::string incident_duration(int64_t us) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", static_cast<double>(us) / 1e6);
  return text;
}

const std::vector<std::string_view>& fault_events() {
  static const std::vector<std::string_view> events = {
      kPortErr,   kPortHealth,       kDeviceFatal, kDeviceRemoved,  kSmChange,
      kLidChange, kClientReregister, kModuleError, kModuleDisabled, kAppReport};
  return events;
}

bool is_fault(std::string_view event, std::string_view health) {
  if (event == kPortHealth) return !health.empty() && health != "healthy";
  const auto& events = fault_events();
  return std::find(events.begin(), events.end(), event) != events.end();
}

std::string_view class_name(IncidentClass c) {
  switch (c) {
    case IncidentClass::kFabric:
      return "fabric";
    case IncidentClass::kHost:
      return "host";
    case IncidentClass::kPort:
      return "port";
    case IncidentClass::kApplication:
      return "application";
  }
  return "port";
}

void classify(Incident& incident, size_t fabric_hosts) {
  size_t losing = 0;  // hosts with a fabric signal
  for (const auto& [name, h] : incident.hosts) {
    for (const auto& [event, n] : h.events) {
      if (fabric_signal(event)) {
        ++losing;
        break;
      }
    }
  }
  if (losing >= fabric_hosts) {
    incident.cls = IncidentClass::kFabric;
    std::string text = plural(losing, "host", "hosts");
    if (incident.downs) {
      text += ", " + plural(incident.downs, "port", "ports") + " down within " +
              spread_text(incident.last_down_us - incident.first_down_us);
    }
    std::string changes;
    for (const auto event : {kSmChange, kLidChange, kClientReregister}) {
      if (const uint64_t n = count_of(incident.events, event)) {
        changes += (changes.empty() ? "" : ", ") + std::to_string(n) + " " + std::string(event);
      }
    }
    if (!changes.empty()) text += "; " + changes;
    if (count_of(incident.events, kSmChange)) {
      text += ": subnet manager failover";
    } else if (count_of(incident.events, kClientReregister) ||
               count_of(incident.events, kLidChange)) {
      text += ": the subnet manager swept the fabric";
    } else {
      text += ": links lost together, a switch or its links";
    }
    incident.evidence = text;
    return;
  }

  const uint64_t reports = count_of(incident.events, kAppReport);
  if (reports == incident.records) {
    incident.cls = IncidentClass::kApplication;
    incident.evidence = plural(reports, "app_report", "app_reports") + " from " +
                        plural(incident.hosts.size(), "host", "hosts") +
                        ", no fault the daemon saw itself";
    return;
  }

  // The worst host decides; hosts with application reports only say nothing about the fabric.
  std::string prefix;
  if (incident.hosts.size() > 1) {
    prefix = plural(incident.hosts.size(), "host", "hosts") + " (fewer than the " +
             std::to_string(fabric_hosts) + " of a fabric incident); ";
  }
  for (const auto& [name, h] : incident.hosts) {
    std::string evidence = host_evidence(name, h);
    if (!evidence.empty()) {
      incident.cls = IncidentClass::kHost;
      incident.evidence = prefix + evidence;
      return;
    }
  }
  incident.cls = IncidentClass::kPort;
  for (const auto& [name, h] : incident.hosts) {
    uint64_t own = 0;  // faults the daemon saw itself on this host
    for (const auto& [event, n] : h.events)
      own += event == kAppReport ? 0 : n;
    if (own) {
      incident.evidence = prefix + port_evidence(name, h);
      return;
    }
  }
}

IncidentGrouper::IncidentGrouper(IncidentOptions options, Emit emit)
    : options_(options), emit_(std::move(emit)), seen_(options.runs_per_stream) {}

bool IncidentGrouper::add(const FaultInput& in) {
  if (seen_.seen_before(in.stream, in.seq)) return false;
  if (!is_fault(in.event, in.health)) return false;
  const int64_t t = in.time_us;
  const int64_t gap = options_.gap_us;
  // The open incidents this record is within the gap of: it joins them, and joins them together.
  Incident* joined = nullptr;
  for (auto it = open_.begin(); it != open_.end();) {
    if (t < it->start_us - gap || t > it->end_us + gap) {
      ++it;
      continue;
    }
    if (!joined) {
      joined = &*it;
      ++it;
      continue;
    }
    merge_into(*joined, *it);
    it = open_.erase(it);
  }
  if (!joined) {
    Incident fresh;
    fresh.start_us = fresh.end_us = t;
    open_.push_back(std::move(fresh));
    joined = &open_.back();
  }
  add_to(*joined, in);
  std::sort(open_.begin(), open_.end(),
            [](const Incident& a, const Incident& b) { return a.start_us < b.start_us; });
  newest_us_ = std::max(newest_us_, t);
  close_before(newest_us_ - gap - options_.reorder_us);
  return true;
}

void IncidentGrouper::close_before(int64_t watermark_us) {
  while (!open_.empty() && open_.front().end_us < watermark_us) {
    // open_ is by start; one that started earlier but ends later holds the rest back: they give
    // out in start order.
    give_out(open_.front());
    open_.erase(open_.begin());
  }
}

void IncidentGrouper::give_out(Incident& incident) {
  classify(incident, options_.fabric_hosts);
  emit_(std::move(incident));
}

void IncidentGrouper::finish() {
  for (auto& incident : open_)
    give_out(incident);
  open_.clear();
}

}  // namespace rdma_eventctl
