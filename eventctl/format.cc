#include "format.h"

#include <cstdio>
#include <vector>

namespace rdma_eventctl {
namespace {

using namespace rdma_eventd;
using nlohmann::json;

constexpr const char* kReset = "\033[0m";

const char* severity_color(Severity s) {
  switch (s) {
    case Severity::kCritical:
      return "\033[1;31m";
    case Severity::kError:
      return "\033[31m";
    case Severity::kWarning:
      return "\033[33m";
    case Severity::kNotice:
      return "\033[36m";
    case Severity::kDebug:
      return "\033[2m";
    case Severity::kInfo:
      break;
  }
  return "";
}

const char* state_color(PortState s) {
  return s == PortState::kActive ? "\033[32m" : s == PortState::kDown ? "\033[31m" : "\033[33m";
}

std::string paint(const std::string& text, const char* color, bool on) {
  if (!on || !*color) return text;
  return color + text + kReset;
}

std::string pad(std::string s, size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

std::string rate_text(const PortInfo& p) {
  if (p.lanes == 0 || p.speed == LinkSpeed::kUnknown) return "unknown rate";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g Gb/s (%ux %s)", p.rate_gbps(), p.lanes,
                std::string(link_speed_display(p.speed)).c_str());
  return buf;
}

// A port-block field's value by its wire name, as text.
std::string field_text(const PortInfo& p, std::string_view name) {
  if (name == "link_layer") return std::string(link_layer_name(p.link_layer));
  if (name == "state") return std::string(port_state_display(p.state));
  if (name == "phys_state") return std::string(phys_state_name(p.phys_state));
  if (name == "lid") return std::to_string(p.lid);
  if (name == "sm_lid") return std::to_string(p.sm_lid);
  if (name == "sm_sl") return std::to_string(p.sm_sl);
  if (name == "lmc") return std::to_string(p.lmc);
  if (name == "active_mtu") return std::to_string(p.active_mtu);
  if (name == "width") return p.lanes ? std::to_string(p.lanes) + "x" : "unknown";
  if (name == "speed") return std::string(link_speed_name(p.speed));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", p.rate_gbps());
  return buf;
}

std::string gid_text(const GidEntry& g) {
  std::string s = g.gid + " (" + std::string(gid_type_display(g.type));
  if (!g.netdev.empty()) s += ", " + g.netdev;
  return s + ", index " + std::to_string(g.index) + ")";
}

std::string port_details(const Record& r, bool color) {
  const PortInfo& now = *r.port_info;
  const PortInfo& was = r.previous.value_or(now);
  // port_state says what the port is now, changed or not, like a link event.
  const bool link_event = r.event == EventKind::kPortActive || r.event == EventKind::kPortErr ||
                          r.event == EventKind::kPortState;
  std::vector<std::string> parts;
  const std::string state = paint(field_text(now, "state"), state_color(now.state), color);
  if (was.state != now.state) {
    parts.push_back(field_text(was, "state") + " -> " + state);
  } else if (link_event) {
    parts.push_back(state);
  }
  std::string changes;
  for (auto name : changed_fields(was, now)) {
    if (name == "state" || name == "rate_gbps") continue;
    changes += (changes.empty() ? "" : ", ") + std::string(name) + " " + field_text(was, name) +
               " -> " + field_text(now, name);
  }
  if (!changes.empty()) parts.push_back(changes);
  if (now.state == PortState::kActive && (link_event || was.state != now.state)) {
    parts.push_back(rate_text(now));
  }
  for (const auto& g : r.gids_added)
    parts.push_back("+gid " + gid_text(g));
  for (const auto& g : r.gids_removed)
    parts.push_back("-gid " + gid_text(g));
  for (const auto& p : r.pkeys_added)
    parts.push_back("+pkey " + format_pkey(p.pkey) + " (index " + std::to_string(p.index) + ")");
  for (const auto& p : r.pkeys_removed)
    parts.push_back("-pkey " + format_pkey(p.pkey) + " (index " + std::to_string(p.index) + ")");
  if (parts.empty()) parts.push_back("no change");
  std::string out;
  for (const auto& p : parts)
    out += (out.empty() ? "" : "; ") + p;
  return out;
}

std::string line(int64_t time_us, Severity sev, const std::string& where, std::string_view event,
                 const std::string& details, const std::string& tail, bool color) {
  return format_rfc3339_us(time_us) + " " +
         paint(pad(std::string(severity_name(sev)), 8), severity_color(sev), color) + " " +
         pad(where, 9) + " " + pad(std::string(event), 17) + " " + details + " " + tail;
}

std::string last_known(const std::vector<PortInfo>& ports, bool color) {
  std::string details = "last known:";
  for (size_t i = 0; i < ports.size(); ++i) {
    const PortInfo& p = ports[i];
    details += std::string(i ? ", port " : " port ") + std::to_string(p.port) + " " +
               paint(field_text(p, "state"), state_color(p.state), color);
  }
  if (ports.empty()) details += " no ports";
  return details;
}

std::string downtime_text(uint64_t ms) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.3f s", static_cast<double>(ms) / 1000.0);
  return buf;
}

}  // namespace

std::string format_record(const Record& r, bool color) {
  std::string where = r.device;
  std::string details;
  if (r.event == EventKind::kDeviceFatal) {
    details = "device fatal error; " + last_known(r.ports, color);
  } else if (r.event == EventKind::kDeviceRemoved) {
    details = "device removed; " + last_known(r.ports, color);
  } else if (r.event == EventKind::kDeviceAdded) {
    details = "device added, node GUID " + r.node_guid;
  } else if (r.event == EventKind::kDeviceRenamed) {
    details = "renamed from " + r.old_name;
  } else if (r.event == EventKind::kDeviceRecovered) {
    details = "recovered after " + downtime_text(r.downtime_ms) + " down (fatal error at seq " +
              std::to_string(r.fatal_seq) + ")";
  } else if (r.port_info) {
    where += "/" + std::to_string(r.port);
    details = port_details(r, color);
  } else {
    details =
        "async event type " + std::to_string(r.event_type) + ", element " + std::to_string(r.port);
  }
  return line(r.time_us, r.severity, where, event_name(r.event), details,
              "[seq " + std::to_string(r.seq) + "]", color);
}

std::string format_snapshot(const PortSnapshot& s, bool color) {
  const PortInfo& p = s.port;
  std::string details = paint(field_text(p, "state"), state_color(p.state), color) + ", " +
                        rate_text(p) + ", " + std::string(link_layer_name(p.link_layer));
  if (p.link_layer != LinkLayer::kEthernet) {
    details += ", lid " + std::to_string(p.lid) + ", sm_lid " + std::to_string(p.sm_lid);
  }
  details += ", " + std::to_string(s.gids.size()) + " GID" + (s.gids.size() == 1 ? "" : "s");
  details += ", " + std::to_string(s.pkeys.size()) + " P_Key" + (s.pkeys.size() == 1 ? "" : "s");
  return line(s.time_us, Severity::kInfo, s.device + "/" + std::to_string(p.port), kSnapshotEvent,
              details, "[as of seq " + std::to_string(s.seq) + "]", color);
}

std::string format_lost(const Lost& l, bool color) {
  return paint("-- lost " + std::to_string(l.records) + " record" + (l.records == 1 ? "" : "s") +
                   " between seq " + std::to_string(l.first_seq) + " and " +
                   std::to_string(l.last_seq) + ": this monitor read too slowly --",
               "\033[1;33m", color);
}

std::string format_status(const json& reply, bool color) {
  std::vector<std::vector<std::string>> rows = {
      {"DEVICE", "PORT", "STATE", "PHYS", "LINK", "RATE", "LID", "SM_LID", "GIDS", "PKEYS"}};
  std::vector<PortState> states = {PortState::kUnknown};
  for (const auto& d : reply.value("devices", json::array())) {
    for (const auto& p : d.value("ports", json::array())) {
      const auto state = port_state_from_name(p.value("state", "")).value_or(PortState::kUnknown);
      char rate[32];
      std::snprintf(rate, sizeof rate, "%g Gb/s", p.value("rate_gbps", 0.0));
      rows.push_back({d.value("device", ""), std::to_string(p.value("port", 0)),
                      std::string(port_state_display(state)), p.value("phys_state", ""),
                      p.value("link_layer", ""), rate, std::to_string(p.value("lid", 0)),
                      std::to_string(p.value("sm_lid", 0)), std::to_string(p.value("gids", 0)),
                      std::to_string(p.value("pkeys", 0))});
      states.push_back(state);
    }
  }
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i)
      width[i] = std::max(width[i], row[i].size());
  }
  std::string out;
  for (size_t r = 0; r < rows.size(); ++r) {
    std::string text;
    for (size_t i = 0; i < rows[r].size(); ++i) {
      std::string cell = i + 1 < rows[r].size() ? pad(rows[r][i], width[i] + 2) : rows[r][i];
      if (i == 2 && r > 0) cell = paint(cell, state_color(states[r]), color);
      text += cell;
    }
    out += text + "\n";
  }
  if (rows.size() == 1) out += "(no RDMA device open)\n";
  const json daemon = reply.value("daemon", json::object());
  const json counters = reply.value("counters", json::object());
  const json journal = reply.value("journal", json::object());
  const json subs = reply.value("subscribers", json::object());
  const json ring = reply.value("ring", json::object());
  char buf[512];
  std::snprintf(buf, sizeof buf, "\nrdma-eventd %s, pid %lld, up %llus, stream %s, seq %llu\n",
                daemon.value("version", "?").c_str(),
                static_cast<long long>(daemon.value("pid", 0)),
                static_cast<unsigned long long>(daemon.value("uptime_s", 0ull)),
                daemon.value("stream", "?").c_str(),
                static_cast<unsigned long long>(reply.value("seq", 0ull)));
  out += buf;
  std::snprintf(buf, sizeof buf,
                "events: %llu read, %llu acked; %llu records, %llu query failures\n",
                static_cast<unsigned long long>(counters.value("events_read", 0ull)),
                static_cast<unsigned long long>(counters.value("events_acked", 0ull)),
                static_cast<unsigned long long>(counters.value("records", 0ull)),
                static_cast<unsigned long long>(counters.value("query_failures", 0ull)));
  out += buf;
  if (journal.value("enabled", false)) {
    std::snprintf(buf, sizeof buf, "journal: %llu written, %llu failed, %llu dropped\n",
                  static_cast<unsigned long long>(journal.value("written", 0ull)),
                  static_cast<unsigned long long>(journal.value("failed", 0ull)),
                  static_cast<unsigned long long>(journal.value("dropped", 0ull)));
    out += buf;
  } else {
    out += "journal: off\n";
  }
  std::snprintf(buf, sizeof buf,
                "subscribers: %llu of %llu; %llu records sent, %llu lost, %llu bytes queued\n",
                static_cast<unsigned long long>(subs.value("count", 0ull)),
                static_cast<unsigned long long>(subs.value("max", 0ull)),
                static_cast<unsigned long long>(subs.value("records_sent", 0ull)),
                static_cast<unsigned long long>(subs.value("records_lost", 0ull)),
                static_cast<unsigned long long>(subs.value("bytes_queued", 0ull)));
  out += buf;
  std::snprintf(buf, sizeof buf, "ring: %llu of %llu records (seq %llu to %llu)\n",
                static_cast<unsigned long long>(ring.value("records", 0ull)),
                static_cast<unsigned long long>(ring.value("capacity", 0ull)),
                static_cast<unsigned long long>(ring.value("first_seq", 0ull)),
                static_cast<unsigned long long>(ring.value("last_seq", 0ull)));
  out += buf;
  return out;
}

}  // namespace rdma_eventctl
