#include "cli.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace rdma_eventctl {

using rdma_eventd::ClientStatus;

std::optional<std::chrono::milliseconds> parse_duration(std::string_view text) {
  size_t digits = 0;
  while (digits < text.size() &&
         ((text[digits] >= '0' && text[digits] <= '9') || text[digits] == '.'))
    ++digits;
  if (digits == 0) return std::nullopt;
  const std::string number(text.substr(0, digits));
  char* end = nullptr;
  const double value = std::strtod(number.c_str(), &end);
  if (end != number.c_str() + number.size() || !std::isfinite(value)) return std::nullopt;
  const std::string_view unit = text.substr(digits);
  double ms;
  if (unit.empty() || unit == "s") {
    ms = value * 1000;
  } else if (unit == "ms") {
    ms = value;
  } else if (unit == "m" || unit == "min") {
    ms = value * 60000;
  } else if (unit == "h") {
    ms = value * 3600000;
  } else {
    return std::nullopt;
  }
  if (ms > 1e12) return std::nullopt;
  return std::chrono::milliseconds(static_cast<int64_t>(std::llround(ms)));
}

std::optional<ColorWhen> parse_color_when(std::string_view text) {
  if (text == "auto") return ColorWhen::kAuto;
  if (text == "always") return ColorWhen::kAlways;
  if (text == "never") return ColorWhen::kNever;
  return std::nullopt;
}

bool use_color(ColorWhen when, int fd) {
  if (when == ColorWhen::kAlways) return true;
  if (when == ColorWhen::kNever) return false;
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color && *no_color) return false;
  return isatty(fd) == 1;
}

std::unique_ptr<rdma_eventd::Client> connect_or_report(const Global& g,
                                                       rdma_eventd::Client::Duration timeout) {
  std::unique_ptr<rdma_eventd::Client> c;
  std::string error;
  if (rdma_eventd::Client::connect(g.socket, timeout, c, &error) != ClientStatus::kOk) {
    std::fprintf(stderr, "%s: cannot reach rdma-eventd: %s\n", g.program.c_str(), error.c_str());
    return nullptr;
  }
  return c;
}

int report_failure(const Global& g, ClientStatus s, const rdma_eventd::Client& c) {
  std::fprintf(stderr, "%s: %s\n", g.program.c_str(), c.last_error().c_str());
  switch (s) {
    case ClientStatus::kRefused:
    case ClientStatus::kProtocol:
      return kExitProtocol;
    default:
      return kExitUnavailable;
  }
}

std::vector<std::string> split_commas(std::string_view text) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t comma = std::min(text.find(',', pos), text.size());
    if (comma > pos) out.emplace_back(text.substr(pos, comma - pos));
    pos = comma + 1;
  }
  return out;
}

}  // namespace rdma_eventctl
