#include "rdma_eventd/record.h"

#include <array>
#include <cinttypes>
#include <climits>
#include <cstdio>
#include <ctime>
#include <functional>
#include <nlohmann/json.hpp>

#include "rdma_eventd/json_writer.h"

namespace rdma_eventd {
namespace {

using nlohmann::json;

std::string width_name(uint32_t lanes) {
  return lanes == 0 ? std::string("unknown") : std::to_string(lanes) + "x";
}

// One field of the port block: its wire name, how to write it, compare it and read it back.
// The same table drives the flat port block, "changes" and the "ports" array, so the three can
// never disagree on names or types.
struct PortField {
  std::string_view name;
  std::function<void(JsonWriter&, const PortInfo&)> write;
  std::function<bool(const PortInfo&, const PortInfo&)> equal;
  // Returns false when the JSON value has the wrong type or an unknown name.
  std::function<bool(const json&, PortInfo&)> read;
};

template <typename Enum>
bool read_enum(const json& v, Enum& out, std::optional<Enum> (*from_name)(std::string_view)) {
  if (!v.is_string()) return false;
  auto e = from_name(v.get_ref<const std::string&>());
  if (!e) return false;
  out = *e;
  return true;
}

bool read_u32(const json& v, uint32_t& out) {
  if (!v.is_number_unsigned()) return false;
  const auto n = v.get<uint64_t>();
  if (n > UINT32_MAX) return false;
  out = static_cast<uint32_t>(n);
  return true;
}

#define RDMA_EVENTD_U32_FIELD(member)                                                 \
  PortField {                                                                         \
#member, [](JsonWriter& w, const PortInfo& p) { w.value(p.member); },               \
        [](const PortInfo& a, const PortInfo& b) { return a.member == b.member; },      \
        [](const json& v, PortInfo& p) { return read_u32(v, p.member); } \
  }

const std::array<PortField, 11>& port_fields() {
  static const std::array<PortField, 11> fields = {
      PortField{"link_layer",
                [](JsonWriter& w, const PortInfo& p) { w.value(link_layer_name(p.link_layer)); },
                [](const PortInfo& a, const PortInfo& b) { return a.link_layer == b.link_layer; },
                [](const json& v, PortInfo& p) {
                  return read_enum(v, p.link_layer, &link_layer_from_name);
                }},
      PortField{
          "state", [](JsonWriter& w, const PortInfo& p) { w.value(port_state_name(p.state)); },
          [](const PortInfo& a, const PortInfo& b) { return a.state == b.state; },
          [](const json& v, PortInfo& p) { return read_enum(v, p.state, &port_state_from_name); }},
      PortField{"phys_state",
                [](JsonWriter& w, const PortInfo& p) { w.value(phys_state_name(p.phys_state)); },
                [](const PortInfo& a, const PortInfo& b) { return a.phys_state == b.phys_state; },
                [](const json& v, PortInfo& p) {
                  return read_enum(v, p.phys_state, &phys_state_from_name);
                }},
      RDMA_EVENTD_U32_FIELD(lid),
      RDMA_EVENTD_U32_FIELD(sm_lid),
      RDMA_EVENTD_U32_FIELD(sm_sl),
      RDMA_EVENTD_U32_FIELD(lmc),
      RDMA_EVENTD_U32_FIELD(active_mtu),
      PortField{"width", [](JsonWriter& w, const PortInfo& p) { w.value(width_name(p.lanes)); },
                [](const PortInfo& a, const PortInfo& b) { return a.lanes == b.lanes; },
                [](const json& v, PortInfo& p) {
                  if (!v.is_string()) return false;
                  auto lanes = lanes_from_name(v.get_ref<const std::string&>());
                  if (!lanes) return false;
                  p.lanes = *lanes;
                  return true;
                }},
      PortField{
          "speed", [](JsonWriter& w, const PortInfo& p) { w.value(link_speed_name(p.speed)); },
          [](const PortInfo& a, const PortInfo& b) { return a.speed == b.speed; },
          [](const json& v, PortInfo& p) { return read_enum(v, p.speed, &link_speed_from_name); }},
      // Derived from width and speed: written for readers, checked on read, never stored.
      PortField{"rate_gbps", [](JsonWriter& w, const PortInfo& p) { w.value(p.rate_gbps()); },
                [](const PortInfo& a, const PortInfo& b) { return a.rate_gbps() == b.rate_gbps(); },
                [](const json& v, PortInfo&) { return v.is_number(); }},
  };
  return fields;
}
#undef RDMA_EVENTD_U32_FIELD

void write_port_block(JsonWriter& w, const PortInfo& p) {
  for (const auto& f : port_fields()) {
    w.key(f.name);
    f.write(w, p);
  }
}

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
  w.key(key);
  w.begin_array();
  for (const auto& g : gids) {
    w.begin_object();
    w.field("index", g.index);
    w.field("gid", std::string_view(g.gid));
    w.field("type", gid_type_name(g.type));
    w.field("netdev", std::string_view(g.netdev));
    w.end_object();
  }
  w.end_array();
}

void write_pkeys(JsonWriter& w, std::string_view key, const std::vector<PkeyEntry>& pkeys) {
  w.key(key);
  w.begin_array();
  for (const auto& p : pkeys) {
    w.begin_object();
    w.field("index", p.index);
    w.field("pkey", std::string_view(format_pkey(p.pkey)));
    w.end_object();
  }
  w.end_array();
}

// Parsing helpers: each names the key it failed on.
class Reader {
 public:
  explicit Reader(std::string* error) : error_(error) {}

  bool fail(std::string_view key, std::string_view problem) {
    if (error_) *error_ = std::string(key) + ": " + std::string(problem);
    return false;
  }

  const json* find(const json& obj, std::string_view key) {
    auto it = obj.find(key);
    if (it == obj.end()) {
      fail(key, "missing");
      return nullptr;
    }
    return &*it;
  }

  bool u64(const json& obj, std::string_view key, uint64_t& out) {
    const json* v = find(obj, key);
    if (!v) return false;
    if (!v->is_number_unsigned()) return fail(key, "not an unsigned integer");
    out = v->get<uint64_t>();
    return true;
  }

  bool u32(const json& obj, std::string_view key, uint32_t& out) {
    const json* v = find(obj, key);
    if (!v) return false;
    if (!read_u32(*v, out)) return fail(key, "not a 32-bit unsigned integer");
    return true;
  }

  bool str(const json& obj, std::string_view key, std::string& out) {
    const json* v = find(obj, key);
    if (!v) return false;
    if (!v->is_string()) return fail(key, "not a string");
    out = v->get<std::string>();
    return true;
  }

  bool port_block(const json& obj, PortInfo& p, std::string_view where) {
    for (const auto& f : port_fields()) {
      auto it = obj.find(f.name);
      if (it == obj.end()) return fail(std::string(where) + std::string(f.name), "missing");
      if (!f.read(*it, p)) return fail(std::string(where) + std::string(f.name), "bad value");
    }
    return true;
  }

  bool gids(const json& obj, std::string_view key, std::vector<GidEntry>& out) {
    const json* v = find(obj, key);
    if (!v) return false;
    if (!v->is_array()) return fail(key, "not an array");
    for (const auto& item : *v) {
      GidEntry g;
      std::string type;
      if (!item.is_object()) return fail(key, "entry is not an object");
      if (!u32(item, "index", g.index) || !str(item, "gid", g.gid) || !str(item, "type", type) ||
          !str(item, "netdev", g.netdev)) {
        return false;
      }
      auto t = gid_type_from_name(type);
      if (!t) return fail("type", "unknown GID type '" + type + "'");
      g.type = *t;
      out.push_back(std::move(g));
    }
    return true;
  }

  bool pkeys(const json& obj, std::string_view key, std::vector<PkeyEntry>& out) {
    const json* v = find(obj, key);
    if (!v) return false;
    if (!v->is_array()) return fail(key, "not an array");
    for (const auto& item : *v) {
      PkeyEntry p;
      std::string text;
      if (!item.is_object()) return fail(key, "entry is not an object");
      if (!u32(item, "index", p.index) || !str(item, "pkey", text)) return false;
      unsigned value = 0;
      if (text.size() != 6 || std::sscanf(text.c_str(), "0x%4x", &value) != 1) {
        return fail("pkey", "not a 0xNNNN P_Key: '" + text + "'");
      }
      p.pkey = static_cast<uint16_t>(value);
      out.push_back(p);
    }
    return true;
  }

 private:
  std::string* error_;
};

bool is_port_scoped(const json& obj) {
  return obj.contains("state");
}

// Device-wide records that carry the last known state of every port.
bool has_ports_array(EventKind kind) {
  return kind == EventKind::kDeviceFatal || kind == EventKind::kDeviceRemoved;
}

}  // namespace

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
  JsonWriter w(out);
  w.begin_object();
  w.field("schema", kSchemaVersion);
  w.field("seq", r.seq);
  w.field("stream", std::string_view(r.stream));
  w.field("time", std::string_view(format_rfc3339_us(r.time_us)));
  w.field("host", std::string_view(r.host));
  w.field("event", event_name(r.event));
  w.field("event_type", r.event_type);
  w.field("severity", severity_name(r.severity));
  w.field("device", std::string_view(r.device));
  w.field("node_guid", std::string_view(r.node_guid));
  w.field("port", r.port);
  if (r.port_info) {
    write_port_block(w, *r.port_info);
    write_changes(w, r.previous.value_or(*r.port_info), *r.port_info);
  }
  if (r.event == EventKind::kGidChange) {
    write_gids(w, "gids_added", r.gids_added);
    write_gids(w, "gids_removed", r.gids_removed);
  }
  if (r.event == EventKind::kPkeyChange) {
    write_pkeys(w, "pkeys_added", r.pkeys_added);
    write_pkeys(w, "pkeys_removed", r.pkeys_removed);
  }
  if (has_ports_array(r.event)) {
    w.key("ports");
    w.begin_array();
    for (const auto& p : r.ports) {
      w.begin_object();
      w.field("port", p.port);
      write_port_block(w, p);
      w.end_object();
    }
    w.end_array();
  }
  if (r.event == EventKind::kDeviceRenamed) w.field("old_name", std::string_view(r.old_name));
  if (r.event == EventKind::kDeviceRecovered) {
    w.field("down_since", std::string_view(format_rfc3339_us(r.down_since_us)));
    w.field("downtime_ms", r.downtime_ms);
    w.field("fatal_seq", r.fatal_seq);
  }
  w.end_object();
  return out;
}

std::optional<Record> record_from_json(std::string_view text, std::string* error) {
  json obj = json::parse(text, nullptr, /*allow_exceptions=*/false);
  Reader rd(error);
  if (obj.is_discarded()) {
    rd.fail("record", "not valid JSON");
    return std::nullopt;
  }
  if (!obj.is_object()) {
    rd.fail("record", "not a JSON object");
    return std::nullopt;
  }
  Record r;
  uint32_t schema = 0;
  std::string time, event, severity;
  if (!rd.u32(obj, "schema", schema)) return std::nullopt;
  if (schema != kSchemaVersion) {
    rd.fail("schema", "unsupported version " + std::to_string(schema));
    return std::nullopt;
  }
  const json* event_type = rd.find(obj, "event_type");
  if (!event_type) return std::nullopt;
  if (!event_type->is_number_integer()) {
    rd.fail("event_type", "not an integer");
    return std::nullopt;
  }
  r.event_type = event_type->get<int>();
  if (!rd.u64(obj, "seq", r.seq) || !rd.str(obj, "stream", r.stream) ||
      !rd.str(obj, "time", time) || !rd.str(obj, "host", r.host) || !rd.str(obj, "event", event) ||
      !rd.str(obj, "severity", severity) || !rd.str(obj, "device", r.device) ||
      !rd.str(obj, "node_guid", r.node_guid) || !rd.u32(obj, "port", r.port)) {
    return std::nullopt;
  }
  auto t = parse_rfc3339_us(time);
  if (!t) {
    rd.fail("time", "not an RFC 3339 UTC time with microseconds: '" + time + "'");
    return std::nullopt;
  }
  r.time_us = *t;
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

  if (is_port_scoped(obj)) {
    PortInfo now;
    now.port = r.port;
    if (!rd.port_block(obj, now, "")) return std::nullopt;
    // Rebuild the earlier view from the current one and the "old" side of each change.
    PortInfo before = now;
    const json* changes = rd.find(obj, "changes");
    if (!changes) return std::nullopt;
    if (!changes->is_object()) {
      rd.fail("changes", "not an object");
      return std::nullopt;
    }
    for (const auto& [name, change] : changes->items()) {
      const PortField* field = nullptr;
      for (const auto& f : port_fields()) {
        if (f.name == name) field = &f;
      }
      if (!field) {
        rd.fail("changes." + name, "unknown field");
        return std::nullopt;
      }
      if (!change.is_object() || !change.contains("old") || !field->read(change["old"], before)) {
        rd.fail("changes." + name, "bad old value");
        return std::nullopt;
      }
    }
    r.port_info = now;
    r.previous = before;
  }
  if (r.event == EventKind::kGidChange && (!rd.gids(obj, "gids_added", r.gids_added) ||
                                           !rd.gids(obj, "gids_removed", r.gids_removed))) {
    return std::nullopt;
  }
  if (r.event == EventKind::kPkeyChange && (!rd.pkeys(obj, "pkeys_added", r.pkeys_added) ||
                                            !rd.pkeys(obj, "pkeys_removed", r.pkeys_removed))) {
    return std::nullopt;
  }
  if (has_ports_array(r.event)) {
    const json* ports = rd.find(obj, "ports");
    if (!ports) return std::nullopt;
    if (!ports->is_array()) {
      rd.fail("ports", "not an array");
      return std::nullopt;
    }
    for (const auto& item : *ports) {
      PortInfo p;
      if (!item.is_object() || !rd.u32(item, "port", p.port) || !rd.port_block(item, p, "ports.")) {
        return std::nullopt;
      }
      r.ports.push_back(p);
    }
  }
  if (r.event == EventKind::kDeviceRenamed && !rd.str(obj, "old_name", r.old_name)) {
    return std::nullopt;
  }
  if (r.event == EventKind::kDeviceRecovered) {
    std::string since;
    if (!rd.str(obj, "down_since", since) || !rd.u64(obj, "downtime_ms", r.downtime_ms) ||
        !rd.u64(obj, "fatal_seq", r.fatal_seq)) {
      return std::nullopt;
    }
    auto since_us = parse_rfc3339_us(since);
    if (!since_us) {
      rd.fail("down_since", "not an RFC 3339 UTC time with microseconds: '" + since + "'");
      return std::nullopt;
    }
    r.down_since_us = *since_us;
  }
  return r;
}

void write_port_fields(JsonWriter& w, const PortInfo& port) {
  write_port_block(w, port);
}

std::string to_json(const PortSnapshot& s) {
  std::string out;
  out.reserve(1024);
  JsonWriter w(out);
  w.begin_object();
  w.field("schema", kSchemaVersion);
  w.field("seq", s.seq);
  w.field("stream", std::string_view(s.stream));
  w.field("time", std::string_view(format_rfc3339_us(s.time_us)));
  w.field("host", std::string_view(s.host));
  w.field("event", kSnapshotEvent);
  w.field("event_type", -1);
  w.field("severity", severity_name(Severity::kInfo));
  w.field("device", std::string_view(s.device));
  w.field("node_guid", std::string_view(s.node_guid));
  w.field("port", s.port.port);
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
  json obj = json::parse(text, nullptr, /*allow_exceptions=*/false);
  Reader rd(error);
  if (obj.is_discarded() || !obj.is_object()) {
    rd.fail("snapshot", obj.is_discarded() ? "not valid JSON" : "not a JSON object");
    return std::nullopt;
  }
  PortSnapshot s;
  uint32_t schema = 0;
  std::string time, event;
  if (!rd.u32(obj, "schema", schema) || !rd.str(obj, "event", event)) return std::nullopt;
  if (schema != kSchemaVersion) {
    rd.fail("schema", "unsupported version " + std::to_string(schema));
    return std::nullopt;
  }
  if (event != kSnapshotEvent) {
    rd.fail("event", "'" + event + "' is not a snapshot record");
    return std::nullopt;
  }
  if (!rd.u64(obj, "seq", s.seq) || !rd.str(obj, "stream", s.stream) ||
      !rd.str(obj, "time", time) || !rd.str(obj, "host", s.host) ||
      !rd.str(obj, "device", s.device) || !rd.str(obj, "node_guid", s.node_guid) ||
      !rd.u32(obj, "port", s.port.port) || !rd.port_block(obj, s.port, "") ||
      !rd.gids(obj, "gids", s.gids) || !rd.pkeys(obj, "pkeys", s.pkeys)) {
    return std::nullopt;
  }
  auto t = parse_rfc3339_us(time);
  if (!t) {
    rd.fail("time", "not an RFC 3339 UTC time with microseconds: '" + time + "'");
    return std::nullopt;
  }
  s.time_us = *t;
  return s;
}

std::string format_rfc3339_us(int64_t time_us) {
  int64_t secs = time_us / 1000000;
  int64_t micros = time_us % 1000000;
  if (micros < 0) {
    micros += 1000000;
    secs -= 1;
  }
  // Records come in bursts within one second: the date and time of day are formatted once per
  // second (per thread), the microseconds every time.
  thread_local int64_t cached_secs = INT64_MIN;
  thread_local std::string cached;
  if (secs != cached_secs) {
    const time_t t = static_cast<time_t>(secs);
    struct tm tm {};
    gmtime_r(&t, &tm);
    char buf[96];  // sized for any int fields, so the compiler can prove no truncation
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
    cached = buf;
    cached_secs = secs;
  }
  std::string out;
  out.reserve(27);
  out = cached;
  char digits[7] = "000000";
  for (int i = 5; i >= 0; --i, micros /= 10)
    digits[i] = static_cast<char>('0' + micros % 10);
  out.append(digits, 6);
  out += 'Z';
  return out;
}

std::optional<int64_t> parse_rfc3339_us(std::string_view text) {
  // Exactly the form format_rfc3339_us writes: 27 characters.
  if (text.size() != 27 || text[4] != '-' || text[7] != '-' || text[10] != 'T' || text[13] != ':' ||
      text[16] != ':' || text[19] != '.' || text[26] != 'Z') {
    return std::nullopt;
  }
  auto num = [&](size_t pos, size_t len, int& out) {
    out = 0;
    for (size_t i = pos; i < pos + len; ++i) {
      if (text[i] < '0' || text[i] > '9') return false;
      out = out * 10 + (text[i] - '0');
    }
    return true;
  };
  int year, mon, day, hour, min, sec, micros;
  if (!num(0, 4, year) || !num(5, 2, mon) || !num(8, 2, day) || !num(11, 2, hour) ||
      !num(14, 2, min) || !num(17, 2, sec) || !num(20, 6, micros)) {
    return std::nullopt;
  }
  if (mon < 1 || mon > 12 || day < 1 || day > 31 || hour > 23 || min > 59 || sec > 60) {
    return std::nullopt;
  }
  struct tm tm {};
  tm.tm_year = year - 1900;
  tm.tm_mon = mon - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = min;
  tm.tm_sec = sec;
  const time_t t = timegm(&tm);
  // Only a time that exists as written: timegm moves 30 February to March and a leap second to
  // the next minute (23:59:60 on 9999-12-31 to year 10000), which would write back as another
  // text, or as none this parser reads.
  struct tm written {};
  if (!gmtime_r(&t, &written) || written.tm_year != year - 1900 || written.tm_mon != mon - 1 ||
      written.tm_mday != day || written.tm_hour != hour || written.tm_min != min ||
      written.tm_sec != sec) {
    return std::nullopt;
  }
  return static_cast<int64_t>(t) * 1000000 + micros;
}

std::string format_guid(uint64_t guid) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(19, ':');  // xxxx:xxxx:xxxx:xxxx
  for (int group = 0; group < 4; ++group) {
    const auto bits = static_cast<unsigned>((guid >> (48 - 16 * group)) & 0xffff);
    for (int d = 0; d < 4; ++d)
      out[static_cast<size_t>(group * 5 + d)] = kHex[(bits >> (12 - 4 * d)) & 0xf];
  }
  return out;
}

std::optional<uint64_t> parse_guid(std::string_view text) {
  std::string hex;
  if (text.size() == 19) {  // 248a:0703:00a1:b2c0
    for (size_t i = 0; i < text.size(); ++i) {
      if (i % 5 == 4) {
        if (text[i] != ':') return std::nullopt;
      } else {
        hex += text[i];
      }
    }
  } else if (text.size() == 18 && (text.substr(0, 2) == "0x" || text.substr(0, 2) == "0X")) {
    hex = text.substr(2);
  } else if (text.size() == 16) {
    hex = text;
  } else {
    return std::nullopt;
  }
  uint64_t v = 0;
  for (char c : hex) {
    int d;
    if (c >= '0' && c <= '9') {
      d = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      d = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      d = c - 'A' + 10;
    } else {
      return std::nullopt;
    }
    v = (v << 4) | static_cast<uint64_t>(d);
  }
  return v;
}

std::string format_pkey(uint16_t pkey) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%04x", pkey);
  return buf;
}

}  // namespace rdma_eventd
