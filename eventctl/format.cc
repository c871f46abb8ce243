#include "format.h"

#include <algorithm>
#include <array>
#include <vector>

#include "rdma_eventd/internal/enum_names.h"
#include "schema/record_text.h"

namespace rdma_eventctl {
namespace {

using namespace rdma_eventd;

constexpr const char* kReset = "\033[0m";

const char* severity_color(Severity s) {
  // Indexed by Severity: debug, info, notice, warning, error, critical.
  static constexpr std::array<const char*, 6> kColors = {"\033[2m",  "",         "\033[36m",
                                                         "\033[33m", "\033[31m", "\033[1;31m"};
  return internal::enum_name(kColors, s, "");
}

const char* state_color(PortState s) {
  return s == PortState::kActive ? "\033[32m" : s == PortState::kDown ? "\033[31m" : "\033[33m";
}

std::string paint(const std::string& text, const char* color, bool on) {
  if (!on || !*color) return text;
  return color + text + kReset;
}

// A port state in colour, for the texts that take a StateText.
std::string colored_state(PortState s) {
  return paint(plain_state_text(s), state_color(s), true);
}

StateText state_text(bool color) {
  return color ? colored_state : plain_state_text;
}

std::string pad(std::string s, size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

// A port record as what changed, field by field: "ACTIVE -> DOWN; phys_state link_up -> polling,
// lid 7 -> 0", then the rate when the link is up, then the table entries added and removed.
std::string port_details(const Record& r, bool color) {
  const StateText state = state_text(color);
  const PortInfo& now = *r.port_info;
  const PortInfo& was = r.previous.value_or(now);
  // port_state says what the port is now, changed or not, like a link event.
  const bool link_event = r.event == EventKind::kPortActive || r.event == EventKind::kPortErr ||
                          r.event == EventKind::kPortState;
  std::vector<std::string> parts;
  if (was.state != now.state) {
    parts.push_back(plain_state_text(was.state) + " -> " + state(now.state));
  } else if (link_event) {
    parts.push_back(state(now.state));
  }
  std::string changes;
  for (const FieldChange& c : field_changes(was, now)) {
    if (c.name == "state" || c.name == "rate_gbps") continue;
    changes +=
        (changes.empty() ? "" : ", ") + std::string(c.name) + " " + c.before + " -> " + c.after;
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
    parts.push_back("+pkey " + pkey_text(p));
  for (const auto& p : r.pkeys_removed)
    parts.push_back("-pkey " + pkey_text(p));
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

std::string plural(uint64_t n, const std::string& one) {
  return std::to_string(n) + " " + one + (n == 1 ? "" : "s");
}

// What tells the daemon of hot-plug, and what it heard.
std::string hotplug_line(const StatusReply::Hotplug& h) {
  if (h.source == "udev") {
    return "hot-plug: udev, " + std::to_string(h.udev_events) + " events, " +
           std::to_string(h.udev_overflows) + " overflows\n";
  }
  if (h.source == "rdma_netlink") {
    std::string rescan = "no rescan";
    if (h.rescanning) {
      // A daemon older than the rescan beside the monitor names no device: it always rescans.
      rescan = "and a rescan every 5 s";
      for (size_t i = 0; i < h.rescan_for.size(); ++i)
        rescan += (i == 0 ? " while " : ", ") + h.rescan_for[i];
      if (!h.rescan_for.empty()) rescan += h.rescan_for.size() == 1 ? " is open" : " are open";
    }
    return "hot-plug: the kernel's RDMA netlink monitor, " + std::to_string(h.netlink_events) +
           " messages, " + std::to_string(h.netlink_overruns) + " overruns; " + rescan +
           " (udev does not run)\n";
  }
  return "hot-plug: a rescan every 5 s (udev does not run, the kernel has no RDMA netlink "
         "monitor)\n";
}

}  // namespace

std::string format_record(const Record& r, bool color) {
  // A port record reads as its changes; any other as the journal's sentence, after the device
  // (for a rename the old name, as the journal has it).
  const bool port_record = r.port_info && !is_device_record(r.event);
  // A port_health or link_quality record has no port block but is about one port, as is a
  // report that names its port: DEV/PORT too, with the journal's sentence.
  const bool about_a_port = port_record || r.event == EventKind::kPortHealth ||
                            r.event == EventKind::kLinkQuality ||
                            (r.event == EventKind::kAppReport && r.port != 0);
  const std::string where =
      about_a_port ? r.device + "/" + std::to_string(r.port) : subject_text(r);
  // A vendor record about a module's port reads as its sentence: the port did not change.
  const std::string details =
      port_record && !r.vendor ? port_details(r, color) : event_text(r, state_text(color));
  return line(r.time_us, r.severity, where, event_name(r.event), details,
              "[seq " + std::to_string(r.seq) + "]", color);
}

std::string format_snapshot(const PortSnapshot& s, bool color) {
  const PortInfo& p = s.port;
  std::string details = state_text(color)(p.state) + ", " + rate_text(p) + ", " +
                        std::string(link_layer_name(p.link_layer));
  if (p.link_layer != LinkLayer::kEthernet) {
    details += ", lid " + std::to_string(p.lid) + ", sm_lid " + std::to_string(p.sm_lid);
  }
  details += ", " + plural(s.gids.size(), "GID") + ", " + plural(s.pkeys.size(), "P_Key");
  return line(s.time_us, Severity::kInfo, s.device + "/" + std::to_string(p.port), kSnapshotEvent,
              details, "[as of seq " + std::to_string(s.seq) + "]", color);
}

std::string format_lost(const Lost& l, bool color) {
  return paint("-- lost " + plural(l.records, "record") + " between seq " +
                   std::to_string(l.first_seq) + " and " + std::to_string(l.last_seq) +
                   ": this monitor read too slowly --",
               "\033[1;33m", color);
}

std::string format_status(const StatusReply& st, uint64_t seq, bool color) {
  std::vector<std::vector<std::string>> rows = {
      {"DEVICE", "PORT", "STATE", "PHYS", "LINK", "RATE", "LID", "SM_LID", "GIDS", "PKEYS"}};
  std::vector<PortState> states = {PortState::kUnknown};
  for (const auto& d : st.devices) {
    for (const auto& p : d.ports) {
      const PortInfo& i = p.info;
      rows.push_back(
          {d.device, std::to_string(i.port), plain_state_text(i.state),
           std::string(phys_state_name(i.phys_state)), std::string(link_layer_name(i.link_layer)),
           i.lanes == 0 || i.speed == LinkSpeed::kUnknown ? std::string("unknown")
                                                          : gbps_text(i.rate_gbps()) + " Gb/s",
           std::to_string(i.lid), std::to_string(i.sm_lid), std::to_string(p.gids),
           std::to_string(p.pkeys)});
      states.push_back(i.state);
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
  const auto& d = st.daemon;
  const auto& c = st.counters;
  const auto& j = st.journal;
  const auto& s = st.subscribers;
  out += "\nrdma-eventd " + d.version + ", pid " + std::to_string(d.pid) + ", up " +
         std::to_string(d.uptime_s) + "s, stream " + d.stream + ", seq " + std::to_string(seq) +
         "\n";
  out += "events: " + std::to_string(c.events_read) + " read, " + std::to_string(c.events_acked) +
         " acked; " + std::to_string(c.records) + " records, " + std::to_string(c.query_failures) +
         " query failures\n";
  out += hotplug_line(st.hotplug);
  out += j.enabled
             ? "journal: " + std::to_string(j.written) + " written, " + std::to_string(j.failed) +
                   " failed, " + std::to_string(j.dropped) + " dropped\n"
             : "journal: off\n";
  if (j.enabled && j.budget) {
    out += "journal budget: " + std::to_string(j.not_journaled) + " records not journaled, " +
           std::to_string(j.summaries) + " summaries written\n";
  }
  out += "subscribers: " + std::to_string(s.count) + " of " + std::to_string(s.max) + "; " +
         std::to_string(s.records_sent) + " records sent, " + std::to_string(s.records_lost) +
         " lost, " + std::to_string(s.bytes_queued) + " bytes queued\n";
  out += "ring: " + std::to_string(st.ring.records) + " of " + std::to_string(st.ring.capacity) +
         " records (seq " + std::to_string(st.ring.first_seq) + " to " +
         std::to_string(st.ring.last_seq) + ")\n";
  const auto& r = st.reporters;
  out += r.socket.empty() ? std::string("reporters: no report socket (reporters subscribe)\n")
                          : "reporters: " + std::to_string(r.count) + " of " +
                                std::to_string(r.max) + " on " + r.socket + "\n";
  out += format_link_health(st.link_health);
  out += format_devlink(st.devlink);
  return out;
}

// "devlink health: 3 reporters, 5 notifications, 0 overruns", then a line per reporter:
// "  pci/0000:08:00.0 fw_fatal: error since 2026-11-29T04:10:41Z, 2 errors, 1 recovery (mlx5_0)".
std::string format_devlink(const StatusReply::Devlink& d) {
  if (!d.enabled) return "devlink health: off\n";
  if (!d.available) {
    return "devlink health: not followed" +
           (d.unavailable.empty() ? std::string() : " (" + d.unavailable + ")") + "\n";
  }
  std::string out = "devlink health: " + std::to_string(d.reporters.size()) +
                    (d.reporters.size() == 1 ? " reporter, " : " reporters, ") +
                    std::to_string(d.notifications) + " notifications, " +
                    std::to_string(d.overruns) + " overruns\n";
  for (const auto& r : d.reporters) {
    out += "  " + r.handle;
    if (r.port_index >= 0) out += " port " + std::to_string(r.port_index);
    out += " " + r.reporter + ": " + r.state + " since " +
           rdma_eventd::format_rfc3339_us(r.since_us) + ", " + std::to_string(r.error_count) +
           (r.error_count == 1 ? " error, " : " errors, ") + std::to_string(r.recover_count) +
           (r.recover_count == 1 ? " recovery" : " recoveries");
    std::string ports;
    for (const std::string& p : r.ports)
      ports += (ports.empty() ? "" : ", ") + p;
    out += " (" + (ports.empty() ? std::string("no RDMA device") : ports) + ")\n";
  }
  return out;
}

// "link health: every 60 s, 1200 samples, 3600 counter reads, 0 devices unreadable, 0 failed
// reads retried, 0 reads hung", then a line per port watched:
// "  mlx5_0/1 clean since 2026-...Z, bit error rate 1.2e-15; symbol_error 12, link_downed 3",
// "  mlx5_1/1 unknown (read_hung) since 2026-...Z, bit error rate unknown; ...".
std::string format_link_health(const StatusReply::LinkHealth& l) {
  if (!l.enabled) return "link health: off\n";
  std::string out =
      "link health: every " + std::to_string(l.interval_s) + " s, " + std::to_string(l.samples) +
      " samples, " + std::to_string(l.counter_reads) + " counter reads, " +
      std::to_string(l.read_failures) + (l.read_failures == 1 ? " device" : " devices") +
      " unreadable, " + std::to_string(l.read_retries) +
      (l.read_retries == 1 ? " failed read" : " failed reads") + " retried, " +
      std::to_string(l.reads_hung) + (l.reads_hung == 1 ? " read" : " reads") + " hung\n";
  for (const auto& p : l.ports) {
    char ber[32] = "unknown";
    if (p.ber_estimate) std::snprintf(ber, sizeof ber, "%.1e", *p.ber_estimate);
    // An older daemon says only bad or not.
    const std::string quality = p.quality.empty() ? (p.bad ? "bad" : "clean") : p.quality;
    out += "  " + p.device + "/" + std::to_string(p.port) + " " + quality;
    if (p.bad) out += " (" + p.faults + ")";
    if (!p.unknown.empty()) out += (p.bad ? ", not judged now (" : " (") + p.unknown + ")";
    if (p.since_us != 0) out += " since " + rdma_eventd::format_rfc3339_us(p.since_us);
    out += std::string(", bit error rate ") + ber;
    std::string counters;
    for (const auto& [name, value] : p.counters)
      counters += (counters.empty() ? "; " : ", ") + name + " " + std::to_string(value);
    out += counters;
    if (!p.pegged.empty()) out += "; pegged, errors unknown: " + p.pegged;
    out += "\n";
  }
  return out;
}

}  // namespace rdma_eventctl
