// Records and snapshot records read back (record.h): from their JSON lines, every key checked,
// with the key and what is wrong with it named on failure. record.cc writes them; both follow
// the port-field table and record_kinds.h.
#include <nlohmann/json.hpp>

#include "json_reader.h"
#include "port_fields.h"
#include "rdma_eventd/protocol.h"
#include "rdma_eventd/record.h"
#include "record_kinds.h"

namespace rdma_eventd {
namespace {

using nlohmann::json;

bool read_vendor(JsonReader& rd, const json& obj, Record& r) {
  const json* o = rd.object_at(obj, "vendor");
  if (!o) return false;
  VendorEvent v;
  if (!rd.u32(*o, "type", v.type) || !rd.u32(*o, "subtype", v.subtype) ||
      !rd.str(*o, "data", v.data)) {
    return false;
  }
  if (is_module_record(r.event) && !rd.u32(*o, "module", v.module)) return false;
  if (r.event == EventKind::kModuleError &&
      (!rd.str(*o, "error_type", v.error_type) || !rd.u32(*o, "error_code", v.error_code))) {
    return false;
  }
  if (r.event == EventKind::kTemperatureWarning) {
    const json* sensors = rd.array_at(*o, "sensors");
    if (!sensors) return false;
    for (const json& s : *sensors) {
      if (!s.is_number_unsigned() || s.get<uint64_t>() > 127)
        return rd.fail("sensors", "bad sensor");
      v.sensors.push_back(s.get<uint32_t>());
    }
  }
  r.vendor = std::move(v);
  return true;
}

bool read_link(JsonReader& rd, const json& obj, Record& r) {
  const json* o = rd.object_at(obj, "link");
  if (!o) return false;
  LinkQualityEvent l;
  if (!rd.str(*o, "change", l.change) || !rd.str(*o, "fault", l.fault) ||
      !rd.str(*o, "counter", l.counter) || !rd.u64(*o, "value", l.value) ||
      !rd.u64(*o, "count", l.count) || !rd.u64(*o, "allowed", l.allowed) ||
      !rd.u32(*o, "window_s", l.window_s) || !rd.real(*o, "rate_gbps", l.rate_gbps) ||
      !rd.real(*o, "ber", l.ber) || !rd.strings(*o, "pegged", l.pegged)) {
    return false;
  }
  // "reason" and "since" came with the unknown change: older daemons leave them out.
  if (o->contains("reason") && !rd.str(*o, "reason", l.reason)) return false;
  const json* since = rd.find(*o, "since");
  if (since && !since->is_null() && !rd.time(*o, "since", l.since_us)) return false;
  r.link = std::move(l);
  return true;
}

bool read_devlink(JsonReader& rd, const json& obj, Record& r) {
  const json* o = rd.object_at(obj, "devlink");
  if (!o) return false;
  DevlinkHealthEvent d;
  const json* port_index = rd.find(*o, "port_index");
  if (!port_index) return false;
  if (port_index->is_null()) {
    d.port_index = -1;
  } else if (!port_index->is_number_unsigned() || port_index->get<uint64_t>() > UINT32_MAX) {
    return rd.fail("port_index", "neither a port number nor null");
  } else {
    d.port_index = port_index->get<int64_t>();
  }
  if (!rd.str_or_null(*o, "previous_state", d.previous_state)) return false;
  if (!rd.str(*o, "handle", d.handle) || !rd.str(*o, "reporter", d.reporter) ||
      !rd.str(*o, "state", d.state) || !rd.str(*o, "change", d.change) ||
      !rd.u64(*o, "error_count", d.error_count) || !rd.u64(*o, "recover_count", d.recover_count) ||
      !rd.u64(*o, "new_errors", d.new_errors) || !rd.u64(*o, "new_recoveries", d.new_recoveries) ||
      !rd.u64(*o, "grace_period_ms", d.grace_period_ms) ||
      !rd.boolean(*o, "auto_recover", d.auto_recover)) {
    return false;
  }
  r.devlink = std::move(d);
  return true;
}

// The port block and "changes": the port now, and as it was before the record.
bool read_port_and_changes(JsonReader& rd, const json& obj, Record& r) {
  PortInfo now;
  now.port = r.port;
  if (!rd.port_block(obj, now, "")) return false;
  // Rebuild the earlier view from the current one and the "old" side of each change.
  PortInfo before = now;
  const json* changes = rd.object_at(obj, "changes");
  if (!changes) return false;
  for (const auto& [name, change] : changes->items()) {
    const PortField* field = find_port_field(name);
    if (!field) return rd.fail("changes." + name, "unknown field");
    if (!change.is_object() || !change.contains("old") || !field->read(change["old"], before)) {
      return rd.fail("changes." + name, "bad old value");
    }
  }
  r.port_info = now;
  r.previous = before;
  return true;
}

bool read_ports_array(JsonReader& rd, const json& obj, std::vector<PortInfo>& out) {
  return rd.entries(obj, "ports", out, [&](const json& item, PortInfo& p) {
    return rd.u32(item, "port", p.port) && rd.port_block(item, p, "ports.");
  });
}

// Known or not, never both: a speed with a reason, or neither, is no answer.
bool read_effective_speed(JsonReader& rd, const json& obj, std::vector<EffectiveSpeed>& out) {
  // Records of daemons before the key have none: nothing was said of the effective speed.
  if (!obj.contains("effective_speed")) return true;
  return rd.entries(obj, "effective_speed", out, [&](const json& item, EffectiveSpeed& e) {
    if (!rd.u32(item, "port", e.port) || !rd.str_or_null(item, "unknown", e.unknown)) return false;
    const json* gbps = rd.find(item, "gbps");
    if (!gbps) return false;
    if (!gbps->is_null()) {
      double v = 0;
      if (!rd.real(item, "gbps", v)) return false;
      e.gbps = v;
    }
    if (e.gbps.has_value() == !e.unknown.empty())
      return rd.fail("effective_speed.gbps", "a speed and a reason it is unknown, or neither");
    return true;
  });
}

bool read_app_report(JsonReader& rd, const json& obj, Record& r) {
  std::string reported;
  if (!rd.str(obj, "reported_event", reported) || !rd.str(obj, "object", r.object) ||
      !rd.i64(obj, "object_id", r.object_id) || !rd.str(obj, "detail", r.detail)) {
    return false;
  }
  const json* who = rd.object_at(obj, "reporter");
  if (!who) return false;
  Reporter& p = r.reporter;
  return rd.i64(*who, "pid", p.pid) && rd.i64(*who, "uid", p.uid) && rd.i64(*who, "gid", p.gid) &&
         rd.str(*who, "comm", p.comm) && rd.str(*who, "unit", p.unit) &&
         rd.str(*who, "cgroup", p.cgroup);
}

// The keys that depend on the event.
bool read_event_keys(JsonReader& rd, const json& obj, Record& r) {
  // Port-scoped records are those with a port block.
  if (obj.contains("state") && !read_port_and_changes(rd, obj, r)) return false;
  if (r.event == EventKind::kGidChange && (!rd.gids(obj, "gids_added", r.gids_added) ||
                                           !rd.gids(obj, "gids_removed", r.gids_removed))) {
    return false;
  }
  if (r.event == EventKind::kPkeyChange && (!rd.pkeys(obj, "pkeys_added", r.pkeys_added) ||
                                            !rd.pkeys(obj, "pkeys_removed", r.pkeys_removed))) {
    return false;
  }
  if (has_ports_array(r.event) && !read_ports_array(rd, obj, r.ports)) return false;
  if (r.event == EventKind::kDeviceRenamed && !rd.str(obj, "old_name", r.old_name)) return false;
  if (r.event == EventKind::kDeviceSpeedChange && !read_effective_speed(rd, obj, r.effective_speed))
    return false;
  if (r.event == EventKind::kAppReport) return read_app_report(rd, obj, r);
  if (has_vendor_object(r.event) && !read_vendor(rd, obj, r)) return false;
  if (r.event == EventKind::kLinkQuality) return read_link(rd, obj, r);
  if (r.event == EventKind::kDevlinkHealth) return read_devlink(rd, obj, r);
  if (r.event == EventKind::kDeviceRecovered) {
    return rd.time(obj, "down_since", r.down_since_us) &&
           rd.u64(obj, "downtime_ms", r.downtime_ms) && rd.u64(obj, "fatal_seq", r.fatal_seq);
  }
  if (r.event == EventKind::kPortHealth) {
    return rd.str_or_null(obj, "previous_health", r.previous_health) &&
           rd.str(obj, "health", r.health) && rd.str(obj, "reason", r.reason) &&
           rd.time(obj, "since", r.since_us) && rd.u32(obj, "downs_in_window", r.downs_in_window) &&
           rd.u32(obj, "errors_in_window", r.errors_in_window) &&
           rd.u32(obj, "window_s", r.window_s) && rd.u32(obj, "quiet_s", r.quiet_s) &&
           rd.u64(obj, "cause_seq", r.cause_seq);
  }
  return true;
}

bool read_schema(JsonReader& rd, const json& obj) {
  uint32_t schema = 0;
  if (!rd.u32(obj, "schema", schema)) return false;
  if (schema != kSchemaVersion)
    return rd.fail("schema", "unsupported version " + std::to_string(schema));
  return true;
}

}  // namespace

std::optional<Record> record_from_json(std::string_view text, std::string* error) {
  JsonReader rd(error);
  json obj;
  if (!rd.object(text, "record", obj) || !read_schema(rd, obj)) return std::nullopt;
  Record r;
  const json* event_type = rd.find(obj, "event_type");
  if (!event_type) return std::nullopt;
  if (!event_type->is_number_integer()) {
    rd.fail("event_type", "not an integer");
    return std::nullopt;
  }
  r.event_type = event_type->get<int>();
  std::string event, severity;
  if (!rd.u64(obj, "seq", r.seq) || !rd.str(obj, "stream", r.stream) ||
      !rd.time(obj, "time", r.time_us) || !rd.str(obj, "host", r.host) ||
      !rd.str(obj, "event", event) || !rd.str(obj, "severity", severity) ||
      !rd.str(obj, "device", r.device) || !rd.str(obj, "node_guid", r.node_guid) ||
      !rd.u32(obj, "port", r.port)) {
    return std::nullopt;
  }
  auto kind = event_from_name(event);
  if (!kind) {
    rd.fail("event", "unknown event '" + event + "'");
    return std::nullopt;
  }
  r.event = *kind;
  auto sev = severity_from_name(severity);
  if (!sev) {
    rd.fail("severity", "unknown severity '" + severity + "'");
    return std::nullopt;
  }
  r.severity = *sev;
  if (!read_event_keys(rd, obj, r)) return std::nullopt;
  return r;
}

std::optional<PortSnapshot> snapshot_from_json(std::string_view text, std::string* error) {
  JsonReader rd(error);
  json obj;
  if (!rd.object(text, "snapshot", obj)) return std::nullopt;
  PortSnapshot s;
  std::string event;
  if (!read_schema(rd, obj) || !rd.str(obj, "event", event)) return std::nullopt;
  if (event != kSnapshotEvent) {
    rd.fail("event", "'" + event + "' is not a snapshot record");
    return std::nullopt;
  }
  if (!rd.u64(obj, "seq", s.seq) || !rd.str(obj, "stream", s.stream) ||
      !rd.time(obj, "time", s.time_us) || !rd.str(obj, "host", s.host) ||
      !rd.str(obj, "device", s.device) || !rd.str(obj, "node_guid", s.node_guid) ||
      !rd.u32(obj, "port", s.port.port) || !rd.port_block(obj, s.port, "") ||
      !rd.gids(obj, "gids", s.gids) || !rd.pkeys(obj, "pkeys", s.pkeys)) {
    return std::nullopt;
  }
  return s;
}

}  // namespace rdma_eventd
