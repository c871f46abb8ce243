#include "core/health_state_file.h"

#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "rdma_eventd/record.h"
#include "schema/json_error.h"

namespace rdma_eventd::daemon {
namespace {

using nlohmann::json;

constexpr std::string_view kErrorSourceNames[kErrorSourceCount] = {"application", "module"};

std::string width_name(uint32_t lanes) {
  return lanes == 0 ? "unknown" : std::to_string(lanes) + "x";
}

json rate_json(const LinkRate& r) {
  return {{"width", width_name(r.lanes)}, {"speed", link_speed_name(r.speed)}};
}

json instant_json(const Instant& t) {
  return {{"monotonic_us", t.mono_us}, {"wall", format_rfc3339_us(t.wall_us)}};
}

json port_json(const PortHealthState& s) {
  json errors = json::object();
  for (size_t i = 0; i < kErrorSourceCount; ++i) {
    const ErrorWindowState& w = s.errors[i];
    errors[std::string(kErrorSourceNames[i])] = {
        {"times_monotonic_us", w.times_mono_us},
        {"over", w.over},
        {"quiet_since_monotonic_us", w.quiet_since_mono_us}};
  }
  return {{"port", s.port},
          {"health", health_name(s.health)},
          {"reason", reason_name(s.reason)},
          {"since", instant_json(s.since)},
          {"ever_up", s.ever_up},
          {"link_up", s.link_up},
          {"rate", rate_json(s.rate)},
          {"last_healthy", rate_json(s.last_healthy)},
          {"downs_monotonic_us", s.downs_mono_us},
          {"flapping", s.flapping},
          {"quiet_since_monotonic_us", s.quiet_since_mono_us},
          {"fatal", s.fatal},
          {"gone", s.gone},
          {"gone_reason", reason_name(s.gone_reason)},
          {"gone_since_monotonic_us", s.gone_since_mono_us},
          {"errors", errors}};
}

// Thrown inside the reader only, turned into a rejection at its boundary.
struct Corrupt {
  std::string key;
  std::string reason;
};

// Reads the members of one object, naming each key in what it throws.
class Reader {
 public:
  Reader(const json& object, std::string path) : object_(object), path_(std::move(path)) {
    if (!object_.is_object()) throw Corrupt{path_, "expected an object"};
  }

  std::string key(std::string_view name) const {
    return path_.empty() ? std::string(name) : path_ + "." + std::string(name);
  }

  const json& at(std::string_view name) const {
    auto it = object_.find(name);
    if (it == object_.end()) throw Corrupt{key(name), "missing"};
    return *it;
  }

  int64_t integer(std::string_view name) const {
    const json& v = at(name);
    if (!v.is_number_integer()) throw Corrupt{key(name), "expected an integer"};
    return v.get<int64_t>();
  }

  // A monotonic time: not negative, and not after the document was saved.
  int64_t time(std::string_view name, int64_t saved_us) const {
    const int64_t t = integer(name);
    if (t < 0 || t > saved_us) throw Corrupt{key(name), "not a time before the document was saved"};
    return t;
  }

  bool boolean(std::string_view name) const {
    const json& v = at(name);
    if (!v.is_boolean()) throw Corrupt{key(name), "expected a boolean"};
    return v.get<bool>();
  }

  std::string string(std::string_view name) const {
    const json& v = at(name);
    if (!v.is_string()) throw Corrupt{key(name), "expected a string"};
    return v.get<std::string>();
  }

  template <typename T>
  T name(std::string_view name, std::optional<T> (*from_name)(std::string_view)) const {
    const std::string text = string(name);
    auto value = from_name(text);
    if (!value) throw Corrupt{key(name), "unknown name '" + text + "'"};
    return *value;
  }

  const json& array(std::string_view name, size_t max) const {
    const json& v = at(name);
    if (!v.is_array()) throw Corrupt{key(name), "expected an array"};
    if (v.size() > max) throw Corrupt{key(name), "more than " + std::to_string(max) + " entries"};
    return v;
  }

  std::vector<int64_t> times(std::string_view name, size_t max, int64_t saved_us) const {
    std::vector<int64_t> out;
    const json& v = array(name, max);
    for (size_t i = 0; i < v.size(); ++i) {
      const std::string item = key(name) + "[" + std::to_string(i) + "]";
      if (!v[i].is_number_integer()) throw Corrupt{item, "expected an integer"};
      out.push_back(v[i].get<int64_t>());
      if (out.back() < 0 || out.back() > saved_us || (i > 0 && out.back() < out[i - 1])) {
        throw Corrupt{item, "not a time in order before the document was saved"};
      }
    }
    return out;
  }

 private:
  const json& object_;
  std::string path_;
};

LinkRate read_rate(const Reader& parent, std::string_view name) {
  const Reader r(parent.at(name), parent.key(name));
  const uint32_t lanes = r.name<uint32_t>("width", &lanes_from_name);
  return {lanes, r.name<LinkSpeed>("speed", &link_speed_from_name)};
}

Instant read_instant(const Reader& parent, std::string_view name, int64_t saved_us) {
  const Reader r(parent.at(name), parent.key(name));
  Instant t{.wall_us = 0, .mono_us = r.time("monotonic_us", saved_us)};
  auto wall = parse_rfc3339_us(r.string("wall"));
  if (!wall) throw Corrupt{r.key("wall"), "not an RFC 3339 time"};
  t.wall_us = *wall;
  return t;
}

PortHealthState read_port(const Reader& r, int64_t saved_us) {
  PortHealthState s;
  const int64_t port = r.integer("port");
  if (port < 1 || port > 255) throw Corrupt{r.key("port"), "not a port number (1 to 255)"};
  s.port = static_cast<uint32_t>(port);
  s.health = r.name<PortHealth>("health", &health_from_name);
  s.reason = r.name<HealthReason>("reason", &reason_from_name);
  s.since = read_instant(r, "since", saved_us);
  s.ever_up = r.boolean("ever_up");
  s.link_up = r.boolean("link_up");
  s.rate = read_rate(r, "rate");
  s.last_healthy = read_rate(r, "last_healthy");
  s.downs_mono_us = r.times("downs_monotonic_us", kMaxFlapDowns, saved_us);
  s.flapping = r.boolean("flapping");
  s.quiet_since_mono_us = r.time("quiet_since_monotonic_us", saved_us);
  s.fatal = r.boolean("fatal");
  s.gone = r.boolean("gone");
  s.gone_reason = r.name<HealthReason>("gone_reason", &reason_from_name);
  s.gone_since_mono_us = r.time("gone_since_monotonic_us", saved_us);
  const Reader errors(r.at("errors"), r.key("errors"));
  for (size_t i = 0; i < kErrorSourceCount; ++i) {
    const Reader w(errors.at(kErrorSourceNames[i]), errors.key(kErrorSourceNames[i]));
    s.errors[i].times_mono_us = w.times("times_monotonic_us", kMaxStateErrorTimes, saved_us);
    s.errors[i].over = w.boolean("over");
    s.errors[i].quiet_since_mono_us = w.time("quiet_since_monotonic_us", saved_us);
  }
  return s;
}

std::vector<DeviceHealthState> read_devices(const Reader& root, int64_t saved_us) {
  std::vector<DeviceHealthState> devices;
  std::set<std::string> names;
  const json& list = root.array("devices", kMaxStateDevices);
  for (size_t i = 0; i < list.size(); ++i) {
    const Reader d(list[i], "devices[" + std::to_string(i) + "]");
    DeviceHealthState device{d.string("device"), d.string("node_guid"), {}};
    if (device.device.empty()) throw Corrupt{d.key("device"), "empty"};
    if (!names.insert(device.device).second) throw Corrupt{d.key("device"), "listed twice"};
    const json& ports = d.array("ports", kMaxStatePorts);
    for (size_t j = 0; j < ports.size(); ++j) {
      const Reader p(ports[j], d.key("ports") + "[" + std::to_string(j) + "]");
      device.ports.push_back(read_port(p, saved_us));
      if (j > 0 && device.ports[j].port <= device.ports[j - 1].port) {
        throw Corrupt{p.key("port"), "ports not in increasing order"};
      }
    }
    devices.push_back(std::move(device));
  }
  return devices;
}

}  // namespace

std::string health_state_to_json(const std::vector<DeviceHealthState>& devices,
                                 std::string_view boot_id, Instant saved_at) {
  json list = json::array();
  for (const DeviceHealthState& d : devices) {
    json ports = json::array();
    for (const PortHealthState& s : d.ports)
      ports.push_back(port_json(s));
    list.push_back({{"device", d.device}, {"node_guid", d.node_guid}, {"ports", ports}});
  }
  const json doc = {{"version", kHealthStateVersion},
                    {"boot_id", boot_id},
                    {"saved_at", instant_json(saved_at)},
                    {"devices", list}};
  return doc.dump();
}

HealthStateResult health_state_from_json(std::string_view text, std::string_view boot_id,
                                         Instant now) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    return HealthStateRejected{"corrupt: " + invalid_json_message(e.what())};
  }
  try {
    const Reader root(doc, "");
    // The version first: a newer daemon may have changed everything else.
    const int64_t version = root.integer("version");
    if (version > kHealthStateVersion) {
      return HealthStateRejected{"written by a newer rdma-eventd (state version " +
                                 std::to_string(version) + "; this one reads version " +
                                 std::to_string(kHealthStateVersion) + ")"};
    }
    if (version != kHealthStateVersion) throw Corrupt{"version", "unknown version"};
    const std::string saved_boot = root.string("boot_id");
    if (saved_boot != boot_id) {
      return HealthStateRejected{"from another boot (boot id " + saved_boot + ", this boot is " +
                                 std::string(boot_id) +
                                 "): the state of ports does not survive a reboot"};
    }
    const Instant saved = read_instant(root, "saved_at", std::numeric_limits<int64_t>::max());
    if (saved.mono_us > now.mono_us) {
      throw Corrupt{"saved_at.monotonic_us", "later than now on this boot's monotonic clock"};
    }
    return read_devices(root, saved.mono_us);
  } catch (const Corrupt& c) {
    return HealthStateRejected{"corrupt: " + (c.key.empty() ? "" : c.key + ": ") + c.reason};
  } catch (const json::exception& e) {  // a number too large for its type
    return HealthStateRejected{"corrupt: " + invalid_json_message(e.what())};
  }
}

}  // namespace rdma_eventd::daemon
