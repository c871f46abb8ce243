#include "escape.h"

#include <algorithm>
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

constexpr char kHex[] = "0123456789abcdef";

void append_hex(std::string& out, uint8_t b) {
  out += "\\x";
  out += kHex[b >> 4];
  out += kHex[b & 0xf];
}

// The code point of one well-formed UTF-8 sequence of two to four bytes.
uint32_t code_point(std::string_view seq) {
  const auto b = [&](size_t k) { return static_cast<uint32_t>(static_cast<uint8_t>(seq[k])); };
  if (seq.size() == 2) return (b(0) & 0x1f) << 6 | (b(1) & 0x3f);
  if (seq.size() == 3) return (b(0) & 0x0f) << 12 | (b(1) & 0x3f) << 6 | (b(2) & 0x3f);
  return (b(0) & 0x07) << 18 | (b(1) & 0x3f) << 12 | (b(2) & 0x3f) << 6 | (b(3) & 0x3f);
}

// \uXXXX, or \UXXXXXXXX beyond the Basic Multilingual Plane.
void append_code_point(std::string& out, uint32_t cp) {
  const int digits = cp > 0xffff ? 8 : 4;
  out += cp > 0xffff ? "\\U" : "\\u";
  for (int shift = (digits - 1) * 4; shift >= 0; shift -= 4)
    out += kHex[(cp >> shift) & 0xf];
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
    const uint32_t cp = n >= 2 ? code_point(bytes.substr(i, n)) : 0;
    // C1 controls are U+0080 to U+009F: some terminals act on them as on ESC [. Shown by their
    // bytes, as C0 controls (n == 1 here) and bytes that are not UTF-8 (n == 0) are.
    if (n <= 1 || cp <= 0x9f) {
      const size_t end = i + std::max<size_t>(n, 1);
      for (; i < end; ++i)
        append_hex(out, static_cast<uint8_t>(bytes[i]));
      continue;
    }
    append_code_point(out, cp);
    i += n;
  }
  return out;
}

std::string json_text(std::string_view bytes) {
  if (valid_utf8(bytes) && bytes.find('\\') == std::string_view::npos) return std::string(bytes);
  return printable(bytes);
}

}  // namespace rdma_eventd_fleet
