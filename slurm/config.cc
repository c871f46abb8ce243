#include "config.h"

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>
#include <vector>

namespace rdma_eventd_slurm {

namespace {

using nlohmann::json;

constexpr std::array<std::string_view, 12> kKeys = {"node_name",
                                                    "reason_prefix",
                                                    "drain_on",
                                                    "reconcile_interval_s",
                                                    "scontrol_timeout_s",
                                                    "scontrol",
                                                    "sinfo",
                                                    "socket",
                                                    "drain_when_daemon_unreachable",
                                                    "drain_limit",
                                                    "drain_splay_s",
                                                    "state_directory"};

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

struct ConfigError {
  std::string message;
};

std::string string_key(const json& v, const char* key) {
  if (!v.is_string()) throw ConfigError{std::string(key) + ": not a string"};
  return v.get<std::string>();
}

unsigned seconds_key(const json& v, const char* key, unsigned min, unsigned max) {
  // A whole number: JSON's -0 is one too (the parser keeps it signed), as 0 written back is.
  const bool whole = v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0);
  if (!whole || v.get<uint64_t>() < min || v.get<uint64_t>() > max) {
    throw ConfigError{std::string(key) + ": not a whole number of seconds from " +
                      std::to_string(min) + " to " + std::to_string(max)};
  }
  return v.get<unsigned>();
}

std::string prefix_key(const json& v) {
  std::string prefix = string_key(v, "reason_prefix");
  if (prefix.empty() || prefix.find_first_not_of(' ') == std::string::npos) {
    throw ConfigError{
        "reason_prefix: empty: the prefix is how the node's drains are told apart "
        "from everyone else's"};
  }
  if (prefix.size() > kMaxPrefixBytes) {
    throw ConfigError{"reason_prefix: " + std::to_string(prefix.size()) + " bytes, more than " +
                      std::to_string(kMaxPrefixBytes)};
  }
  for (unsigned char c : prefix) {
    if (c < 0x20 || c == 0x7f) throw ConfigError{"reason_prefix: holds a control character"};
  }
  return prefix;
}

std::set<std::string> drain_on_key(const json& v) {
  if (!v.is_array()) throw ConfigError{"drain_on: not an array of verdicts and reasons"};
  std::set<std::string> out;
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string where = "drain_on[" + std::to_string(i) + "]";
    if (!v[i].is_string()) throw ConfigError{where + ": not a string"};
    const std::string name = v[i].get<std::string>();
    const bool verdict = std::find(kDrainableVerdicts.begin(), kDrainableVerdicts.end(), name) !=
                         kDrainableVerdicts.end();
    const bool reason = std::find(kDrainableReasons.begin(), kDrainableReasons.end(), name) !=
                        kDrainableReasons.end();
    if (!verdict && !reason && name != kNotJudged) {
      throw ConfigError{where + ": '" + name +
                        "' is not a verdict a node is drained for (degraded, down, flapping, "
                        "gone, fatal), a reason of degraded it may name (bit_errors, "
                        "link_recoveries, transport_errors, firmware_errors, queue_errors) nor "
                        "not_judged"};
    }
    out.insert(name);
  }
  return out;
}

std::string node_name_key(const json& v) {
  std::string name = string_key(v, "node_name");
  // One node: a hostlist ("n[1-4]") would make every update act on all of them.
  if (name.empty() || name.find_first_of(" \t\n=,[]") != std::string::npos) {
    throw ConfigError{"node_name: '" + name + "' is not the name of one Slurm node"};
  }
  return name;
}

DrainLimit drain_limit_key(const json& v) {
  const char* const what =
      "drain_limit: not a number of nodes (1 or more), a share of the partitions' nodes "
      "(\"1%\" to \"100%\") or \"off\"";
  if (v.is_number_unsigned()) {
    const uint64_t n = v.get<uint64_t>();
    if (n < 1 || n > 1000000) throw ConfigError{what};
    return DrainLimit{DrainLimit::kNodes, static_cast<unsigned>(n)};
  }
  if (!v.is_string()) throw ConfigError{what};
  const std::string s = v.get<std::string>();
  if (s == "off") return DrainLimit{DrainLimit::kOff, 0};
  if (s.size() < 2 || s.size() > 4 || s.back() != '%' ||
      s.find_first_not_of("0123456789") != s.size() - 1) {
    throw ConfigError{what};
  }
  const unsigned percent = static_cast<unsigned>(std::stoul(s.substr(0, s.size() - 1)));
  if (percent < 1 || percent > 100) throw ConfigError{what};
  return DrainLimit{DrainLimit::kPercent, percent};
}

}  // namespace

std::string limit_text(const DrainLimit& limit) {
  switch (limit.kind) {
    case DrainLimit::kOff:
      return "off";
    case DrainLimit::kNodes:
      return std::to_string(limit.value) + (limit.value == 1 ? " node" : " nodes");
    case DrainLimit::kPercent:
      return std::to_string(limit.value) + "%";
  }
  return "";
}

std::string sinfo_program(const Config& config) {
  if (!config.sinfo.empty()) return config.sinfo;
  const size_t slash = config.scontrol.rfind('/');
  if (slash == std::string::npos) return "sinfo";
  return config.scontrol.substr(0, slash + 1) + "sinfo";
}

std::string nearest_key(std::string_view key) {
  std::string best;
  size_t best_distance = 3;
  for (std::string_view known : kKeys) {
    const size_t d = edit_distance(key, known);
    if (d < best_distance && d <= std::max<size_t>(2, known.size() / 3)) {
      best = known;
      best_distance = d;
    }
  }
  return best;
}

std::optional<Config> parse_config(std::string_view text, std::string* error) {
  const json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded()) {
    if (error) *error = "not valid JSON";
    return std::nullopt;
  }
  if (!doc.is_object()) {
    if (error) *error = "not a JSON object";
    return std::nullopt;
  }
  Config c;
  try {
    for (const auto& [key, v] : doc.items()) {
      if (key == "node_name") {
        c.node_name = node_name_key(v);
      } else if (key == "reason_prefix") {
        c.reason_prefix = prefix_key(v);
      } else if (key == "drain_on") {
        c.drain_on = drain_on_key(v);
      } else if (key == "reconcile_interval_s") {
        c.reconcile_interval_s = seconds_key(v, "reconcile_interval_s", 1, 86400);
      } else if (key == "scontrol_timeout_s") {
        c.scontrol_timeout_s = seconds_key(v, "scontrol_timeout_s", 1, 20);
      } else if (key == "scontrol") {
        c.scontrol = string_key(v, "scontrol");
        if (c.scontrol.empty()) throw ConfigError{"scontrol: empty"};
      } else if (key == "sinfo") {
        c.sinfo = string_key(v, "sinfo");
        if (c.sinfo.empty()) throw ConfigError{"sinfo: empty"};
      } else if (key == "drain_limit") {
        c.drain_limit = drain_limit_key(v);
      } else if (key == "drain_splay_s") {
        c.drain_splay_s = seconds_key(v, "drain_splay_s", 0, 600);
      } else if (key == "state_directory") {
        c.state_directory = string_key(v, "state_directory");
        if (c.state_directory.empty() || c.state_directory.front() != '/') {
          throw ConfigError{"state_directory: '" + c.state_directory + "' is not an absolute path"};
        }
      } else if (key == "socket") {
        c.socket = string_key(v, "socket");
      } else if (key == "drain_when_daemon_unreachable") {
        if (!v.is_boolean()) throw ConfigError{"drain_when_daemon_unreachable: not true or false"};
        c.drain_when_daemon_unreachable = v.get<bool>();
      } else {
        const std::string near = nearest_key(key);
        throw ConfigError{"unknown key '" + key + "'" +
                          (near.empty() ? "" : " (did you mean '" + near + "'?)")};
      }
    }
  } catch (const ConfigError& e) {
    if (error) *error = e.message;
    return std::nullopt;
  }
  return c;
}

}  // namespace rdma_eventd_slurm
