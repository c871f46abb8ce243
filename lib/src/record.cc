// Records and snapshot records: writing them (schema/record_json.h) and reading them back
// (record.h), both driven by the port-field table so the two always agree. The common keys and
// the port block, the part every record repeats, are rendered by record_common.cc.
#include "rdma_eventd/record.h"

#include <nlohmann/json.hpp>

#include "json_reader.h"
#include "port_fields.h"
#include "rdma_eventd/protocol.h"
#include "record_common.h"
#include "schema/record_json.h"

namespace rdma_eventd {
namespace {

using nlohmann::json;

void write_changes(JsonWriter& w, const PortInfo& before, const PortInfo& after) {
  w.key("changes");
  w.begin_object();
  for (const auto& f : port_fields()) {
    if (f.equal(before, after)) continue;
    w.key(f.name);
    w.begin_object();
    w.key("old");
    f.write(w, before);
    w.key("new");
    f.write(w, after);
    w.end_object();
  }
  w.end_object();
}

void write_gids(JsonWriter& w, std::string_view key, const std::vector<GidEntry>& gids) {
  write_object_array(w, key, gids, [&](const GidEntry& g) {
    w.field("index", g.index);
    w.field("gid", g.gid);
    w.field("type", gid_type_name(g.type));
    w.field("netdev", g.netdev);
  });
}

void write_pkeys(JsonWriter& w, std::string_view key, const std::vector<PkeyEntry>& pkeys) {
  write_object_array(w, key, pkeys, [&](const PkeyEntry& p) {
    w.field("index", p.index);
    w.field("pkey", format_pkey(p.pkey));
  });
}

// Device-wide records that carry the last known state of every port.
bool has_ports_array(EventKind kind) {
  return kind == EventKind::kDeviceFatal || kind == EventKind::kDeviceRemoved;
}

// Records read from a DEVX event channel: they carry the "vendor" object.
bool has_vendor_object(EventKind kind) {
  return kind >= EventKind::kModulePlugged && kind <= EventKind::kVendorEvent;
}

bool is_module_record(EventKind kind) {
  return kind >= EventKind::kModulePlugged && kind <= EventKind::kModuleError;
}

void write_vendor(JsonWriter& w, EventKind kind, const VendorEvent& v) {
  w.key("vendor");
  w.begin_object();
  w.field("type", v.type);
  w.field("subtype", v.subtype);
  w.field("data", v.data);
  if (is_module_record(kind)) w.field("module", v.module);
  if (kind == EventKind::kModuleError) {
    w.field("error_type", v.error_type);
    w.field("error_code", v.error_code);
  }
  if (kind == EventKind::kTemperatureWarning) write_array(w, "sensors", v.sensors);
  w.end_object();
}

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

void write_link(JsonWriter& w, const LinkQualityEvent& l) {
  w.key("link");
  w.begin_object();
  w.field("change", l.change);
  w.field("fault", l.fault);
  w.field("counter", l.counter);
  w.field("value", l.value);
  w.field("count", l.count);
  w.field("allowed", l.allowed);
  w.field("window_s", l.window_s);
  w.field("rate_gbps", l.rate_gbps);
  w.field("ber", l.ber);
  write_array(w, "pegged", l.pegged);
  w.end_object();
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
  r.link = std::move(l);
  return true;
}

void write_devlink(JsonWriter& w, const DevlinkHealthEvent& d) {
  w.key("devlink");
  w.begin_object();
  w.field("handle", d.handle);
  write_or_null(w, "port_index", d.port_index >= 0, d.port_index);
  w.field("reporter", d.reporter);
  w.field("state", d.state);
  write_or_null(w, "previous_state", !d.previous_state.empty(), d.previous_state);
  w.field("change", d.change);
  w.field("error_count", d.error_count);
  w.field("recover_count", d.recover_count);
  w.field("new_errors", d.new_errors);
  w.field("new_recoveries", d.new_recoveries);
  w.field("grace_period_ms", d.grace_period_ms);
  w.field("auto_recover", d.auto_recover);
  w.end_object();
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

// app_report's keys: what was reported, then who reported it.
void write_app_report(JsonWriter& w, const Record& r) {
  const ReportableEvent* e = reportable_event(r.event_type);
  w.field("reported_event", e ? e->name : std::string_view("unknown"));
  w.field("object", r.object);
  w.field("object_id", r.object_id);
  w.field("detail", r.detail);
  w.key("reporter");
  w.begin_object();
  w.field("pid", r.reporter.pid);
  w.field("uid", r.reporter.uid);
  w.field("gid", r.reporter.gid);
  w.field("comm", r.reporter.comm);
  w.field("unit", r.reporter.unit);
  w.field("cgroup", r.reporter.cgroup);
  w.end_object();
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

void write_port_block(JsonWriter& w, const PortInfo& p) {
  for (const auto& f : port_fields()) {
    w.key(f.name);
    f.write(w, p);
  }
}

std::vector<std::string_view> changed_fields(const PortInfo& before, const PortInfo& after) {
  std::vector<std::string_view> out;
  for (const auto& f : port_fields()) {
    if (!f.equal(before, after)) out.push_back(f.name);
  }
  return out;
}

std::string to_json(const Record& r) {
  std::string out;
  out.reserve(640);
  append_json(out, r);
  return out;
}

void append_json(std::string& out, const Record& r) {
  const CommonKeys common{r.seq,        r.stream,   r.time_us, r.host,      event_name(r.event),
                          r.event_type, r.severity, r.device,  r.node_guid, r.port};
  // A port record's block, rendered once per port state; "changes" is empty when the record
  // changes nothing it shows, which is most of them.
  const std::string* block = r.port_info ? &port_block_text(*r.port_info) : nullptr;
  const bool no_changes = block && (!r.previous || *r.previous == *r.port_info);
  append_common_keys(out, common,
                     {block ? std::string_view(*block) : "", no_changes ? ",\"changes\":{}" : ""});
  JsonWriter w(out);
  w.resume_object();
  if (block && !no_changes) write_changes(w, *r.previous, *r.port_info);
  if (r.event == EventKind::kGidChange) {
    write_gids(w, "gids_added", r.gids_added);
    write_gids(w, "gids_removed", r.gids_removed);
  }
  if (r.event == EventKind::kPkeyChange) {
    write_pkeys(w, "pkeys_added", r.pkeys_added);
    write_pkeys(w, "pkeys_removed", r.pkeys_removed);
  }
  if (has_ports_array(r.event)) {
    write_object_array(w, "ports", r.ports, [&](const PortInfo& p) {
      w.field("port", p.port);
      write_port_block(w, p);
    });
  }
  if (r.event == EventKind::kDeviceRenamed) w.field("old_name", r.old_name);
  if (r.event == EventKind::kDeviceRecovered) {
    w.field("down_since", format_rfc3339_us(r.down_since_us));
    w.field("downtime_ms", r.downtime_ms);
    w.field("fatal_seq", r.fatal_seq);
  }
  if (r.event == EventKind::kAppReport) write_app_report(w, r);
  if (r.event == EventKind::kPortHealth) {
    w.field("health", r.health);
    write_or_null(w, "previous_health", !r.previous_health.empty(), r.previous_health);
    w.field("reason", r.reason);
    w.field("since", format_rfc3339_us(r.since_us));
    w.field("downs_in_window", r.downs_in_window);
    w.field("errors_in_window", r.errors_in_window);
    w.field("window_s", r.window_s);
    w.field("quiet_s", r.quiet_s);
    w.field("cause_seq", r.cause_seq);
  }
  if (has_vendor_object(r.event)) write_vendor(w, r.event, r.vendor.value_or(VendorEvent{}));
  if (r.event == EventKind::kLinkQuality) write_link(w, r.link.value_or(LinkQualityEvent{}));
  if (r.event == EventKind::kDevlinkHealth)
    write_devlink(w, r.devlink.value_or(DevlinkHealthEvent{}));
  w.end_object();
}

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

std::string to_json(const PortSnapshot& s) {
  std::string out;
  out.reserve(1024);
  const CommonKeys common{s.seq, s.stream,        s.time_us, s.host,      kSnapshotEvent,
                          -1,    Severity::kInfo, s.device,  s.node_guid, s.port.port};
  append_common_keys(out, common);
  JsonWriter w(out);
  w.resume_object();
  write_port_block(w, s.port);
  w.key("changes");
  w.begin_object();
  w.end_object();
  write_gids(w, "gids", s.gids);
  write_pkeys(w, "pkeys", s.pkeys);
  w.end_object();
  return out;
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
