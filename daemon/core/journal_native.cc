#include "core/journal_native.h"

#include <cstdint>

namespace rdma_eventd::daemon {

void append_native_field(std::string& out, std::string_view key, std::string_view value) {
  out += key;
  if (value.find('\n') == std::string_view::npos) {
    out += '=';
    out += value;
    out += '\n';
    return;
  }
  // A newline would end the field early: the value goes with its length in front instead.
  out += '\n';
  uint64_t size = value.size();
  for (int i = 0; i < 8; ++i) {
    out += static_cast<char>(size & 0xff);
    size >>= 8;
  }
  out += value;
  out += '\n';
}

void append_native_field(std::string& out, std::string_view key_equals_value) {
  const size_t eq = key_equals_value.find('=');
  if (eq == std::string_view::npos) return;
  append_native_field(out, key_equals_value.substr(0, eq), key_equals_value.substr(eq + 1));
}

}  // namespace rdma_eventd::daemon
