#include "schema/record_text.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <string>
#include <string_view>

#include "port_fields.h"
#include "rdma_eventd/protocol.h"

namespace rdma_eventd {
namespace {

// The texts of port events are appended piece by piece to one string: each is every journal
// entry's MESSAGE, and a string per piece cost more than the record's JSON.

template <typename T>
void append_decimal(std::string& s, T value) {
  char buf[24];
  s.append(buf, std::to_chars(buf, buf + sizeof buf, value).ptr);
}

// printf's "%g" of a rate ("200", "56.25"), appended.
void append_gbps(std::string& s, double gbps) {
  char buf[32];
  char* end;
  if (gbps >= 0 && gbps < 1e6 && gbps == static_cast<double>(static_cast<uint32_t>(gbps))) {
    // Whole rates, the usual ones: "%g" writes them as integers below a million.
    end = std::to_chars(buf, buf + sizeof buf, static_cast<uint32_t>(gbps)).ptr;
  } else {
    // What "%g" writes: the standard defines to_chars with a precision so.
    end = std::to_chars(buf, buf + sizeof buf, gbps, std::chars_format::general, 6).ptr;
  }
  s.append(buf, static_cast<size_t>(end - buf));
}

void append_rate(std::string& s, const PortInfo& p) {
  if (p.lanes == 0 || p.speed == LinkSpeed::kUnknown) {
    s += "unknown rate";
    return;
  }
  append_gbps(s, p.rate_gbps());
  s += " Gb/s ";
  append_decimal(s, p.lanes);
  s += "X ";
  s += link_speed_display(p.speed);
}

// "(ACTIVE -> DOWN)"
void append_transition(std::string& s, const PortInfo& before, const PortInfo& after,
                       StateText state) {
  s += '(';
  s += state(before.state);
  s += " -> ";
  s += state(after.state);
  s += ')';
}

// ", LID 7" on InfiniBand, where a LID means something; nothing on Ethernet.
void append_lid(std::string& s, const PortInfo& p) {
  if (p.link_layer != LinkLayer::kInfiniband) return;
  s += ", LID ";
  append_decimal(s, p.lid);
}

// "WAS -> NOW".
template <typename T>
void append_decimal_change(std::string& s, T was, T now) {
  append_decimal(s, was);
  s += " -> ";
  append_decimal(s, now);
}

template <typename Entry, typename Text>
std::string list_changes(const std::vector<Entry>& added, const std::vector<Entry>& removed,
                         Text text) {
  std::string s;
  auto append = [&](std::string_view verb, const std::vector<Entry>& entries) {
    if (entries.empty()) return;
    if (!s.empty()) s += "; ";
    s += verb;
    s += ' ';
    for (size_t i = 0; i < entries.size(); ++i) {
      if (i) s += ", ";
      s += text(entries[i]);
    }
  };
  append("added", added);
  append("removed", removed);
  return s.empty() ? "no entry differs from the last known table" : s;
}

// Appends a port event's text to `s`.
void append_port_event_text(std::string& s, const Record& r, StateText state) {
  const PortInfo& now = *r.port_info;
  const PortInfo& was = r.previous ? *r.previous : now;
  switch (r.event) {
    case EventKind::kPortErr:
      if (now.state == PortState::kActive) {
        // The port was up again by the time the event was read: say so, don't pretend.
        s += "link down, already back up when queried ";
        append_transition(s, was, now, state);
        s += ", ";
        append_rate(s, now);
        return;
      }
      s += "link down ";
      append_transition(s, was, now, state);
      s += ", was ";
      append_rate(s, was);
      return;
    case EventKind::kPortActive:
      s += "link up ";
      append_transition(s, was, now, state);
      s += ", ";
      append_rate(s, now);
      append_lid(s, now);
      return;
    case EventKind::kLidChange:
      s += "LID changed ";
      append_decimal_change(s, was.lid, now.lid);
      return;
    case EventKind::kSmChange:
      s += "subnet manager changed, SM LID ";
      append_decimal_change(s, was.sm_lid, now.sm_lid);
      s += " (SL ";
      append_decimal(s, now.sm_sl);
      s += ')';
      return;
    case EventKind::kClientReregister:
      s += "subnet manager (LID ";
      append_decimal(s, now.sm_lid);
      s += ") asked clients to re-register";
      return;
    case EventKind::kGidChange:
      s += "GID table changed: ";
      s += list_changes(r.gids_added, r.gids_removed, gid_text);
      return;
    case EventKind::kPkeyChange:
      s += "P_Key table changed: ";
      s += list_changes(r.pkeys_added, r.pkeys_removed, pkey_text);
      return;
    case EventKind::kPortState:
      s += state(now.state);
      s += ", ";
      append_rate(s, now);
      append_lid(s, now);
      if (!(was == now)) {
        s += ", was ";
        s += state(was.state);
        s += ' ';
        append_rate(s, was);
        append_lid(s, was);
      }
      return;
    default:
      break;
  }
  s += "async event type ";
  append_decimal(s, r.event_type);
  s += " (unknown to this version), port ";
  s += state(now.state);
  s += ", ";
  append_rate(s, now);
}

// "application reported qp_fatal on QP 4660 (pid 4242 trainer, uid 1000, unit job.service):
// DETAIL".
std::string app_report_text(const Record& r) {
  const ReportableEvent* e = reportable_event(r.event_type);
  std::string s = "application reported " +
                  (e ? std::string(e->name) : "event type " + std::to_string(r.event_type));
  if (r.object_id >= 0) {
    std::string object = r.object;
    for (char& c : object)
      c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    s += " on " + object + " " + std::to_string(r.object_id);
  }
  const Reporter& p = r.reporter;
  s += " (pid " + std::to_string(p.pid) + " " + (p.comm.empty() ? "?" : p.comm) + ", uid " +
       std::to_string(p.uid);
  if (!p.unit.empty()) s += ", unit " + p.unit;
  s += ")";
  if (!r.detail.empty()) s += ": " + r.detail;
  return s;
}

std::string hex_byte(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%02x", v);
  return buf;
}

std::string firmware_event_text(uint32_t subtype) {
  switch (subtype) {
    case 0x7:
      return "firmware live patch";
    case 0x8:
      return "PCI sync for firmware update";
    default:
      return "firmware general event subtype " + hex_byte(subtype);
  }
}

std::string sensors_text(const std::vector<uint32_t>& sensors) {
  std::string s;
  for (uint32_t n : sensors)
    s += (s.empty() ? "" : ", ") + std::to_string(n);
  return s.empty() ? "none named" : s;
}

// The records read from a DEVX event channel; "" for the others (without building anything:
// every record's MESSAGE asks here first).
std::string vendor_event_text(const Record& r, StateText state) {
  static const VendorEvent kNone;
  const VendorEvent& v = r.vendor ? *r.vendor : kNone;
  // "module 3 plugged, port ACTIVE"
  auto module = [&](std::string_view what) {
    std::string s = "module " + std::to_string(v.module);
    s += what;
    if (r.port_info) s += ", port " + state(r.port_info->state);
    return s;
  };
  switch (r.event) {
    case EventKind::kModulePlugged:
      return module(" plugged");
    case EventKind::kModuleUnplugged:
      return module(" unplugged");
    case EventKind::kModuleDisabled:
      return module(" disabled");
    case EventKind::kModuleError:
      return module(" error: " + v.error_type + " (" + std::to_string(v.error_code) + ")");
    case EventKind::kTemperatureWarning:
      return "temperature over threshold on sensors " + sensors_text(v.sensors);
    case EventKind::kPciPowerChange:
      return "PCI power change";
    case EventKind::kFirmwareEvent:
      return firmware_event_text(v.subtype);
    case EventKind::kVendorEvent:
      return "vendor event type " + hex_byte(v.type) + " subtype " + hex_byte(v.subtype) +
             ", data " + v.data;
    case EventKind::kVendorEventsLost:
      return "vendor events lost (the kernel could not queue at least one), ports re-read";
    default:
      return {};
  }
}

}  // namespace

std::string plain_state_text(PortState s) {
  return std::string(port_state_display(s));
}

std::string gbps_text(double gbps) {
  std::string s;
  append_gbps(s, gbps);
  return s;
}

std::string rate_text(const PortInfo& p) {
  std::string s;
  append_rate(s, p);
  return s;
}

std::string gid_text(const GidEntry& g) {
  std::string s = g.gid + " (" + std::string(gid_type_display(g.type));
  if (!g.netdev.empty()) s += ", " + g.netdev;
  return s + ") at index " + std::to_string(g.index);
}

std::string pkey_text(const PkeyEntry& p) {
  return format_pkey(p.pkey) + " at index " + std::to_string(p.index);
}

std::string duration_text(uint64_t ms) {
  char buf[64];
  if (ms < 1000) {
    std::snprintf(buf, sizeof buf, "%llu ms", static_cast<unsigned long long>(ms));
  } else if (ms < 60000) {
    std::snprintf(buf, sizeof buf, "%.1f s", static_cast<double>(ms) / 1000.0);
  } else {
    std::snprintf(buf, sizeof buf, "%llu min %llu s", static_cast<unsigned long long>(ms / 60000),
                  static_cast<unsigned long long>(ms % 60000 / 1000));
  }
  return buf;
}

std::string last_known_text(const std::vector<PortInfo>& ports, StateText state) {
  if (ports.empty()) return "no ports";
  std::string s;
  for (const PortInfo& p : ports) {
    s += s.empty() ? "port " : ", port ";
    s += std::to_string(p.port) + " " + state(p.state);
    if (p.state == PortState::kActive) s += " " + rate_text(p);
  }
  return s;
}

std::vector<FieldChange> field_changes(const PortInfo& before, const PortInfo& after) {
  std::vector<FieldChange> out;
  for (const auto& f : port_fields()) {
    if (!f.equal(before, after)) out.push_back(FieldChange{f.name, f.text(before), f.text(after)});
  }
  return out;
}

namespace {

// "health flapping (was healthy): flaps_in_window, 5 downs in 10 s"
std::string port_health_text(const Record& r) {
  std::string s = "health " + r.health;
  if (!r.previous_health.empty()) s += " (was " + r.previous_health + ")";
  s += ": " + r.reason;
  if (r.downs_in_window > 0) {
    s += ", " + std::to_string(r.downs_in_window) + " down" + (r.downs_in_window == 1 ? "" : "s") +
         " in " + std::to_string(r.window_s) + " s";
  }
  if (r.errors_in_window > 0) {
    s += ", " + std::to_string(r.errors_in_window) + " error" +
         (r.errors_in_window == 1 ? "" : "s") + " in window";
  }
  return s;
}

std::string ber_text(double ber) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1e", ber);
  return buf;
}

std::string unknown_reason_text(std::string_view reason) {
  if (reason == "read_failing") return "its counters fail to read, read again after a backoff";
  if (reason == "unreadable") return "its counters cannot be read until the device is opened again";
  if (reason == "read_hung") return "a read of its counters has not returned";
  return std::string(reason);
}

// "link bad: bit_errors, symbol_error +3 in 720 s (at most 1 at 200 Gb/s), bit error rate 2.1e-14"
// "device speed change; effective speed unknown (libibverbs has no ibv_query_port_speed)", or
// "...; effective speed: port 1 400 Gb/s, port 2 unknown (query failed)".
std::string unknown_speed_why(std::string_view reason) {
  if (reason == "not_in_libibverbs") return "libibverbs has no ibv_query_port_speed";
  if (reason == "not_supported") return "the driver does not report it";
  if (reason == "query_failed") return "its query failed";
  return std::string(reason);
}

std::string speed_change_text(const Record& r) {
  std::string s = "device speed change; effective speed";
  const auto& ports = r.effective_speed;
  if (ports.empty()) return s + " not read";
  const bool one_reason = std::all_of(ports.begin(), ports.end(), [&](const EffectiveSpeed& e) {
    return !e.gbps && e.unknown == ports.front().unknown;
  });
  if (one_reason) return s + " unknown (" + unknown_speed_why(ports.front().unknown) + ")";
  s += ":";
  for (const EffectiveSpeed& e : ports) {
    s += (&e == &ports.front() ? " port " : ", port ") + std::to_string(e.port) + " ";
    s += e.gbps ? gbps_text(*e.gbps) + " Gb/s" : "unknown (" + unknown_speed_why(e.unknown) + ")";
  }
  return s;
}

std::string link_quality_text(const Record& r) {
  static const LinkQualityEvent kNone;
  const LinkQualityEvent& l = r.link ? *r.link : kNone;
  const std::string counter = l.counter.empty() ? "a counter" : l.counter;
  std::string s;
  if (l.change == "bad") {
    s = "link bad: " + l.fault + ", " + counter + " +" + std::to_string(l.count) + " in " +
        std::to_string(l.window_s) + " s (at most " + std::to_string(l.allowed);
    if (l.rate_gbps > 0) s += " at " + gbps_text(l.rate_gbps) + " Gb/s";
    s += ")";
    if (l.fault == "bit_errors") s += ", bit error rate " + ber_text(l.ber);
  } else if (l.change == "clean") {
    s = "link clean again: " + l.fault + ", " + counter +
        " within its rule's allowance for the clean period";
  } else if (l.change == "pegged") {
    s = "counter " + counter + " at its maximum (" + std::to_string(l.value) +
        "): its errors are unknown until it is reset";
  } else if (l.change == "reset") {
    s = "counter " + counter + " reset by another tool (now " + std::to_string(l.value) + ")";
  } else if (l.change == "hidden_down") {
    s = std::to_string(l.count) + " link down" + (l.count == 1 ? "" : "s") +
        " too brief for an event (" + counter + " now " + std::to_string(l.value) +
        "), counted as down" + (l.count == 1 ? "" : "s");
  } else if (l.change == "unknown") {
    s = "link quality unknown: " + unknown_reason_text(l.reason) + " (" + counter + ")";
    if (l.since_us != 0) s += " since " + format_rfc3339_us(l.since_us);
  } else if (l.change == "judged") {
    s = "link quality judged again: " + counter + " read";
  } else {
    s = "link quality " + l.change + " (" + counter + ")";
  }
  return s;
}

// "devlink health fw_fatal (pci/0000:08:00.0): error, 1 new error (errors 3, recoveries 2)"
std::string devlink_health_text(const Record& r) {
  static const DevlinkHealthEvent kNone;
  const DevlinkHealthEvent& d = r.devlink ? *r.devlink : kNone;
  std::string s = "devlink health " + d.reporter + " (" + d.handle;
  if (d.port_index >= 0) s += " port " + std::to_string(d.port_index);
  s += "): ";
  if (d.change == "error") {
    s += "reported an error";
  } else if (d.change == "error_again") {
    s += "reported another error, not recovered";
  } else if (d.change == "recovered") {
    s += "recovered";
  } else if (d.change == "found_in_error") {
    s += "in error when first read";
  } else if (d.change == "recovery_refused") {
    s += "reported an error within its grace period (" + std::to_string(d.grace_period_ms) +
         " ms) of its last recovery: recovery refused";
  } else if (d.change == "removed") {
    s += "gone with its devlink instance while in error (the driver unloaded or reloaded)";
  } else {
    s += d.change;
  }
  s += " (errors " + std::to_string(d.error_count) + ", recoveries " +
       std::to_string(d.recover_count) + ")";
  if (d.state == "error" && !d.auto_recover) s += ", no automatic recovery";
  return s;
}

}  // namespace

bool is_device_record(EventKind kind) {
  return kind == EventKind::kDeviceFatal || kind == EventKind::kDeviceRemoved ||
         kind == EventKind::kDeviceAdded || kind == EventKind::kDeviceRenamed ||
         kind == EventKind::kDeviceRecovered;
}

namespace {

// Appends event_text(r, state) to `s`: the port events, nearly every record, piece by piece.
void append_event_text(std::string& s, const Record& r, StateText state) {
  switch (r.event) {
    case EventKind::kDeviceFatal:
      s += "device fatal error, last known: " + last_known_text(r.ports, state);
      return;
    case EventKind::kDeviceRemoved:
      s += "device removed, last known: " + last_known_text(r.ports, state);
      return;
    case EventKind::kDeviceAdded:
      s += "device added (node GUID " + r.node_guid + ")";
      return;
    case EventKind::kDeviceRenamed:
      s += "device renamed to " + r.device;
      return;
    case EventKind::kDeviceRecovered:
      s += "device recovered after " + duration_text(r.downtime_ms) + " (fatal error at seq " +
           std::to_string(r.fatal_seq) + ")";
      return;
    case EventKind::kAppReport:
      s += app_report_text(r);
      return;
    case EventKind::kPortHealth:
      s += port_health_text(r);
      return;
    case EventKind::kLinkQuality:
      s += link_quality_text(r);
      return;
    case EventKind::kDeviceSpeedChange:
      s += speed_change_text(r);
      return;
    case EventKind::kDevlinkHealth:
      s += devlink_health_text(r);
      return;
    case EventKind::kDevlinkEventsLost:
      s += "devlink notifications lost (the socket overran): reporters read again";
      return;
    default:
      break;
  }
  if (std::string v = vendor_event_text(r, state); !v.empty()) {
    s += v;
    return;
  }
  if (r.port_info) {
    append_port_event_text(s, r, state);
    return;
  }
  s += "async event type ";
  append_decimal(s, r.event_type);
  s += " (unknown to this version), element ";
  append_decimal(s, r.port);
}

}  // namespace

std::string event_text(const Record& r, StateText state) {
  std::string s;
  append_event_text(s, r, state);
  return s;
}

std::string subject_text(const Record& r) {
  if (r.event == EventKind::kDeviceRenamed) return r.old_name;
  if (r.event == EventKind::kAppReport && r.port != 0)
    return r.device + " port " + std::to_string(r.port);
  if (r.event == EventKind::kPortHealth || r.event == EventKind::kLinkQuality)
    return r.device + " port " + std::to_string(r.port);
  if (r.event == EventKind::kDevlinkHealth && r.device.empty())
    return r.devlink ? r.devlink->handle : std::string();
  if (r.event == EventKind::kDevlinkHealth && r.port != 0)
    return r.device + " port " + std::to_string(r.port);
  if (r.port_info && !is_device_record(r.event))
    return r.device + " port " + std::to_string(r.port);
  return r.device;
}

void append_description(std::string& s, const Record& r) {
  // subject_text, appended
  if (r.event == EventKind::kDeviceRenamed) {
    s += r.old_name;
  } else if (r.event == EventKind::kDevlinkHealth || r.event == EventKind::kDevlinkEventsLost) {
    const std::string subject = subject_text(r);
    s += subject.empty() ? "devlink" : subject;
  } else {
    s += r.device;
    const bool port = (r.event == EventKind::kAppReport && r.port != 0) ||
                      r.event == EventKind::kPortHealth || r.event == EventKind::kLinkQuality ||
                      (r.port_info && !is_device_record(r.event));
    if (port) {
      s += " port ";
      append_decimal(s, r.port);
    }
  }
  s += ": ";
  append_event_text(s, r, plain_state_text);
}

std::string describe(const Record& r) {
  std::string s;
  append_description(s, r);
  return s;
}

}  // namespace rdma_eventd
