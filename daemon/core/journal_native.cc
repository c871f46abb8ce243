#include "core/journal_native.h"

#include <cstdint>
#include <cstring>

namespace rdma_eventd::daemon {

void append_native_field(std::string& out, std::string_view key, std::string_view value) {
  // A newline would end the field early: such a value goes with its length in front instead.
  const bool framed = value.find('\n') != std::string_view::npos;
  // Sized once and written in place: an entry has some twenty fields.
  const size_t at = out.size();
  out.resize(at + key.size() + (framed ? 9 : 1) + value.size() + 1);
  char* p = out.data() + at;
  std::memcpy(p, key.data(), key.size());
  p += key.size();
  if (framed) {
    *p++ = '\n';
    uint64_t size = value.size();
    for (int i = 0; i < 8; ++i, size >>= 8)
      *p++ = static_cast<char>(size & 0xff);
  } else {
    *p++ = '=';
  }
  std::memcpy(p, value.data(), value.size());
  p[value.size()] = '\n';
}

void append_plain_native_field(std::string& out, std::string_view key, std::string_view value) {
  const size_t at = out.size();
  out.resize(at + key.size() + 1 + value.size() + 1);
  char* p = out.data() + at;
  std::memcpy(p, key.data(), key.size());
  p += key.size();
  *p++ = '=';
  std::memcpy(p, value.data(), value.size());
  p[value.size()] = '\n';
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
