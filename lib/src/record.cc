// Records and snapshot records written (schema/record_json.h): the path every event takes, one
// translation unit so that its pieces inline. Reading them back is record_read.cc's; both are
// driven by the port-field table, so the two always agree.
#include "rdma_eventd/record.h"

#include <array>
#include <cassert>
#include <charconv>
#include <cstring>
#include <nlohmann/json.hpp>

#include "port_fields.h"
#include "rdma_eventd/internal/same_text.h"
#include "rdma_eventd/protocol.h"
#include "record_kinds.h"
#include "schema/record_json.h"

namespace rdma_eventd {
namespace {

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
[[gnu::always_inline]] inline void append_flat(std::string& out, size_t bound, Write write) {
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

using internal::same_text;

// The keys every record and snapshot record begins with, up to "port" and its value.
struct CommonKeys {
  uint64_t seq;
  const std::string& stream;
  int64_t time_us;
  const std::string& host;
  std::string_view event;  // a static name: event_name() or kSnapshotEvent (IdentityCache)
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
    // An event name is a static text (event_name(), kSnapshotEvent): the same name is the same
    // address, which is compared (a name at another address is only rendered again).
    std::string_view event;
    int event_type = 0;
    Severity severity = Severity::kInfo;
    std::string device;
    std::string node_guid;
    uint32_t port = 0;
    std::string text;  // empty: the slot was never used (a rendered text never is)

    bool holds(const CommonKeys& k) const {
      return port == k.port && event_type == k.event_type && severity == k.severity &&
             event.data() == k.event.data() && event.size() == k.event.size() &&
             same_text(device, k.device) && same_text(node_guid, k.node_guid) &&
             same_text(host, k.host);
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
    // Its 32 bytes (PortInfo has no padding) as four words, mixed: this runs for every port
    // record.
    static_assert(sizeof(PortInfo) == 32);
    uint64_t w[4];
    std::memcpy(w, &p, sizeof w);
    uint64_t h = w[0] ^ (w[1] * 0x9e3779b97f4a7c15u) ^ (w[2] * 0xc2b2ae3d27d4eb4fu) ^ w[3];
    h ^= h >> 29;
    return static_cast<size_t>((h * 0x9e3779b97f4a7c15u) >> 58);  // kSlots == 64
  }
  static_assert(kSlots == 64, "slot_of keeps the hash's top 6 bits");

  std::array<Slot, kSlots> slots_;
};

// This thread's rendered texts, in one thread_local object: one check of its initialization
// per record.
struct TextCaches {
  StreamCache streams;
  IdentityCache identities;
  PortBlockCache port_blocks;

  // The cached texts of `k`: valid until the next call.
  CommonTexts common(const CommonKeys& k) {
    return CommonTexts{streams.text(k.stream), identities.text(k)};
  }
};

TextCaches& text_caches() {
  thread_local TextCaches caches;
  return caches;
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
  w.field("reason", l.reason);
  write_or_null(w, "since", l.since_us != 0, format_rfc3339_us(l.since_us));
  w.end_object();
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

// The keys of the record's own event (those has_event_keys(r.event) says it has), after its
// port block and changes.
void write_event_keys(JsonWriter& w, const Record& r) {
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
  if (r.event == EventKind::kDeviceSpeedChange) {
    write_object_array(w, "effective_speed", r.effective_speed, [&](const EffectiveSpeed& e) {
      w.field("port", e.port);
      write_or_null(w, "gbps", e.gbps.has_value(), e.gbps.value_or(0));
      write_or_null(w, "unknown", !e.unknown.empty(), e.unknown);
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
}

#ifndef NDEBUG
// Whether write_event_keys writes nothing for `r`: the fast path of append_json trusts
// has_event_keys, and a key added there for an event it does not list stops the Debug builds
// (the sanitizers' tests) in append_json.
bool writes_no_event_keys(const Record& r) {
  std::string keys;
  JsonWriter w(keys);
  w.resume_object();
  write_event_keys(w, r);
  return keys.empty();
}
#endif

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
  TextCaches& caches = text_caches();
  const std::string* block = r.port_info ? &caches.port_blocks.text(*r.port_info) : nullptr;
  const bool no_changes = block && (!r.previous || *r.previous == *r.port_info);
  static constexpr char kNoChanges[] = ",\"changes\":{}";
  // Most records end there (a port's event with its block and no change): closed at once.
  const bool more = (block && !no_changes) || has_event_keys(r.event);
  const CommonTexts texts = caches.common(common);
  const size_t bound = common_bound(texts) + (block ? block->size() + sizeof kNoChanges : 0) + 1;
  append_flat(out, bound, [&](FlatWriter& w) {
    write_common(w, common, texts);
    if (block) w.text(*block);
    if (no_changes) w.literal(kNoChanges);
    if (!more) w.literal("}");
  });
  if (!more) {
    assert(writes_no_event_keys(r));
    return;
  }
  JsonWriter w(out);
  w.resume_object();
  if (block && !no_changes) write_changes(w, *r.previous, *r.port_info);
  write_event_keys(w, r);
  w.end_object();
}

std::string to_json(const PortSnapshot& s) {
  std::string out;
  out.reserve(1024);
  const CommonKeys common{s.seq, s.stream,        s.time_us, s.host,      kSnapshotEvent,
                          -1,    Severity::kInfo, s.device,  s.node_guid, s.port.port};
  const CommonTexts texts = text_caches().common(common);
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

}  // namespace rdma_eventd
