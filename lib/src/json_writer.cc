#include "schema/json_writer.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstring>

namespace rdma_eventd {
namespace {

// Length of the valid UTF-8 sequence starting at s[i], or 0 when it is not valid.
size_t utf8_sequence_length(std::string_view s, size_t i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  size_t len;
  uint32_t min;
  if (b0 < 0x80) return 1;
  if ((b0 & 0xE0) == 0xC0) {
    len = 2;
    min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3;
    min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4;
    min = 0x10000;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  uint32_t cp = b0 & (0xFF >> (len + 1));
  for (size_t k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

// Bytes that a JSON string cannot hold as they are (control characters, '"', '\\') or that
// start a multi-byte UTF-8 sequence to check.
constexpr std::array<bool, 256> kSpecial = [] {
  std::array<bool, 256> t{};
  for (size_t c = 0; c < 256; ++c)
    t[c] = c < 0x20 || c == '"' || c == '\\' || c >= 0x80;
  return t;
}();

uint64_t load8(const char* p) {
  uint64_t w;
  std::memcpy(&w, p, 8);
  return w;
}

uint32_t load4(const char* p) {
  uint32_t w;
  std::memcpy(&w, p, 4);
  return w;
}

// True when one of the 8 bytes of w is one kSpecial marks.
bool special_in_word(uint64_t w) {
  constexpr uint64_t kOnes = 0x0101010101010101ULL;
  constexpr uint64_t kHigh = 0x8080808080808080ULL;
  // Non-zero exactly when some byte of v is zero (which byte may be misplaced by a borrow;
  // only whether there is one matters here).
  auto zero_byte = [](uint64_t v) { return (v - kOnes) & ~v & kHigh; };
  if (w & kHigh) return true;  // a byte >= 0x80: UTF-8 to check
  // w's bytes are all < 0x80 here. The lowest byte below 0x20 gets no borrow from the bytes
  // under it and wraps to 0xE0 or more; a byte >= 0x20 with no borrow stays below 0x80. So
  // this is non-zero exactly when some byte is below 0x20.
  const uint64_t control = (w - 0x20 * kOnes) & kHigh;
  return (control | zero_byte(w ^ ('"' * kOnes)) | zero_byte(w ^ ('\\' * kOnes))) != 0;
}

#if defined(__GNUC__)
// The same for 16 bytes at once (SSE2 on x86-64, NEON on arm64).
bool special_in_16(const char* p) {
  using Bytes = signed char __attribute__((vector_size(16)));
  Bytes v;
  std::memcpy(&v, p, 16);
  // Signed: a byte >= 0x80 is negative, so "below 0x20" also finds the UTF-8 to check.
  const Bytes m = (v < 0x20) | (v == '"') | (v == '\\');
  uint64_t half[2];
  std::memcpy(half, &m, 16);
  return (half[0] | half[1]) != 0;
}
#else
bool special_in_16(const char* p) {
  return special_in_word(load8(p)) || special_in_word(load8(p + 8));
}
#endif

// True when s has a byte that kSpecial marks. Almost every string a record holds (names,
// GUIDs, the stream id) has none, and is then copied as it is; so this is on every record's
// path. Strings are read in whole words, the last one overlapping the one before it, rather
// than byte by byte: a byte read twice is still the same byte.
bool has_special(std::string_view s) {
  const char* p = s.data();
  const size_t n = s.size();
  if (n >= 16) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
      if (special_in_16(p + i)) return true;
    }
    return i != n && special_in_16(p + n - 16);
  }
  if (n >= 8) return special_in_word(load8(p)) || special_in_word(load8(p + n - 8));
  if (n >= 4) return special_in_word(load4(p) | uint64_t{load4(p + n - 4)} << 32);
  for (size_t i = 0; i < n; ++i) {
    if (kSpecial[static_cast<unsigned char>(p[i])]) return true;
  }
  return false;
}

}  // namespace

void append_json_string(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  if (!has_special(s)) {
    const size_t at = out.size();
    out.append(s.size() + 2, '"');
    if (!s.empty()) std::memcpy(out.data() + at + 1, s.data(), s.size());
    return;
  }
  out += '"';
  // Characters that need no escape are appended in runs: most strings are all one run.
  size_t run = 0;
  size_t i = 0;
  auto flush = [&] { out.append(s.data() + run, i - run); };
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (!kSpecial[c]) {
      ++i;
      continue;
    }
    if (c >= 0x80) {
      const size_t len = utf8_sequence_length(s, i);
      if (len != 0) {
        i += len;  // valid UTF-8 stays as it is, part of the run
        continue;
      }
      flush();
      out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
      run = ++i;
      continue;
    }
    flush();
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        out += "\\u00";
        out += kHex[c >> 4];
        out += kHex[c & 0xF];
    }
    run = ++i;
  }
  flush();
  out += '"';
}

char* write_json_string(char* p, std::string_view s) {
  if (!has_special(s)) {
    *p++ = '"';
    if (!s.empty()) std::memcpy(p, s.data(), s.size());
    p += s.size();
    *p++ = '"';
    return p;
  }
  // Rare (a name with a quote, a control character or non-ASCII text): one escaper for both.
  std::string escaped;
  append_json_string(escaped, s);
  std::memcpy(p, escaped.data(), escaped.size());
  return p + escaped.size();
}

void JsonWriter::key(std::string_view k) {
  // Keys are the program's own names: plain ASCII with nothing to escape.
  const size_t at = out_.size();
  out_.resize(at + k.size() + (first_ ? 3 : 4));
  char* p = out_.data() + at;
  if (!first_) *p++ = ',';
  *p++ = '"';
  p = std::copy(k.begin(), k.end(), p);
  *p++ = '"';
  *p = ':';
  first_ = false;
  after_key_ = true;
}

void JsonWriter::value(std::string_view s) {
  value_prefix();
  append_json_string(out_, s);
}

void JsonWriter::value(uint64_t v) {
  value_prefix();
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  // (pointer, length), not (first, last): the iterator form goes through replace().
  out_.append(buf, static_cast<size_t>(end - buf));
}

void JsonWriter::value(int64_t v) {
  value_prefix();
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out_.append(buf, static_cast<size_t>(end - buf));
}

void JsonWriter::value(double v) {
  value_prefix();
  if (!std::isfinite(v)) {
    out_ += "null";
    return;
  }
  char buf[32];
  // Shortest representation that round-trips: 200 stays "200", 2.5 stays "2.5".
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out_.append(buf, static_cast<size_t>(end - buf));
}

void JsonWriter::value(bool v) {
  value_prefix();
  out_ += v ? "true" : "false";
}

void JsonWriter::null() {
  value_prefix();
  out_ += "null";
}

void JsonWriter::raw(std::string_view json) {
  value_prefix();
  out_.append(json);
}

}  // namespace rdma_eventd
