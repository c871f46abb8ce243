// A record's common keys, the part every record and snapshot record begins with, written as
// runs of literal text and texts cached from record to record (record.cc writes the rest).
#include "record_common.h"

#include <array>
#include <cassert>
#include <charconv>
#include <cstring>

#include "schema/record_json.h"

namespace rdma_eventd {
namespace {

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
      slot.keys = {k.host,   std::string(k.event), k.event_type, k.severity,
                   k.device, k.node_guid,          k.port};
    }
    return slot.text;
  }

 private:
  // The keys write_identity writes, as values: those a slot's text was rendered from.
  struct IdentityKeys {
    std::string host;
    std::string event;
    int event_type = 0;
    Severity severity = Severity::kInfo;
    std::string device;
    std::string node_guid;
    uint32_t port = 0;
  };
  struct Slot {
    IdentityKeys keys;
    std::string text;  // empty: the slot was never used (a rendered text never is)

    bool holds(const CommonKeys& k) const {
      return keys.port == k.port && keys.event_type == k.event_type &&
             keys.severity == k.severity && same_text(keys.event, k.event) &&
             same_text(keys.device, k.device) && same_text(keys.node_guid, k.node_guid) &&
             same_text(keys.host, k.host);
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

}  // namespace

void append_common_keys(std::string& out, const CommonKeys& k,
                        std::initializer_list<std::string_view> rendered) {
  const CommonTexts texts = common_texts(k);
  size_t bound = common_bound(texts);
  for (std::string_view text : rendered)
    bound += text.size();
  append_flat(out, bound, [&](FlatWriter& w) {
    write_common(w, k, texts);
    for (std::string_view text : rendered)
      w.text(text);
  });
}

const std::string& port_block_text(const PortInfo& p) {
  thread_local PortBlockCache port_blocks;
  return port_blocks.text(p);
}

}  // namespace rdma_eventd
