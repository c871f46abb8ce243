// What the daemon's state documents share (core/health_state_file, core/link_quality_state):
// the header (version, boot id, saved at), times, rates, and a strict reader that names the key
// of what it rejects. Pure.
//
// A document is trusted only whole: of this version, from this boot (CLOCK_MONOTONIC times
// mean nothing after a reboot), saved no later than now, every key present with its type and
// within its bounds. Anything else is rejected with one reason, which the caller logs once
// before it starts fresh.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/clock.h"
#include "core/port_health_types.h"

namespace rdma_eventd::daemon {

// Limits on what a document may hold (the daemon never writes more): beyond them it is corrupt.
inline constexpr size_t kMaxStateDevices = 1024;
inline constexpr size_t kMaxStatePorts = 256;  // per device
// The file's size: a host's state is a few KiB; a larger file is not read (it is not ours).
inline constexpr size_t kMaxStateBytes = 16 * 1024 * 1024;

struct StateRejected {
  std::string reason;  // one line: "from another boot (...)", "corrupt: devices[0].ports: ..."
};

namespace state_document {

using nlohmann::json;

// Thrown inside a reader only, turned into a rejection at its boundary.
struct Corrupt {
  std::string key;
  std::string reason;
};

// Reads the members of one object, naming each key in what it throws.
class Reader {
 public:
  Reader(const json& object, std::string path);

  std::string key(std::string_view name) const;
  const json& at(std::string_view name) const;
  int64_t integer(std::string_view name) const;
  uint64_t unsigned_integer(std::string_view name, uint64_t max) const;
  // A monotonic time: not negative, and not after the document was saved.
  int64_t time(std::string_view name, int64_t saved_us) const;
  bool boolean(std::string_view name) const;
  std::string string(std::string_view name) const;
  const json& array(std::string_view name, size_t max) const;
  // Monotonic times in order, none after the document was saved.
  std::vector<int64_t> times(std::string_view name, size_t max, int64_t saved_us) const;

  template <typename T>
  T name(std::string_view name, std::optional<T> (*from_name)(std::string_view)) const {
    const std::string text = string(name);
    auto value = from_name(text);
    if (!value) throw Corrupt{key(name), "unknown name '" + text + "'"};
    return *value;
  }

 private:
  const json& object_;
  std::string path_;
};

json instant_json(const Instant& t);
Instant read_instant(const Reader& parent, std::string_view name, int64_t saved_us);
json rate_json(const LinkRate& r);
LinkRate read_rate(const Reader& parent, std::string_view name);

// The document's header: {"version": V, "boot_id": ..., "saved_at": {...}, "devices": D}.
json document(int version, std::string_view boot_id, Instant saved_at, json devices);

// The devices of a document, [{"device", "node_guid", "ports": [...]}], each port written by
// `port_json`. Device: {device, node_guid, ports}, its ports with a `port` number.
template <typename Device, typename PortJson>
json devices_json(const std::vector<Device>& devices, PortJson port_json) {
  json list = json::array();
  for (const Device& d : devices) {
    json ports = json::array();
    for (const auto& p : d.ports)
      ports.push_back(port_json(p));
    list.push_back({{"device", d.device}, {"node_guid", d.node_guid}, {"ports", ports}});
  }
  return list;
}

// The same read back: devices named once and not empty, ports in increasing order, each port
// read by `read_port(reader, saved_us)`.
template <typename Device, typename ReadPort>
std::vector<Device> read_devices(const Reader& root, int64_t saved_us, ReadPort read_port) {
  std::vector<Device> devices;
  std::set<std::string> names;
  const json& list = root.array("devices", kMaxStateDevices);
  for (size_t i = 0; i < list.size(); ++i) {
    const Reader d(list[i], "devices[" + std::to_string(i) + "]");
    Device device{d.string("device"), d.string("node_guid"), {}};
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

// Parses `text`, checks its header, and hands the root and the saved monotonic time to
// `read_body`, whose Corrupt (or a number too large for its type) becomes the rejection.
template <typename T, typename ReadBody>
std::variant<T, StateRejected> read(std::string_view text, int version, std::string_view boot_id,
                                    Instant now, ReadBody read_body);

// The header's checks; the rejection, or none and the root's saved monotonic time.
std::optional<StateRejected> check_header(const Reader& root, int version, std::string_view boot_id,
                                          Instant now, int64_t& saved_mono_us);
std::optional<StateRejected> parse(std::string_view text, json& doc);
StateRejected rejected(const Corrupt& c);
StateRejected rejected(const json::exception& e);

template <typename T, typename ReadBody>
std::variant<T, StateRejected> read(std::string_view text, int version, std::string_view boot_id,
                                    Instant now, ReadBody read_body) {
  json doc;
  if (auto bad = parse(text, doc)) return *bad;
  try {
    const Reader root(doc, "");
    int64_t saved_mono_us = 0;
    if (auto bad = check_header(root, version, boot_id, now, saved_mono_us)) return *bad;
    return read_body(root, saved_mono_us);
  } catch (const Corrupt& c) {
    return rejected(c);
  } catch (const json::exception& e) {  // a number too large for its type
    return rejected(e);
  }
}

}  // namespace state_document
}  // namespace rdma_eventd::daemon
