#include "history_time.h"

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <string>

namespace rdma_eventctl {
namespace {

constexpr int64_t kSecond = 1'000'000;
// Far beyond any journal (about 31,700 years): no sum of spans overflows.
constexpr int64_t kMaxSpan = int64_t{1} << 60;

struct Unit {
  std::string_view name;
  int64_t us;
};
constexpr Unit kUnits[] = {
    {"us", 1},
    {"usec", 1},
    {"ms", 1000},
    {"msec", 1000},
    {"s", kSecond},
    {"sec", kSecond},
    {"second", kSecond},
    {"seconds", kSecond},
    {"m", 60 * kSecond},
    {"min", 60 * kSecond},
    {"minute", 60 * kSecond},
    {"minutes", 60 * kSecond},
    {"h", 3600 * kSecond},
    {"hr", 3600 * kSecond},
    {"hour", 3600 * kSecond},
    {"hours", 3600 * kSecond},
    {"d", 86400 * kSecond},
    {"day", 86400 * kSecond},
    {"days", 86400 * kSecond},
    {"w", 604800 * kSecond},
    {"week", 604800 * kSecond},
    {"weeks", 604800 * kSecond},
};

// "1h30min", "30 min": a sum of numbers with units; a bare number is seconds.
std::optional<int64_t> parse_span(std::string_view text) {
  int64_t total = 0;
  size_t i = 0;
  bool any = false;
  while (i < text.size()) {
    while (i < text.size() && text[i] == ' ')
      ++i;
    if (i == text.size()) break;
    // A number, with a fraction ("1.5h", "@1764000000.123456").
    size_t digits = i;
    while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) {
      ++digits;
    }
    if (digits == i || digits - i > 12) return std::nullopt;
    const int64_t whole = std::stoll(std::string(text.substr(i, digits - i)));
    int64_t fraction = 0, fraction_scale = 1;
    if (digits < text.size() && text[digits] == '.') {
      ++digits;
      while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) {
        if (fraction_scale < 1'000'000) {
          fraction = fraction * 10 + (text[digits] - '0');
          fraction_scale *= 10;
        }
        ++digits;
      }
    }
    i = digits;
    while (i < text.size() && text[i] == ' ')
      ++i;
    size_t letters = i;
    while (letters < text.size() && std::isalpha(static_cast<unsigned char>(text[letters]))) {
      ++letters;
    }
    const std::string_view unit = text.substr(i, letters - i);
    int64_t scale = unit.empty() ? kSecond : 0;
    for (const Unit& u : kUnits) {
      if (u.name == unit) scale = u.us;
    }
    if (scale == 0 || whole > kMaxSpan / scale) return std::nullopt;
    total += whole * scale + fraction * scale / fraction_scale;
    if (total > kMaxSpan) return std::nullopt;
    i = letters;
    any = true;
  }
  return any ? std::optional<int64_t>(total) : std::nullopt;
}

// Local midnight of the day `days` after today.
int64_t local_midnight(int64_t now_us, int days) {
  const time_t now = static_cast<time_t>(now_us / kSecond);
  std::tm tm{};
  localtime_r(&now, &tm);
  tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
  tm.tm_mday += days;
  tm.tm_isdst = -1;
  return static_cast<int64_t>(std::mktime(&tm)) * kSecond;
}

// "YYYY-MM-DD[ HH:MM[:SS]]", local time.
std::optional<int64_t> parse_absolute(std::string_view text) {
  const std::string s(text);
  int consumed = 0;
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (std::sscanf(s.c_str(), "%4d-%2d-%2d%n", &year, &month, &day, &consumed) != 3 ||
      consumed != 10) {
    return std::nullopt;
  }
  if (s.size() > 10) {
    if (s[10] != ' ' && s[10] != 'T') return std::nullopt;
    const std::string clock = s.substr(11);
    int used = 0;
    if (std::sscanf(clock.c_str(), "%2d:%2d%n", &hour, &minute, &used) != 2) return std::nullopt;
    if (clock.size() > static_cast<size_t>(used)) {
      int more = 0;
      if (std::sscanf(clock.c_str() + used, ":%2d%n", &second, &more) != 1 ||
          used + more != static_cast<int>(clock.size())) {
        return std::nullopt;
      }
    }
  }
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) {
    return std::nullopt;
  }
  std::tm tm{.tm_sec = second,
             .tm_min = minute,
             .tm_hour = hour,
             .tm_mday = day,
             .tm_mon = month - 1,
             .tm_year = year - 1900,
             .tm_isdst = -1};
  const time_t t = std::mktime(&tm);
  // A day that does not exist (30 February) comes back as another: refused, as journalctl does.
  if (t == static_cast<time_t>(-1) || tm.tm_mday != day || tm.tm_mon != month - 1) {
    return std::nullopt;
  }
  return static_cast<int64_t>(t) * kSecond;
}

}  // namespace

std::optional<int64_t> parse_journal_time(std::string_view text, int64_t now_us) {
  if (text == "now") return now_us;
  if (text == "today") return local_midnight(now_us, 0);
  if (text == "yesterday") return local_midnight(now_us, -1);
  if (text == "tomorrow") return local_midnight(now_us, 1);
  if (text.empty()) return std::nullopt;
  if (text[0] == '@') {
    const auto span = parse_span(text.substr(1));
    return span ? std::optional<int64_t>(*span) : std::nullopt;
  }
  if (text[0] == '-' || text[0] == '+') {
    const auto span = parse_span(text.substr(1));
    if (!span) return std::nullopt;
    return text[0] == '-' ? now_us - *span : now_us + *span;
  }
  constexpr std::string_view kAgo = " ago";
  if (text.size() > kAgo.size() && text.ends_with(kAgo)) {
    const auto span = parse_span(text.substr(0, text.size() - kAgo.size()));
    return span ? std::optional<int64_t>(now_us - *span) : std::nullopt;
  }
  return parse_absolute(text);
}

}  // namespace rdma_eventctl
