// A small, fast JSON writer for the records and replies the daemon emits.
//
// Records are serialized once per event whatever the number of subscribers, at hundreds of
// thousands per second; appending to one std::string with a fixed key order is several times
// cheaper than building a DOM. Parsing (clients, configuration) uses nlohmann::json instead.
// Internal to the daemon and the client library: not part of librdma-eventd's API.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace rdma_eventd {

class JsonWriter {
 public:
  explicit JsonWriter(std::string& out) : out_(out) {}

  void begin_object() { open('{'); }
  void end_object() { close('}'); }
  void begin_array() { open('['); }
  void end_array() { close(']'); }

  // Goes on inside an object whose "{" and first members were appended to the string
  // directly: the next key is written after a comma.
  void resume_object() {
    first_ = false;
    after_key_ = false;
  }

  // Writes "key": and leaves the writer ready for exactly one value. The key is written as it
  // is: keys are the program's own plain ASCII names, never data that would need escaping.
  void key(std::string_view k);

  void value(std::string_view s);
  void value(const char* s) { value(std::string_view(s)); }
  void value(uint64_t v);
  void value(int64_t v);
  void value(uint32_t v) { value(static_cast<uint64_t>(v)); }
  void value(int v) { value(static_cast<int64_t>(v)); }
  void value(double v);
  void value(bool v);
  void null();
  // Inserts already-serialized JSON as a value.
  void raw(std::string_view json);

  template <typename T>
  void field(std::string_view k, const T& v) {
    key(k);
    value(v);
  }

 private:
  // An object or an array: opened where a value goes, and closed as a value that was written.
  void open(char bracket) {
    value_prefix();
    out_ += bracket;
    first_ = true;
  }
  void close(char bracket) {
    out_ += bracket;
    first_ = false;
  }
  void value_prefix() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (!first_) out_ += ',';
    first_ = false;
  }

  std::string& out_;
  bool first_ = true;
  bool after_key_ = false;
};

// "key": [{...}, ...]: one object per entry of `entries`, whose keys write_one(entry) writes.
template <typename Entries, typename WriteOne>
void write_object_array(JsonWriter& w, std::string_view key, const Entries& entries,
                        WriteOne write_one) {
  w.key(key);
  w.begin_array();
  for (const auto& e : entries) {
    w.begin_object();
    write_one(e);
    w.end_object();
  }
  w.end_array();
}

// "key": [value(entry), ...]: one value per entry of `entries`, the entry itself by default.
template <typename Entries, typename Value = std::identity>
void write_array(JsonWriter& w, std::string_view key, const Entries& entries, Value value = {}) {
  w.key(key);
  w.begin_array();
  for (const auto& e : entries)
    w.value(value(e));
  w.end_array();
}

// "key": v, or null where the value is not known.
template <typename T>
void write_or_null(JsonWriter& w, std::string_view key, bool known, const T& v) {
  w.key(key);
  if (known)
    w.value(v);
  else
    w.null();
}

// Appends s as a JSON string literal (quotes included). Invalid UTF-8 bytes become U+FFFD so
// the output is always valid JSON.
void append_json_string(std::string& out, std::string_view s);

// The most bytes write_json_string writes for s: every byte escaped as \u00XX, and the quotes.
constexpr size_t json_string_bound(std::string_view s) {
  return 6 * s.size() + 2;
}

// Writes s as append_json_string does, at p, which has room for json_string_bound(s) bytes.
// Returns the end of what it wrote.
char* write_json_string(char* p, std::string_view s);

}  // namespace rdma_eventd
