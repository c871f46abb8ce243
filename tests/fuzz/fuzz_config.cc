// Fuzzes the daemon's configuration parser (parse_config, daemon/config/config.cc) with arbitrary
// file contents. Beyond "no crash, no leak, no undefined behaviour, no exception" (a bad file must
// end in one message and exit 78, never in an abort), it checks:
//  - text that is not JSON is an error about the file as a whole;
//  - the result depends on the JSON value only: the same value written compactly or indented
//    gives the same configuration, or the same error;
//  - a configuration that parses, written back with every key it knows in its canonical form
//    (and the keys it does not know left as they were), parses to the same configuration;
//  - the values a configuration holds are within their documented limits.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <variant>

#include "config/config.h"
#include "fuzz_check.h"
#include "fuzz_json.h"

namespace {

using nlohmann::json;
using namespace rdma_eventd;
using namespace rdma_eventd::daemon;

constexpr std::string_view kFile = "fuzz.json";

std::string describe(const ConfigResult& r) {
  if (const auto* e = std::get_if<ConfigError>(&r)) return "error: " + e->message();
  return "a configuration";
}

bool same(const ConfigResult& a, const ConfigResult& b) {
  const auto* ca = std::get_if<Config>(&a);
  const auto* cb = std::get_if<Config>(&b);
  if (ca && cb) return *ca == *cb;
  if (ca || cb) return false;
  const auto& ea = std::get<ConfigError>(a);
  const auto& eb = std::get<ConfigError>(b);
  return ea.file == eb.file && ea.key == eb.key && ea.reason == eb.reason;
}

json texts(const std::vector<DevicePattern>& patterns) {
  json out = json::array();
  for (const auto& p : patterns)
    out.push_back(p.text());
  return out;
}

// The configuration as a file: `root` (the file as parsed) with every key the parser knows set
// from `c` in the form the documentation gives.
json canonical(json root, const Config& c) {
  root["log_level"] = c.log_level;
  root["devices"]["include"] = texts(c.devices.include());
  root["devices"]["exclude"] = texts(c.devices.exclude());
  json severity = json::object();
  for (int i = 0; i < kEventKindCount; ++i) {
    // A port_health record takes its verdict's severity, a link_quality record its change's:
    // the keys are refused.
    if (static_cast<EventKind>(i) == EventKind::kPortHealth ||
        static_cast<EventKind>(i) == EventKind::kLinkQuality)
      continue;
    severity[std::string(event_name(static_cast<EventKind>(i)))] =
        std::string(severity_name(c.severities[static_cast<size_t>(i)]));
  }
  root["severity"] = severity;
  root["journal"]["enabled"] = c.journal_enabled;
  root["journal"]["identifier"] = c.journal_identifier;
  json& s = root["socket"];
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", c.socket.mode);
  s["enabled"] = c.socket.enabled;
  s["path"] = c.socket.path;
  s["mode"] = mode;
  s["group"] = c.socket.group;
  s["max_subscribers"] = c.socket.max_subscribers;
  s["max_queued_bytes"] = c.socket.max_queued_bytes;
  s["max_request_bytes"] = c.socket.max_request_bytes;
  s["ring_records"] = c.socket.ring_records;
  // Names in the allow-lists are resolved to ids when the file is read: the ids read back alike.
  s["allow_users"] = c.socket.allow_users;
  s["allow_groups"] = c.socket.allow_groups;
  s["max_subscribers_per_user"] = c.socket.max_subscribers_per_user;
  s["max_filters"] = c.socket.max_filters;
  s["max_requests_per_second"] = c.socket.max_requests_per_second;
  return root;
}

void check_config(const Config& c, const json& root, std::string_view text) {
  const std::string input(text);
  FUZZ_CHECK(c.socket.mode <= 0777, input);
  FUZZ_CHECK(c.socket.path.starts_with("/") && c.socket.path.size() <= 107, input);
  FUZZ_CHECK(!c.journal_identifier.empty(), input);
  FUZZ_CHECK(c.socket.max_subscribers >= 1, input);
  FUZZ_CHECK(c.socket.max_request_bytes >= 256, input);

  const std::string rewritten = canonical(root, c).dump();
  const ConfigResult again = parse_config(rewritten, kFile);
  FUZZ_CHECK(std::holds_alternative<Config>(again), describe(again) + "\n  " + rewritten);
  FUZZ_CHECK(std::get<Config>(again) == c, rewritten);

  // Device selection with the patterns as given: globs, GUIDs, anything.
  (void)c.devices.selects("mlx5_0", 0x248a070300a1b2c0);
  (void)c.devices.selects("", 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const ConfigResult result = parse_config(text, kFile);
  if (const auto* e = std::get_if<ConfigError>(&result)) {
    FUZZ_CHECK(e->file == kFile && !e->reason.empty(), e->message());
  }

  int depth = 0;
  const json root = fuzz::parse_json(text, &depth);
  if (root.is_discarded()) {
    const auto* e = std::get_if<ConfigError>(&result);
    FUZZ_CHECK(e != nullptr && e->key.empty(), std::string(text));
    return 0;
  }
  if (depth > fuzz::kMaxDepthWrittenBack) return 0;
  for (const std::string& form : {root.dump(), root.dump(2)}) {
    const ConfigResult again = parse_config(form, kFile);
    FUZZ_CHECK(same(result, again), describe(result) + " / " + describe(again) + "\n  " + form);
  }
  if (const auto* c = std::get_if<Config>(&result)) check_config(*c, root, text);
  return 0;
}
