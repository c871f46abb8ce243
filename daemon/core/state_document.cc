#include "core/state_document.h"

#include <limits>
#include <utility>

#include "rdma_eventd/record.h"
#include "schema/json_error.h"

namespace rdma_eventd::daemon::state_document {
namespace {

std::string width_name(uint32_t lanes) {
  return lanes == 0 ? "unknown" : std::to_string(lanes) + "x";
}

}  // namespace

Reader::Reader(const json& object, std::string path) : object_(object), path_(std::move(path)) {
  if (!object_.is_object()) throw Corrupt{path_, "expected an object"};
}

std::string Reader::key(std::string_view name) const {
  return path_.empty() ? std::string(name) : path_ + "." + std::string(name);
}

std::string Reader::key(std::string_view name, size_t index) const {
  return key(name) + "[" + std::to_string(index) + "]";
}

const json& Reader::at(std::string_view name) const {
  auto it = object_.find(name);
  if (it == object_.end()) throw Corrupt{key(name), "missing"};
  return *it;
}

int64_t Reader::integer(std::string_view name) const {
  const json& v = at(name);
  if (!v.is_number_integer()) throw Corrupt{key(name), "expected an integer"};
  return v.get<int64_t>();
}

uint64_t Reader::unsigned_integer(std::string_view name, uint64_t max) const {
  const json& v = at(name);
  if (!v.is_number_unsigned()) throw Corrupt{key(name), "expected an integer, not negative"};
  const uint64_t value = v.get<uint64_t>();
  if (value > max) throw Corrupt{key(name), "more than " + std::to_string(max)};
  return value;
}

int64_t Reader::time(std::string_view name, int64_t saved_us) const {
  const int64_t t = integer(name);
  if (t < 0 || t > saved_us) throw Corrupt{key(name), "not a time before the document was saved"};
  return t;
}

bool Reader::boolean(std::string_view name) const {
  const json& v = at(name);
  if (!v.is_boolean()) throw Corrupt{key(name), "expected a boolean"};
  return v.get<bool>();
}

std::string Reader::string(std::string_view name) const {
  const json& v = at(name);
  if (!v.is_string()) throw Corrupt{key(name), "expected a string"};
  return v.get<std::string>();
}

const json& Reader::array(std::string_view name, size_t max) const {
  const json& v = at(name);
  if (!v.is_array()) throw Corrupt{key(name), "expected an array"};
  if (v.size() > max) throw Corrupt{key(name), "more than " + std::to_string(max) + " entries"};
  return v;
}

std::vector<int64_t> Reader::times(std::string_view name, size_t max, int64_t saved_us) const {
  std::vector<int64_t> out;
  const json& v = array(name, max);
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string item = key(name, i);
    if (!v[i].is_number_integer()) throw Corrupt{item, "expected an integer"};
    out.push_back(v[i].get<int64_t>());
    if (out.back() < 0 || out.back() > saved_us || (i > 0 && out.back() < out[i - 1])) {
      throw Corrupt{item, "not a time in order before the document was saved"};
    }
  }
  return out;
}

uint32_t Reader::port_number(std::string_view name) const {
  const int64_t port = integer(name);
  if (port < 1 || port > 255) throw Corrupt{key(name), "not a port number (1 to 255)"};
  return static_cast<uint32_t>(port);
}

json instant_json(const Instant& t) {
  return {{"monotonic_us", t.mono_us}, {"wall", format_rfc3339_us(t.wall_us)}};
}

Instant Reader::instant(std::string_view name, int64_t saved_us) const {
  const Reader r(at(name), key(name));
  Instant t{.wall_us = 0, .mono_us = r.time("monotonic_us", saved_us)};
  auto wall = parse_rfc3339_us(r.string("wall"));
  if (!wall) throw Corrupt{r.key("wall"), "not an RFC 3339 time"};
  t.wall_us = *wall;
  return t;
}

json rate_json(const LinkRate& r) {
  return {{"width", width_name(r.lanes)}, {"speed", link_speed_name(r.speed)}};
}

LinkRate Reader::rate(std::string_view name) const {
  const Reader r(at(name), key(name));
  const uint32_t lanes = r.name<uint32_t>("width", &lanes_from_name);
  return {lanes, r.name<LinkSpeed>("speed", &link_speed_from_name)};
}

json document(int version, std::string_view boot_id, Instant saved_at, json devices) {
  return {{"version", version},
          {"boot_id", boot_id},
          {"saved_at", instant_json(saved_at)},
          {"devices", std::move(devices)}};
}

std::optional<StateRejected> parse(std::string_view text, json& doc) {
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    return rejected(e);
  }
  return std::nullopt;
}

std::optional<StateRejected> check_version(const Reader& root, int version, std::string_view kind) {
  const int64_t saved_version = root.integer("version");
  if (saved_version > version) {
    return StateRejected{"written by a newer rdma-eventd (" + std::string(kind) + " version " +
                         std::to_string(saved_version) + "; this one reads version " +
                         std::to_string(version) + ")"};
  }
  if (saved_version != version) throw Corrupt{"version", "unknown version"};
  return std::nullopt;
}

std::optional<StateRejected> check_header(const Reader& root, int version, std::string_view boot_id,
                                          Instant now, int64_t& saved_mono_us) {
  // The version first: a newer daemon may have changed everything else.
  if (auto newer = check_version(root, version, "state")) return newer;
  const std::string saved_boot = root.string("boot_id");
  if (saved_boot != boot_id) {
    return StateRejected{"from another boot (boot id " + saved_boot + ", this boot is " +
                         std::string(boot_id) + "): the state of ports does not survive a reboot"};
  }
  const Instant saved = root.instant("saved_at", std::numeric_limits<int64_t>::max());
  if (saved.mono_us > now.mono_us) {
    throw Corrupt{"saved_at.monotonic_us", "later than now on this boot's monotonic clock"};
  }
  saved_mono_us = saved.mono_us;
  return std::nullopt;
}

StateRejected rejected(const Corrupt& c) {
  return StateRejected{"corrupt: " + (c.key.empty() ? "" : c.key + ": ") + c.reason};
}

StateRejected rejected(const json::exception& e) {
  return StateRejected{"corrupt: " + invalid_json_message(e.what())};
}

}  // namespace rdma_eventd::daemon::state_document
