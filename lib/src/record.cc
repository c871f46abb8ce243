// Records and snapshot records: writing them (schema/record_json.h) and reading them back
// (record.h), both driven by the port-field table so the two always agree.
#include "rdma_eventd/record.h"

#include <array>
#include <cassert>
#include <charconv>
#include <cstring>
#include <nlohmann/json.hpp>

#include "json_reader.h"
#include "port_fields.h"
#include "rdma_eventd/protocol.h"
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

// Writes through a pointer into a buffer its caller sized for everything it will write: a
// record's common part is some twenty small pieces, and appending each to the string would
// cost a capacity check and a library call.
class FlatWriter {
 public:
  explicit FlatWriter(char* p) : p_(p) {}
  char* end() const { return p_; }

  // A string literal, its terminating NUL left out: a copy of known size, inlined.
  template <size_t N>
  void literal(const char (&text)[N]) {
    std::memcpy(p_, text, N - 1);
    p_ += N - 1;
  }
  void text(std::string_view s) {
    if (!s.empty()) std::memcpy(p_, s.data(), s.size());
    p_ += s.size();
  }
  // A name of the schema's own vocabulary (event_name, severity_name: lowercase letters,
  // digits and '_', which Record.SchemaNamesNeedNoEscaping checks), quoted without being
  // scanned for characters to escape.
  void schema_name(std::string_view name) {
    *p_++ = '"';
    text(name);
    *p_++ = '"';
  }
  void string(std::string_view s) { p_ = write_json_string(p_, s); }
  template <typename Int>
  void number(Int v) {
    p_ = std::to_chars(p_, p_ + kNumberBound, v).ptr;
  }
  void time(int64_t time_us) { p_ = write_rfc3339_us(p_, time_us); }

  static constexpr size_t kNumberBound = 20;  // the digits of any 64-bit integer, and a sign

 private:
  char* p_;
};

// Writes what `write` writes into `out`, given the most bytes it may write: in a buffer on the
// stack when that bound fits (every record but those with huge names), appended at once.
// The bounds are counted by hand (identity_bound, common_bound, StreamCache): a key added to
// what is written without its bytes in the bound stops the Debug builds (the sanitizers'
// tests) here.
template <typename Write>
void append_flat(std::string& out, size_t bound, Write write) {
  char stack[2048];
  if (bound <= sizeof stack) {
    FlatWriter w(stack);
    write(w);
    assert(static_cast<size_t>(w.end() - stack) <= bound);
    out.append(stack, static_cast<size_t>(w.end() - stack));
    return;
  }
  const size_t at = out.size();
  out.resize(at + bound);
  FlatWriter w(out.data() + at);
  write(w);
  assert(static_cast<size_t>(w.end() - (out.data() + at)) <= bound);
  out.resize(static_cast<size_t>(w.end() - out.data()));
}

// Whether two short texts are the same: 8 bytes at a time, the last 8 overlapping the ones
// before, inlined where a cache checks its key for every record (a call to memcmp per string
// costs more than the compare).
inline bool same_text(std::string_view a, std::string_view b) {
  const size_t n = a.size();
  if (n != b.size()) return false;
  const char* p = a.data();
  const char* q = b.data();
  const auto load8 = [](const char* s) {
    uint64_t v;
    std::memcpy(&v, s, sizeof v);
    return v;
  };
  const auto load4 = [](const char* s) {
    uint32_t v;
    std::memcpy(&v, s, sizeof v);
    return v;
  };
  if (n >= 8) {
    for (size_t i = 0; i + 8 < n; i += 8)
      if (load8(p + i) != load8(q + i)) return false;
    return load8(p + n - 8) == load8(q + n - 8);
  }
  if (n >= 4) return load4(p) == load4(q) && load4(p + n - 4) == load4(q + n - 4);
  for (size_t i = 0; i < n; ++i)
    if (p[i] != q[i]) return false;
  return true;
}

// The keys every record and snapshot record begins with, up to "port" and its value.
struct CommonKeys {
  uint64_t seq;
  const std::string& stream;
  int64_t time_us;
  const std::string& host;
  std::string_view event;
  int event_type;
  Severity severity;
  const std::string& device;
  const std::string& node_guid;
  uint32_t port;
};

// The most bytes write_identity writes: its literal text (79 bytes, counted as 96), two numbers,
// the two names and the three strings, each escaped at worst.
size_t identity_bound(const CommonKeys& k) {
  return 96 + 2 * FlatWriter::kNumberBound + k.event.size() + severity_name(k.severity).size() +
         json_string_bound(k.host) + json_string_bound(k.device) + json_string_bound(k.node_guid);
}

// From the time's closing quote to the port's number: "\",\"host\":...,\"port\":N". These keys
// name where the record comes from and what happened, and repeat from record to record.
void write_identity(FlatWriter& w, const CommonKeys& k) {
  w.literal("\",\"host\":");
  w.string(k.host);
  w.literal(",\"event\":");
  w.schema_name(k.event);
  w.literal(",\"event_type\":");
  w.number(k.event_type);
  w.literal(",\"severity\":");
  w.schema_name(severity_name(k.severity));
  w.literal(",\"device\":");
  w.string(k.device);
  w.literal(",\"node_guid\":");
  w.string(k.node_guid);
  w.literal(",\"port\":");
  w.number(k.port);
}

// write_identity's text, rendered once per port and event and reused: a storm repeats the same
// few ports' same events thousands of times, and comparing the keys costs less than scanning
// and escaping three strings. 128 slots, chosen by a hash of the port, the event and the
// device's name, hold the events of a large host's ports; a slot holding other keys is
// rendered again.
class IdentityCache {
 public:
  const std::string& text(const CommonKeys& k) {
    Slot& slot = slots_[slot_of(k)];
    if (slot.text.empty() || !slot.holds(k)) {
      slot.text.clear();
      append_flat(slot.text, identity_bound(k), [&](FlatWriter& w) { write_identity(w, k); });
      slot.host = k.host;
      slot.event = k.event;
      slot.event_type = k.event_type;
      slot.severity = k.severity;
      slot.device = k.device;
      slot.node_guid = k.node_guid;
      slot.port = k.port;
    }
    return slot.text;
  }

 private:
  struct Slot {
    std::string host;
    std::string event;
    int event_type = 0;
    Severity severity = Severity::kInfo;
    std::string device;
    std::string node_guid;
    uint32_t port = 0;
    std::string text;  // empty: the slot was never used (a rendered text never is)

    bool holds(const CommonKeys& k) const {
      return port == k.port && event_type == k.event_type && severity == k.severity &&
             same_text(event, k.event) && same_text(device, k.device) &&
             same_text(node_guid, k.node_guid) && same_text(host, k.host);
    }
  };
  static constexpr size_t kSlots = 128;

  static size_t slot_of(const CommonKeys& k) {
    // The device's name by its length and last byte, where the names of one host differ
    // (mlx5_0, mlx5_1, ..., mlx5_10).
    size_t h = k.device.size();
    if (!k.device.empty()) h = h * 31 + static_cast<unsigned char>(k.device.back());
    h = h * 31 + k.port;
    h = h * 31 + static_cast<uint32_t>(k.event_type);
    h = h * 31 + static_cast<uint32_t>(k.severity);
    return h % kSlots;
  }

  std::array<Slot, kSlots> slots_;
};

// ",\"stream\":...,\"time\":\"", rendered once per stream: a daemon's records all carry the one
// stream id of its run, 32 hex digits.
class StreamCache {
 public:
  const std::string& text(const std::string& stream) {
    if (text_.empty() || !same_text(stream_, stream)) {
      text_.clear();
      append_flat(text_, 32 + json_string_bound(stream), [&](FlatWriter& w) {
        w.literal(",\"stream\":");
        w.string(stream);
        w.literal(",\"time\":\"");
      });
      stream_ = stream;
    }
    return text_;
  }

 private:
  std::string stream_;
  std::string text_;  // empty: nothing rendered yet (a rendered text never is)
};

// The two cached texts of a record's common keys (this thread's caches).
struct CommonTexts {
  const std::string& stream;    // StreamCache's
  const std::string& identity;  // IdentityCache's
};

// The bound of write_common: its literal text (18 bytes, counted as 24), the seq, the time and
// the two texts as rendered.
size_t common_bound(const CommonTexts& t) {
  return 24 + FlatWriter::kNumberBound + kRfc3339UsSize + t.stream.size() + t.identity.size();
}

// "{" and the common keys, as runs of literal text between the values: the keys and their
// order never change, and this is every record's longest part (the bytes are JsonWriter's,
// docs/records.md). `t` holds the texts of the same keys.
void write_common(FlatWriter& w, const CommonKeys& k, const CommonTexts& t) {
  static_assert(kSchemaVersion == 1, "the literal below writes the schema version");
  w.literal("{\"schema\":1,\"seq\":");
  w.number(k.seq);
  w.text(t.stream);
  w.time(k.time_us);  // digits and separators: nothing to escape
  w.text(t.identity);
}

// The cached texts of `k`, from this thread's caches: valid until its next call.
CommonTexts common_texts(const CommonKeys& k) {
  thread_local StreamCache streams;
  thread_local IdentityCache identities;
  return CommonTexts{streams.text(k.stream), identities.text(k)};
}

// The port block's text, each key with its leading comma (",\"link_layer\":...,\"rate_gbps\":N"),
// rendered once per port state and reused: a port's attributes change rarely, and a storm's
// records repeat the same ones thousands of times. A few dozen slots, chosen by a hash of the
// attributes, hold the ports of a large host; a slot whose port differs is rendered again.
class PortBlockCache {
 public:
  const std::string& text(const PortInfo& p) {
    Slot& slot = slots_[slot_of(p)];
    if (slot.text.empty() || !(slot.port == p)) {
      slot.text.clear();
      JsonWriter w(slot.text);
      w.resume_object();
      write_port_block(w, p);
      slot.port = p;
    }
    return slot.text;
  }

 private:
  struct Slot {
    PortInfo port;
    std::string text;  // empty: the slot was never used (a rendered block never is)
  };
  static constexpr size_t kSlots = 64;

  static size_t slot_of(const PortInfo& p) {
    // Written out rather than looped over: this runs for every port record.
    size_t h = p.port;
    h = h * 31 + static_cast<uint32_t>(p.state);
    h = h * 31 + static_cast<uint32_t>(p.phys_state);
    h = h * 31 + p.lid;
    h = h * 31 + p.sm_lid;
    h = h * 31 + p.lanes;
    h = h * 31 + static_cast<uint32_t>(p.speed);
    h = h * 31 + static_cast<uint32_t>(p.link_layer);
    return h % kSlots;
  }

  std::array<Slot, kSlots> slots_;
};

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
  if (kind == EventKind::kTemperatureWarning) {
    w.key("sensors");
    w.begin_array();
    for (uint32_t s : v.sensors)
      w.value(s);
    w.end_array();
  }
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
  w.key("pegged");
  w.begin_array();
  for (const std::string& c : l.pegged)
    w.value(std::string_view(c));
  w.end_array();
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
      !rd.real(*o, "ber", l.ber)) {
    return false;
  }
  const json* pegged = rd.array_at(*o, "pegged");
  if (!pegged) return false;
  for (const json& c : *pegged) {
    if (!c.is_string()) return rd.fail("pegged", "entry is not a string");
    l.pegged.push_back(c.get<std::string>());
  }
  r.link = std::move(l);
  return true;
}

void write_devlink(JsonWriter& w, const DevlinkHealthEvent& d) {
  w.key("devlink");
  w.begin_object();
  w.field("handle", d.handle);
  w.key("port_index");
  if (d.port_index < 0)
    w.null();
  else
    w.value(d.port_index);
  w.field("reporter", d.reporter);
  w.field("state", d.state);
  w.key("previous_state");
  if (d.previous_state.empty())
    w.null();
  else
    w.value(std::string_view(d.previous_state));
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
  const json* previous = rd.find(*o, "previous_state");
  if (!previous) return false;
  if (previous->is_string())
    d.previous_state = previous->get<std::string>();
  else if (!previous->is_null())
    return rd.fail("previous_state", "neither a string nor null");
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
    const json* previous = rd.find(obj, "previous_health");
    if (!previous) return false;
    if (!previous->is_null() && !previous->is_string())
      return rd.fail("previous_health", "neither a string nor null");
    if (previous->is_string()) r.previous_health = previous->get<std::string>();
    return rd.str(obj, "health", r.health) && rd.str(obj, "reason", r.reason) &&
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
  thread_local PortBlockCache port_blocks;
  const std::string* block = r.port_info ? &port_blocks.text(*r.port_info) : nullptr;
  const bool no_changes = block && (!r.previous || *r.previous == *r.port_info);
  static constexpr char kNoChanges[] = ",\"changes\":{}";
  const CommonTexts texts = common_texts(common);
  const size_t bound = common_bound(texts) + (block ? block->size() + sizeof kNoChanges : 0);
  append_flat(out, bound, [&](FlatWriter& w) {
    write_common(w, common, texts);
    if (block) w.text(*block);
    if (no_changes) w.literal(kNoChanges);
  });
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
    w.key("previous_health");
    if (r.previous_health.empty())
      w.null();
    else
      w.value(std::string_view(r.previous_health));
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
  const CommonTexts texts = common_texts(common);
  append_flat(out, common_bound(texts), [&](FlatWriter& w) { write_common(w, common, texts); });
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
