// The values records write as text: RFC 3339 times with microseconds, GUIDs and P_Keys. Each
// parser accepts exactly what its header documents, and the writers' output always reads back.
#include <array>
#include <cinttypes>
#include <climits>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "rdma_eventd/record.h"
#include "schema/record_json.h"

namespace rdma_eventd {
namespace {

// The value of one hex digit in either case, or -1.
int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// `digits` read as one hex number; nullopt unless every character is a hex digit. The caller
// bounds the length, so the value cannot overflow.
std::optional<uint64_t> hex_value(std::string_view digits) {
  uint64_t v = 0;
  for (char c : digits) {
    const int d = hex_digit(c);
    if (d < 0) return std::nullopt;
    v = (v << 4) | static_cast<uint64_t>(d);
  }
  return v;
}

}  // namespace

char* write_rfc3339_us(char* p, int64_t time_us) {
  int64_t secs = time_us / 1000000;
  int64_t micros = time_us % 1000000;
  if (micros < 0) {
    micros += 1000000;
    secs -= 1;
  }
  // Records come in bursts within one second: the date and time of day are formatted once per
  // second (per thread), the microseconds every time.
  thread_local int64_t cached_secs = INT64_MIN;
  thread_local char cached[20];  // "2026-11-22T10:15:30."
  if (secs != cached_secs) {
    const time_t t = static_cast<time_t>(secs);
    struct tm tm {};
    gmtime_r(&t, &tm);
    char buf[96];  // sized for any int fields, so the compiler can prove no truncation
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
    std::memcpy(cached, buf, sizeof cached);
    cached_secs = secs;
  }
  std::memcpy(p, cached, sizeof cached);
  // The six digits of the microseconds, two at a time.
  static constexpr std::array<char, 200> kPairs = [] {
    std::array<char, 200> t{};
    for (int i = 0; i < 100; ++i) {
      t[2 * i] = static_cast<char>('0' + i / 10);
      t[2 * i + 1] = static_cast<char>('0' + i % 10);
    }
    return t;
  }();
  const auto m = static_cast<uint32_t>(micros);
  std::memcpy(p + 20, &kPairs[2 * (m / 10000)], 2);
  std::memcpy(p + 22, &kPairs[2 * (m / 100 % 100)], 2);
  std::memcpy(p + 24, &kPairs[2 * (m % 100)], 2);
  p[26] = 'Z';
  return p + kRfc3339UsSize;
}

void append_rfc3339_us(std::string& out, int64_t time_us) {
  char text[kRfc3339UsSize];
  write_rfc3339_us(text, time_us);
  out.append(text, sizeof text);
}

std::string format_rfc3339_us(int64_t time_us) {
  std::string out;
  out.reserve(27);
  append_rfc3339_us(out, time_us);
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
  if (text.size() == 19) {  // 248a:0703:00a1:b2c0
    std::string digits;
    for (size_t i = 0; i < text.size(); ++i) {
      if (i % 5 != 4) {
        digits += text[i];
      } else if (text[i] != ':') {
        return std::nullopt;
      }
    }
    return hex_value(digits);
  }
  if (text.size() == 18 && (text.starts_with("0x") || text.starts_with("0X"))) {
    return hex_value(text.substr(2));
  }
  if (text.size() == 16) return hex_value(text);
  return std::nullopt;
}

std::string format_pkey(uint16_t pkey) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%04x", pkey);
  return buf;
}

std::optional<uint16_t> parse_pkey(std::string_view text) {
  if (text.size() < 3 || text.size() > 6 || !text.starts_with("0x")) return std::nullopt;
  const auto v = hex_value(text.substr(2));
  if (!v) return std::nullopt;
  return static_cast<uint16_t>(*v);
}

}  // namespace rdma_eventd
