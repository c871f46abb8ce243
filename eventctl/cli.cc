#include "cli.h"

#include <getopt.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace rdma_eventctl {

using rdma_eventd::ClientStatus;

OptionSpec flag_option(const char* name, bool& on, char letter) {
  return {name, letter, false, [&on](const char*) { on = true; }};
}

OptionSpec color_option(ColorWhen& when) {
  return {"color", 0, true, [&when](const char* value) {
            auto w = parse_color_when(value);
            if (!w)
              throw UsageError{"--color: auto, always or never, not '" + std::string(value) + "'"};
            when = *w;
          }};
}

std::optional<std::span<char*>> parse_command_line(int argc, char** argv, const char* help,
                                                   Global& global, std::vector<OptionSpec> options,
                                                   Arguments order) {
  options.push_back({"socket", 0, true, [&global](const char* path) { global.socket = path; }});
  options.push_back({"help", 'h', false, [help](const char*) { std::fputs(help, stdout); }, true});
  // getopt_long's tables: a long option returns its letter, or kLongOnly + its index.
  constexpr int kLongOnly = 1000;
  std::vector<option> longs;
  // ':' first: a missing value comes back as ':', not '?'. '+': stop at the first argument.
  std::string letters = order == Arguments::kCommandFirst ? "+:" : ":";
  for (size_t i = 0; i < options.size(); ++i) {
    const OptionSpec& o = options[i];
    const int has_arg = o.takes_value ? required_argument : no_argument;
    longs.push_back(
        {o.name, has_arg, nullptr, o.letter ? o.letter : kLongOnly + static_cast<int>(i)});
    if (o.letter) letters += std::string(1, o.letter) + (o.takes_value ? ":" : "");
  }
  longs.push_back({nullptr, 0, nullptr, 0});
  optind = 0;  // 0, not 1: glibc then resets its internal state too (each command parses anew)
  opterr = 0;
  for (;;) {
    const int c = getopt_long(argc, argv, letters.c_str(), longs.data(), nullptr);
    if (c == -1) break;
    if (c == ':') throw UsageError{std::string("option '") + argv[optind - 1] + "' needs a value"};
    const OptionSpec* found = nullptr;
    for (size_t i = 0; i < options.size() && !found; ++i) {
      const OptionSpec& o = options[i];
      if (c == (o.letter ? o.letter : kLongOnly + static_cast<int>(i))) found = &o;
    }
    if (!found) throw UsageError{std::string("unknown option '") + argv[optind - 1] + "'"};
    found->apply(optarg);
    if (found->ends_command) return std::nullopt;
  }
  return std::span<char*>(argv + optind, static_cast<size_t>(argc - optind));
}

void expect_no_arguments(std::span<char*> args) {
  if (!args.empty()) throw UsageError{std::string("unexpected argument '") + args[0] + "'"};
}

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
