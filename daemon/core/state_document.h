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
#include "core/device_state.h"
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
  std::string key(std::string_view name, size_t index) const;  // "name[index]"
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
  // An instant_json() read back, its monotonic time as time()'s.
  Instant instant(std::string_view name, int64_t saved_us) const;
  // A rate_json() read back.
  LinkRate rate(std::string_view name) const;
  // A port number, 1 to 255.
  uint32_t port_number(std::string_view name) const;

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
json rate_json(const LinkRate& r);

// The objects of the array `name` (at most `max`), each read by `read_one(reader)`, in strictly
// increasing order of `order(item)`: an item out of order is corrupt at its key `order_key`,
// `out_of_order` saying how.
template <typename T, typename ReadOne, typename Order>
std::vector<T> read_ordered(const Reader& parent, std::string_view name, size_t max,
                            ReadOne read_one, std::string_view order_key, Order order,
                            const char* out_of_order) {
  std::vector<T> items;
  const json& list = parent.array(name, max);
  for (size_t i = 0; i < list.size(); ++i) {
    const Reader r(list[i], parent.key(name, i));
    items.push_back(read_one(r));
    if (i > 0 && order(items[i]) <= order(items[i - 1])) {
      throw Corrupt{r.key(order_key), out_of_order};
    }
  }
  return items;
}

// The document's header: {"version": V, "boot_id": ..., "saved_at": {...}, "devices": D}.
json document(int version, std::string_view boot_id, Instant saved_at, json devices);

// The whole document of `devices`, one line of JSON: [{"device", "node_guid", "ports": [...]}],
// each port written by `port_json`.
template <typename Port, typename PortJson>
std::string write(int version, const std::vector<DeviceState<Port>>& devices,
                  std::string_view boot_id, Instant saved_at, PortJson port_json) {
  json list = json::array();
  for (const DeviceState<Port>& d : devices) {
    json ports = json::array();
    for (const Port& p : d.ports)
      ports.push_back(port_json(p));
    list.push_back({{"device", d.device}, {"node_guid", d.node_guid}, {"ports", ports}});
  }
  return document(version, boot_id, saved_at, std::move(list)).dump();
}

// The document's "version": a newer one is rejected ("written by a newer rdma-eventd (KIND
// version N; ...)"), another is corrupt. Checked before anything else is read.
std::optional<StateRejected> check_version(const Reader& root, int version, std::string_view kind);
// The header's checks; the rejection, or none and the root's saved monotonic time.
std::optional<StateRejected> check_header(const Reader& root, int version, std::string_view boot_id,
                                          Instant now, int64_t& saved_mono_us);
std::optional<StateRejected> parse(std::string_view text, json& doc);
StateRejected rejected(const Corrupt& c);
StateRejected rejected(const json::exception& e);

// The devices of a document read back: named once and not empty, ports in increasing order,
// each port read by `read_port(reader, saved_us)`.
template <typename Port, typename ReadPort>
std::vector<DeviceState<Port>> read_devices(const Reader& root, int64_t saved_us,
                                            ReadPort read_port) {
  std::vector<DeviceState<Port>> devices;
  std::set<std::string> names;
  const json& list = root.array("devices", kMaxStateDevices);
  for (size_t i = 0; i < list.size(); ++i) {
    const Reader d(list[i], root.key("devices", i));
    DeviceState<Port> device{d.string("device"), d.string("node_guid"), {}};
    if (device.device.empty()) throw Corrupt{d.key("device"), "empty"};
    if (!names.insert(device.device).second) throw Corrupt{d.key("device"), "listed twice"};
    device.ports = read_ordered<Port>(
        d, "ports", kMaxStatePorts, [&](const Reader& p) { return read_port(p, saved_us); }, "port",
        [](const Port& p) { return p.port; }, "ports not in increasing order");
    devices.push_back(std::move(device));
  }
  return devices;
}

// The whole document read back from `text`: its header checked, then its devices
// (read_devices), whose Corrupt (or a number too large for its type) becomes the rejection.
template <typename Port, typename ReadPort>
std::variant<std::vector<DeviceState<Port>>, StateRejected> read(std::string_view text, int version,
                                                                 std::string_view boot_id,
                                                                 Instant now, ReadPort read_port) {
  json doc;
  if (auto bad = parse(text, doc)) return *bad;
  try {
    const Reader root(doc, "");
    int64_t saved_mono_us = 0;
    if (auto bad = check_header(root, version, boot_id, now, saved_mono_us)) return *bad;
    return read_devices<Port>(root, saved_mono_us, read_port);
  } catch (const Corrupt& c) {
    return rejected(c);
  } catch (const json::exception& e) {  // a number too large for its type
    return rejected(e);
  }
}

// A state file's format: its version, and how one port's state is written and read back. Each
// kind of persistent state (port health, link quality) is one of these over the same document.
template <typename Port>
struct Format {
  int version;
  json (*port_json)(const Port&);
  Port (*read_port)(const Reader&, int64_t saved_us);

  // One line of JSON.
  std::string to_json(const std::vector<DeviceState<Port>>& devices, std::string_view boot_id,
                      Instant saved_at) const {
    return write(version, devices, boot_id, saved_at, port_json);
  }
  // Accepts only a document of this version, written on this boot (`boot_id`), no later than
  // `now` on the monotonic clock, and whole: every key present with its type, within its
  // bounds (what read_port checks of a port).
  std::variant<std::vector<DeviceState<Port>>, StateRejected> from_json(std::string_view text,
                                                                        std::string_view boot_id,
                                                                        Instant now) const {
    return read<Port>(text, version, boot_id, now, read_port);
  }
};

}  // namespace state_document
}  // namespace rdma_eventd::daemon
