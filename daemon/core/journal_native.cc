#include "core/journal_native.h"

#include <cstdint>
#include <cstring>

namespace rdma_eventd::daemon {

void NativeFieldWriter::put(std::string_view s) {
  if (s.size() > room()) {
    flush();
    if (s.size() > sizeof buf_) {  // larger than the buffer: straight to the string
      out_.append(s);
      return;
    }
  }
  copy(s);
}

void NativeFieldWriter::flush() {
  out_.append(buf_, static_cast<size_t>(p_ - buf_));
  p_ = buf_;
}

void NativeFieldWriter::framed(std::string_view key, std::string_view value) {
  // A newline would end the field early: the value goes with its length in front instead.
  put(key);
  put("\n");
  char size[8];
  uint64_t n = value.size();
  for (char& byte : size) {
    byte = static_cast<char>(n & 0xff);
    n >>= 8;
  }
  put(std::string_view(size, sizeof size));
  put(value);
  put("\n");
}

void append_native_field(std::string& out, std::string_view key, std::string_view value) {
  NativeFieldWriter(out).text(key, value);
}

void append_plain_native_field(std::string& out, std::string_view key, std::string_view value) {
  NativeFieldWriter(out).plain(key, value);
}

void append_native_field(std::string& out, std::string_view key_equals_value) {
  const size_t eq = key_equals_value.find('=');
  if (eq == std::string_view::npos) return;
  append_native_field(out, key_equals_value.substr(0, eq), key_equals_value.substr(eq + 1));
}

std::vector<std::string> native_fields(std::string_view d) {
  std::vector<std::string> fields;
  while (!d.empty()) {
    const size_t nl = d.find('\n');
    if (nl == std::string_view::npos) break;
    const std::string_view line = d.substr(0, nl);
    if (line.find('=') != std::string_view::npos) {
      fields.emplace_back(line);
      d.remove_prefix(nl + 1);
      continue;
    }
    // KEY, newline, the value's size (64-bit little-endian), the value, newline.
    if (d.size() - nl - 1 < 8) break;
    uint64_t size = 0;
    for (int i = 7; i >= 0; --i)
      size = size << 8 | static_cast<unsigned char>(d[nl + 1 + i]);
    const size_t value_at = nl + 9;
    if (size >= d.size() - value_at || d[value_at + size] != '\n') break;
    std::string field(line);
    field += '=';
    field.append(d.substr(value_at, size));
    fields.push_back(std::move(field));
    d.remove_prefix(value_at + size + 1);
  }
  return fields;
}

}  // namespace rdma_eventd::daemon
