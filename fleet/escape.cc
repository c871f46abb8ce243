#include "escape.h"

#include <cstddef>
#include <cstdint>

namespace rdma_eventd_fleet {
namespace {

// Length of the well-formed UTF-8 sequence at s[i] (RFC 3629, table 3-7 of Unicode), or 0.
size_t sequence_length(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  const uint8_t b0 = byte(i);
  if (b0 < 0x80) return 1;
  const auto cont = [&](size_t k, uint8_t lo = 0x80, uint8_t hi = 0xbf) {
    return i + k < s.size() && byte(i + k) >= lo && byte(i + k) <= hi;
  };
  if (b0 >= 0xc2 && b0 <= 0xdf) return cont(1) ? 2 : 0;
  if (b0 == 0xe0) return cont(1, 0xa0) && cont(2) ? 3 : 0;
  if ((b0 >= 0xe1 && b0 <= 0xec) || b0 == 0xee || b0 == 0xef) return cont(1) && cont(2) ? 3 : 0;
  if (b0 == 0xed) return cont(1, 0x80, 0x9f) && cont(2) ? 3 : 0;  // no surrogates
  if (b0 == 0xf0) return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
  if (b0 >= 0xf1 && b0 <= 0xf3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
  if (b0 == 0xf4) return cont(1, 0x80, 0x8f) && cont(2) && cont(3) ? 4 : 0;
  return 0;
}

// Printable ASCII other than the backslash: what most names are made of, taken as it is.
bool plain(char c) {
  return c >= 0x20 && c < 0x7f && c != '\\';
}

void append_hex(std::string& out, uint8_t b) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += "\\x";
  out += kHex[b >> 4];
  out += kHex[b & 0xf];
}

}  // namespace

bool valid_utf8(std::string_view bytes) {
  for (size_t i = 0; i < bytes.size();) {
    const size_t n = sequence_length(bytes, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string printable(std::string_view bytes) {
  size_t i = 0;
  while (i < bytes.size() && plain(bytes[i]))
    ++i;
  if (i == bytes.size()) return std::string(bytes);
  std::string out(bytes.substr(0, i));
  out.reserve(bytes.size() + 8);
  while (i < bytes.size()) {
    const char c = bytes[i];
    if (plain(c)) {
      out += c;
      ++i;
      continue;
    }
    if (c == '\\') {
      out += "\\\\";
      ++i;
      continue;
    }
    const size_t n = sequence_length(bytes, i);
    // C1 controls are U+0080 to U+009F: 0xc2 0x80 to 0xc2 0x9f in UTF-8. Some terminals act on
    // them as on ESC [.
    const bool c1 =
        n == 2 && static_cast<uint8_t>(c) == 0xc2 && static_cast<uint8_t>(bytes[i + 1]) <= 0x9f;
    if (n <= 1 || c1) {  // n == 1 here is a C0 control or DEL
      const size_t end = c1 ? i + 2 : i + 1;
      for (; i < end; ++i)
        append_hex(out, static_cast<uint8_t>(bytes[i]));
      continue;
    }
    out.append(bytes.substr(i, n));
    i += n;
  }
  return out;
}

std::string json_text(std::string_view bytes) {
  if (valid_utf8(bytes)) return std::string(bytes);
  return printable(bytes);
}

}  // namespace rdma_eventd_fleet
