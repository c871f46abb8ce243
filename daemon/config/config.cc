#include "config/config.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <nlohmann/json.hpp>

#include "config/account_ids.h"
#include "rdma_eventd/internal/enum_names.h"
#include "rdma_eventd/internal/small_file.h"
#include "rdma_eventd/record.h"
#include "schema/json_error.h"  // shared with the request parser

namespace rdma_eventd::daemon {
namespace {

using nlohmann::json;

constexpr size_t kMaxConfigBytes = 1 << 20;  // a configuration is a few hundred bytes
constexpr size_t kMaxSocketPath = 107;       // sizeof(sockaddr_un::sun_path) - 1

constexpr std::string_view kLogLevels[] = {"trace", "debug",    "info", "warning",
                                           "error", "critical", "off"};

// Thrown inside the parser only, turned into ConfigError at its boundary.
struct Bad {
  std::string key;
  std::string reason;
};

std::string type_name(const json& v) {
  // Indexed by json::value_t: null, object, array, string, boolean, the three numbers; binary and
  // discarded are past the end.
  static constexpr std::array<std::string_view, 8> kNames = {
      "null", "an object", "an array", "a string", "a boolean", "a number", "a number", "a number"};
  return std::string(internal::enum_name(kNames, v.type(), "an unexpected value"));
}

void expect(const json& v, json::value_t t, std::string_view want, const std::string& key) {
  if (v.type() != t) throw Bad{key, "expected " + std::string(want) + ", got " + type_name(v)};
}

// `v` as expect() takes it, and of at most `max` entries: "at most <max> <entries>".
const json& expect_at_most(const json& v, json::value_t t, std::string_view want,
                           const std::string& key, size_t max, std::string_view entries) {
  expect(v, t, want, key);
  if (v.size() > max) throw Bad{key, "at most " + std::to_string(max) + " " + std::string(entries)};
  return v;
}

void reject_unknown(const json& obj, std::initializer_list<std::string_view> known,
                    const std::string& prefix) {
  for (const auto& [k, v] : obj.items()) {
    bool ok = false;
    for (auto name : known)
      ok = ok || name == k;
    if (!ok) {
      std::string list;
      for (auto name : known)
        list += (list.empty() ? "" : ", ") + std::string(name);
      throw Bad{prefix + k, "unknown key (known: " + list + ")"};
    }
  }
}

// v[name], when it is there, as a boolean into `out`; prefix + name is its key in errors.
void read_bool(const json& v, const std::string& prefix, const char* name, bool& out) {
  if (!v.contains(name)) return;
  expect(v[name], json::value_t::boolean, "a boolean", prefix + name);
  out = v[name].get<bool>();
}

// v[name], when it is there, as a string into `out`; true when it was there.
bool read_string(const json& v, const std::string& prefix, const char* name, std::string& out) {
  if (!v.contains(name)) return false;
  expect(v[name], json::value_t::string, "a string", prefix + name);
  out = v[name].get<std::string>();
  return true;
}

std::vector<DevicePattern> pattern_list(const json& v, const std::string& key) {
  expect(v, json::value_t::array, "an array of strings", key);
  std::vector<DevicePattern> out;
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string item_key = key + "[" + std::to_string(i) + "]";
    if (!v[i].is_string()) throw Bad{item_key, "expected a string, got " + type_name(v[i])};
    auto pattern = DevicePattern::parse(v[i].get_ref<const std::string&>(), nullptr);
    if (!pattern) throw Bad{item_key, "empty pattern"};
    out.push_back(std::move(*pattern));
  }
  return out;
}

void parse_devices(const json& v, Config& c) {
  expect(v, json::value_t::object, "an object", "devices");
  reject_unknown(v, {"include", "exclude"}, "devices.");
  std::vector<DevicePattern> include = c.devices.include();
  std::vector<DevicePattern> exclude = c.devices.exclude();
  if (v.contains("include")) include = pattern_list(v["include"], "devices.include");
  if (v.contains("exclude")) exclude = pattern_list(v["exclude"], "devices.exclude");
  c.devices = DeviceFilter(std::move(include), std::move(exclude));
}

void parse_severity(const json& v, Config& c) {
  expect(v, json::value_t::object, "an object", "severity");
  for (const auto& [name, sev] : v.items()) {
    const std::string key = "severity." + name;
    auto kind = event_from_name(name);
    if (!kind) throw Bad{key, "unknown event name (see docs/records.md for the list)"};
    if (*kind == EventKind::kPortHealth)
      throw Bad{key, "port_health records take the severity of their verdict (docs/health.md)"};
    if (*kind == EventKind::kLinkQuality)
      throw Bad{key, "link_quality records take the severity of their change (docs/records.md)"};
    if (!sev.is_string()) throw Bad{key, "expected a string, got " + type_name(sev)};
    auto s = severity_from_name(sev.get<std::string>());
    if (!s) {
      throw Bad{key, "unknown severity '" + sev.get<std::string>() +
                         "' (debug, info, notice, warning, error, critical)"};
    }
    c.severities[static_cast<size_t>(*kind)] = *s;
  }
}

void parse_journal_budget(const json& v, JournalBudgetConfig& b);
void parse_health(const json& v, HealthConfig& h);

void parse_journal(const json& v, Config& c) {
  expect(v, json::value_t::object, "an object", "journal");
  reject_unknown(v, {"enabled", "identifier", "budget"}, "journal.");
  read_bool(v, "journal.", "enabled", c.journal_enabled);
  if (read_string(v, "journal.", "identifier", c.journal_identifier) &&
      c.journal_identifier.empty()) {
    throw Bad{"journal.identifier", "must not be empty"};
  }
  if (v.contains("budget")) parse_journal_budget(v["budget"], c.journal_budget);
}

// Whether v is an integer that is not negative. The JSON parser reads "-0" as a signed integer:
// it is 0, and written back it is "0", so it must be read as 0 too.
bool is_unsigned_integer(const json& v) {
  return v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0);
}

// An unsigned integer key within [min, max].
uint64_t bounded(const json& v, const std::string& key, uint64_t min, uint64_t max) {
  if (!is_unsigned_integer(v)) throw Bad{key, "expected an unsigned integer, got " + type_name(v)};
  const auto n = v.get<uint64_t>();
  if (n < min || n > max) {
    throw Bad{key, "must be from " + std::to_string(min) + " to " + std::to_string(max)};
  }
  return n;
}

// v[name], when it is there, as an unsigned integer within [min, max] into `out`.
template <typename T>
void read_bounded(const json& v, const std::string& prefix, const char* name, T& out, uint64_t min,
                  uint64_t max) {
  if (v.contains(name)) out = static_cast<T>(bounded(v[name], prefix + name, min, max));
}

// socket.allow_users / allow_groups: names (strings) or ids (numbers), as ids.
std::vector<uint32_t> id_list(const json& v, bool user, const std::string& key) {
  expect(v, json::value_t::array, "an array of names and numeric ids", key);
  std::vector<uint32_t> out;
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string item_key = key + "[" + std::to_string(i) + "]";
    if (v[i].is_string()) {
      const std::string name = v[i].get<std::string>();
      if (name.empty()) throw Bad{item_key, "empty name"};
      try {
        out.push_back(account_id(user ? Account::kUser : Account::kGroup, name));
      } catch (const std::runtime_error& e) {
        throw Bad{item_key, e.what()};
      }
    } else if (v[i].is_number()) {
      // (uid_t)-1 means "no change" to chown(2) and is nobody's id.
      constexpr uint64_t kMaxId = 4294967294u;
      if (!is_unsigned_integer(v[i]) || v[i].get<uint64_t>() > kMaxId) {
        throw Bad{item_key, "a numeric id is an integer from 0 to " + std::to_string(kMaxId)};
      }
      out.push_back(static_cast<uint32_t>(v[i].get<uint64_t>()));
    } else {
      throw Bad{item_key, "expected a name or a numeric id, got " + type_name(v[i])};
    }
  }
  return out;
}

void parse_socket_limits(const json& v, SocketConfig& s) {
  read_bounded(v, "socket.", "max_subscribers_per_user", s.max_subscribers_per_user, 1, 65536);
  read_bounded(v, "socket.", "max_filters", s.max_filters, 1, 65536);
  read_bounded(v, "socket.", "max_requests_per_second", s.max_requests_per_second, 1, 1000000);
  if (v.contains("allow_users"))
    s.allow_users = id_list(v["allow_users"], true, "socket.allow_users");
  if (v.contains("allow_groups")) {
    s.allow_groups = id_list(v["allow_groups"], false, "socket.allow_groups");
  }
}

void parse_socket(const json& v, Config& c) {
  expect(v, json::value_t::object, "an object", "socket");
  reject_unknown(v,
                 {"enabled", "path", "mode", "group", "max_subscribers", "max_queued_bytes",
                  "max_request_bytes", "ring_records", "allow_users", "allow_groups",
                  "max_subscribers_per_user", "max_filters", "max_requests_per_second"},
                 "socket.");
  SocketConfig& s = c.socket;
  read_bool(v, "socket.", "enabled", s.enabled);
  if (read_string(v, "socket.", "path", s.path)) {
    if (!s.path.starts_with("/")) throw Bad{"socket.path", "must be an absolute path"};
    if (s.path.size() > kMaxSocketPath) {
      throw Bad{"socket.path", "longer than " + std::to_string(kMaxSocketPath) +
                                   " bytes, the limit of a Unix socket address"};
    }
  }
  if (v.contains("mode")) {
    expect(v["mode"], json::value_t::string, "a string of octal digits", "socket.mode");
    const std::string text = v["mode"].get<std::string>();
    uint32_t mode = 0;
    bool ok = !text.empty() && text.size() <= 4;
    for (char ch : text) {
      ok = ok && ch >= '0' && ch <= '7';
      mode = mode * 8 + static_cast<uint32_t>(ch - '0');
    }
    if (!ok || mode > 0777) {
      throw Bad{"socket.mode", "'" + text + "' is not a permission mode like \"0660\""};
    }
    s.mode = mode;
  }
  read_string(v, "socket.", "group", s.group);
  read_bounded(v, "socket.", "max_subscribers", s.max_subscribers, 1, 65536);
  read_bounded(v, "socket.", "max_queued_bytes", s.max_queued_bytes, 65536, uint64_t{1} << 32);
  read_bounded(v, "socket.", "max_request_bytes", s.max_request_bytes, 256, 1 << 20);
  read_bounded(v, "socket.", "ring_records", s.ring_records, 0, 1 << 20);
  parse_socket_limits(v, s);
}

// The journal budget (docs/health.md): records per second and bursts, per port and for the
// host, and how often a port over its budget gets a summary.
void parse_journal_budget(const json& v, JournalBudgetConfig& b) {
  expect(v, json::value_t::object, "an object", "journal.budget");
  reject_unknown(
      v, {"enabled", "port_rate", "port_burst", "host_rate", "host_burst", "summary_interval_s"},
      "journal.budget.");
  read_bool(v, "journal.budget.", "enabled", b.enabled);
  constexpr uint64_t kMaxRate = 1000000;

  read_bounded(v, "journal.budget.", "port_rate", b.port_rate, 1, kMaxRate);
  read_bounded(v, "journal.budget.", "port_burst", b.port_burst, 1, kMaxRate);
  read_bounded(v, "journal.budget.", "host_rate", b.host_rate, 1, kMaxRate);
  read_bounded(v, "journal.budget.", "host_burst", b.host_burst, 1, kMaxRate);
  read_bounded(v, "journal.budget.", "summary_interval_s", b.summary_interval_s, 1, 3600);
}

// health.expected[i]: {"devices": PATTERN, "ports": [N...], "width": "4x", "speed": "hdr"}.
PortExpectation parse_expectation(const json& v, const std::string& key) {
  expect(v, json::value_t::object, "an object", key);
  reject_unknown(v, {"devices", "ports", "width", "speed"}, key + ".");
  if (!v.contains("devices")) throw Bad{key + ".devices", "missing: a glob on device names"};
  PortExpectation e;
  expect(v["devices"], json::value_t::string, "a string", key + ".devices");
  auto devices = DevicePattern::parse(v["devices"].get_ref<const std::string&>(), nullptr);
  if (!devices) throw Bad{key + ".devices", "empty pattern"};
  e.devices = std::move(*devices);
  if (v.contains("ports")) {
    expect(v["ports"], json::value_t::array, "an array of port numbers", key + ".ports");
    for (size_t i = 0; i < v["ports"].size(); ++i) {
      const std::string item = key + ".ports[" + std::to_string(i) + "]";
      e.ports.push_back(static_cast<uint32_t>(bounded(v["ports"][i], item, 1, 255)));
    }
  }
  if (v.contains("width")) {
    expect(v["width"], json::value_t::string, "a string", key + ".width");
    const std::string text = v["width"].get<std::string>();
    auto lanes = lanes_from_name(text);
    if (!lanes || *lanes == 0) {
      throw Bad{key + ".width", "unknown width '" + text + "' (1x, 2x, 4x, 8x, 12x)"};
    }
    e.lanes = *lanes;
  }
  if (v.contains("speed")) {
    expect(v["speed"], json::value_t::string, "a string", key + ".speed");
    const std::string text = v["speed"].get<std::string>();
    auto speed = link_speed_from_name(text);
    if (!speed || *speed == LinkSpeed::kUnknown) {
      throw Bad{key + ".speed",
                "unknown speed '" + text + "' (sdr, ddr, qdr, fdr10, fdr, edr, hdr, ndr, xdr)"};
    }
    e.speed = *speed;
  }
  return e;
}

// The longest window or period port health takes, in seconds.
constexpr uint64_t kWeek = 7 * 24 * 3600;

// How many errors of one source, within what window, make a port degraded, and how long it
// stays so; or that the source does not count at all.
void parse_error_threshold(const json& v, const std::string& key, ErrorThreshold& t) {
  expect(v, json::value_t::object, "an object", key);
  reject_unknown(v, {"count", "errors", "window_s", "quiet_s"}, key + ".");
  read_bool(v, key + ".", "count", t.counted);
  read_bounded(v, key + ".", "errors", t.errors, 1, kMaxErrorsCounted);
  read_bounded(v, key + ".", "window_s", t.window_s, 1, kWeek);
  read_bounded(v, key + ".", "quiet_s", t.quiet_s, 1, kWeek);
}

// health.expected_adapters: ["0c42:a103:00f6:5e44", ...], node GUIDs as records write them
// (four groups of four hex digits, lower case); as many as the inventory holds, no duplicates.
constexpr size_t kMaxExpectedAdapters = 1024;
std::vector<std::string> parse_expected_adapters(const json& v) {
  const std::string key = "health.expected_adapters";
  const json& list = expect_at_most(v, json::value_t::array, "an array of node GUIDs", key,
                                    kMaxExpectedAdapters, "adapters");
  std::vector<std::string> guids;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string item = key + "[" + std::to_string(i) + "]";
    expect(list[i], json::value_t::string, "a string", item);
    const std::string guid = list[i].get<std::string>();
    // Only the form records and the inventory write, so that it compares with theirs.
    const std::optional<uint64_t> value = parse_guid(guid);
    if (!value || *value == 0 || format_guid(*value) != guid) {
      throw Bad{item, "'" + guid +
                          "' is not a node GUID as rdma-eventctl inventory shows it "
                          "(0c42:a103:00f6:5e44)"};
    }
    if (std::find(guids.begin(), guids.end(), guid) != guids.end()) {
      throw Bad{item, "'" + guid + "' is listed twice"};
    }
    guids.push_back(guid);
  }
  std::sort(guids.begin(), guids.end());
  return guids;
}

// Port health (docs/health.md): when a port is flapping, how long it must stay quiet, what
// counts as degraded, and how long gone ports are remembered.
void parse_health(const json& v, HealthConfig& h) {
  expect(v, json::value_t::object, "an object", "health");
  reject_unknown(v,
                 {"flap_downs", "flap_window_s", "flap_quiet_s", "degraded_below_last_healthy",
                  "expected", "expected_adapters", "forget_gone_after_s", "enabled",
                  "application_errors", "firmware_errors", "queue_errors", "devlink_reporters"},
                 "health.");

  read_bounded(v, "health.", "flap_downs", h.flap_downs, 2, kMaxFlapDowns);
  read_bounded(v, "health.", "flap_window_s", h.flap_window_s, 1, kWeek);
  read_bounded(v, "health.", "flap_quiet_s", h.flap_quiet_s, 1, kWeek);
  read_bounded(v, "health.", "forget_gone_after_s", h.forget_gone_after_s, 1, kWeek);
  read_bool(v, "health.", "enabled", h.enabled);
  read_bool(v, "health.", "degraded_below_last_healthy", h.degraded_below_last_healthy);
  if (v.contains("application_errors")) {
    parse_error_threshold(v["application_errors"], "health.application_errors",
                          h.errors[static_cast<size_t>(ErrorSource::kApplication)]);
  }
  if (v.contains("firmware_errors")) {
    parse_error_threshold(v["firmware_errors"], "health.firmware_errors",
                          h.errors[static_cast<size_t>(ErrorSource::kFirmware)]);
  }
  if (v.contains("queue_errors")) {
    parse_error_threshold(v["queue_errors"], "health.queue_errors",
                          h.errors[static_cast<size_t>(ErrorSource::kQueue)]);
  }
  if (v.contains("devlink_reporters")) {
    // Replaces the defaults whole: what is not named is judged as nothing.
    const json& m = expect_at_most(v["devlink_reporters"], json::value_t::object,
                                   "an object of reporter names and roles",
                                   "health.devlink_reporters", 64, "reporters");
    h.devlink_roles.clear();
    for (const auto& [name, role] : m.items()) {
      const std::string key = "health.devlink_reporters." + name;
      if (name.empty() || name.size() > 64) throw Bad{key, "a reporter name of 1 to 64 bytes"};
      if (!role.is_string()) throw Bad{key, "expected a string, got " + type_name(role)};
      const auto r = devlink_role_from_name(role.get<std::string>());
      if (!r) {
        throw Bad{key,
                  "unknown role '" + role.get<std::string>() + "' (fatal, firmware, queue, none)"};
      }
      h.devlink_roles.emplace(name, *r);
    }
  }
  if (v.contains("expected_adapters")) {
    h.expected_adapters = parse_expected_adapters(v["expected_adapters"]);
  }
  if (v.contains("expected")) {
    expect(v["expected"], json::value_t::array, "an array of objects", "health.expected");
    h.expected.clear();
    for (size_t i = 0; i < v["expected"].size(); ++i) {
      h.expected.push_back(
          parse_expectation(v["expected"][i], "health.expected[" + std::to_string(i) + "]"));
    }
  }
}

// A counter a rule names: a counters/ file ("link_error_recovery") or "hw_counters/NAME".
std::string counter_name(const json& v, const std::string& key) {
  expect(v, json::value_t::string, "a string", key);
  const std::string name = v.get<std::string>();
  std::string_view file = name;
  if (file.starts_with("hw_counters/")) file.remove_prefix(std::string_view("hw_counters/").size());
  const bool ok =
      !file.empty() && file.size() <= 64 && std::all_of(file.begin(), file.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_';
      });
  if (!ok) {
    throw Bad{key, "'" + name +
                       "' is not a counter's name (a file of counters/, or hw_counters/NAME: "
                       "letters, digits and '_')"};
  }
  return name;
}

// {"counter": NAME, "count": N, "window_s": S}; the counter is given for transport rules only.
GrowthRule growth_rule(const json& v, const std::string& key, bool named) {
  expect(v, json::value_t::object, "an object", key);
  if (named) {
    reject_unknown(v, {"counter", "count", "window_s"}, key + ".");
    if (!v.contains("counter")) throw Bad{key + ".counter", "missing"};
  } else {
    reject_unknown(v, {"count", "window_s"}, key + ".");
  }
  GrowthRule r;
  if (named) r.counter = counter_name(v["counter"], key + ".counter");
  read_bounded(v, key + ".", "count", r.count, 1, 1'000'000'000);
  read_bounded(v, key + ".", "window_s", r.window_s, 1, kWeek);
  return r;
}

// Link quality from the error counters (docs/health.md, "Link quality").
void parse_link_health(const json& v, LinkQualityConfig& l) {
  expect(v, json::value_t::object, "an object", "link_health");
  reject_unknown(v,
                 {"enabled", "interval_s", "read_deadline_s", "exclude", "bit_errors",
                  "bit_errors_min_speed", "link_recoveries", "transport", "clean_s"},
                 "link_health.");
  read_bool(v, "link_health.", "enabled", l.enabled);
  read_bounded(v, "link_health.", "interval_s", l.interval_s, 1, 3600);
  read_bounded(v, "link_health.", "read_deadline_s", l.read_deadline_s, 1, 600);
  read_bounded(v, "link_health.", "clean_s", l.clean_s, 1, kWeek);
  if (v.contains("exclude")) l.exclude = pattern_list(v["exclude"], "link_health.exclude");
  if (v.contains("bit_errors")) {
    const json& a =
        expect_at_most(v["bit_errors"], json::value_t::array, "an array of {\"ber\", \"window_s\"}",
                       "link_health.bit_errors", 4, "windows");
    l.symbol_error.clear();
    for (size_t i = 0; i < a.size(); ++i) {
      const std::string key = "link_health.bit_errors[" + std::to_string(i) + "]";
      expect(a[i], json::value_t::object, "an object", key);
      reject_unknown(a[i], {"ber", "window_s"}, key + ".");
      if (!a[i].contains("ber") || !a[i]["ber"].is_number()) {
        throw Bad{key + ".ber", "a number is needed (1e-14: one bit in 1e14)"};
      }
      const double ber = a[i]["ber"].get<double>();
      if (!(ber >= 1e-18 && ber <= 1e-6)) throw Bad{key + ".ber", "must be within 1e-18 .. 1e-6"};
      BerWindow w{ber, 720};
      read_bounded(a[i], key + ".", "window_s", w.window_s, 1, kWeek);
      l.symbol_error.push_back(w);
    }
  }
  if (v.contains("bit_errors_min_speed")) {
    const json& s = v["bit_errors_min_speed"];
    const std::optional<LinkSpeed> speed =
        s.is_string() ? link_speed_from_name(s.get<std::string>()) : std::nullopt;
    if (!speed || *speed == LinkSpeed::kUnknown) {
      throw Bad{"link_health.bit_errors_min_speed",
                "a lane speed is needed: sdr, ddr, qdr, fdr10, fdr, edr, hdr, ndr or xdr"};
    }
    l.bit_errors_min_speed = *speed;
  }
  if (v.contains("link_recoveries")) {
    l.link_error_recovery = growth_rule(v["link_recoveries"], "link_health.link_recoveries", false);
    l.link_error_recovery.counter = std::string(kLinkErrorRecovery);
  }
  if (v.contains("transport")) {
    const json& a = expect_at_most(v["transport"], json::value_t::array, "an array of rules",
                                   "link_health.transport", 32, "rules");
    l.transport.clear();
    for (size_t i = 0; i < a.size(); ++i)
      l.transport.push_back(
          growth_rule(a[i], "link_health.transport[" + std::to_string(i) + "]", true));
  }
}

// devlink health reporters (docs/health.md, "devlink health").
void parse_devlink_health(const json& v, DevlinkConfig& d) {
  expect(v, json::value_t::object, "an object", "devlink_health");
  reject_unknown(v, {"enabled", "unmapped"}, "devlink_health.");
  read_bool(v, "devlink_health.", "enabled", d.enabled);
  read_bool(v, "devlink_health.", "unmapped", d.unmapped);
}

// Application reports (docs/security.md): who may report, how often, and how many reporters
// the report socket holds.
void parse_reports(const json& v, ReportsConfig& r) {
  expect(v, json::value_t::object, "an object", "reports");
  reject_unknown(
      v,
      {"allow_users", "allow_groups", "max_per_second", "max_reporters", "max_reporters_per_user"},
      "reports.");
  if (v.contains("allow_users"))
    r.allow_users = id_list(v["allow_users"], true, "reports.allow_users");
  if (v.contains("allow_groups")) {
    r.allow_groups = id_list(v["allow_groups"], false, "reports.allow_groups");
  }
  read_bounded(v, "reports.", "max_per_second", r.max_per_second, 1, 10000);
  read_bounded(v, "reports.", "max_reporters", r.max_reporters, 1, 65536);
  read_bounded(v, "reports.", "max_reporters_per_user", r.max_reporters_per_user, 1, 65536);
}

Config parse(const json& root) {
  expect(root, json::value_t::object, "a JSON object at the top level", "");
  reject_unknown(root,
                 {"log_level", "devices", "severity", "journal", "socket", "health", "reports",
                  "link_health", "devlink_health"},
                 "");
  Config c;
  if (read_string(root, "", "log_level", c.log_level)) {
    bool ok = false;
    for (auto l : kLogLevels)
      ok = ok || l == c.log_level;
    if (!ok) {
      throw Bad{"log_level", "unknown level '" + c.log_level +
                                 "' (trace, debug, info, warning, error, critical, off)"};
    }
  }
  if (root.contains("devices")) parse_devices(root["devices"], c);
  if (root.contains("severity")) parse_severity(root["severity"], c);
  if (root.contains("journal")) parse_journal(root["journal"], c);
  if (root.contains("socket")) parse_socket(root["socket"], c);
  if (root.contains("health")) parse_health(root["health"], c.health);
  if (root.contains("reports")) parse_reports(root["reports"], c.reports);
  if (root.contains("link_health")) parse_link_health(root["link_health"], c.link_health);
  if (root.contains("devlink_health"))
    parse_devlink_health(root["devlink_health"], c.devlink_health);
  return c;
}

}  // namespace

DeviceFilter::DeviceFilter() : include_{*DevicePattern::parse("*", nullptr)} {}

bool DeviceFilter::selects(std::string_view name, uint64_t node_guid) const {
  const std::string guid = format_guid(node_guid);  // as records and patterns write it
  auto matches = [&](const DevicePattern& p) { return p.matches(name, guid); };
  const bool included = include_.empty() || std::any_of(include_.begin(), include_.end(), matches);
  return included && std::none_of(exclude_.begin(), exclude_.end(), matches);
}

std::string ConfigError::message() const {
  std::string m = file;
  if (!key.empty()) m += ": " + key;
  return m + ": " + reason;
}

ConfigResult parse_config(std::string_view text, std::string_view file) {
  json root;
  try {
    root = json::parse(text);
  } catch (const json::exception& e) {  // out_of_range too, for a number like 1e400
    return ConfigError{std::string(file), "", invalid_json_message(e.what())};
  }
  try {
    return parse(root);
  } catch (const Bad& b) {
    return ConfigError{std::string(file), b.key, b.reason};
  }
}

ConfigResult load_config(const std::string& path) {
  const internal::SmallFile file = internal::read_small_file(path, kMaxConfigBytes);
  if (file.too_large) {
    return ConfigError{path, "", "larger than " + std::to_string(kMaxConfigBytes) + " bytes"};
  }
  if (!file.ok()) {  // EISDIR for a directory
    return ConfigError{path, "", std::string("cannot read: ") + std::strerror(file.error)};
  }
  return parse_config(file.text, path);
}

}  // namespace rdma_eventd::daemon
