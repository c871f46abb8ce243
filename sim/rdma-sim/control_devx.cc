// The control requests that raise DEVX events on mlx5 devices (module, temp_warn,
// general_event, devx_event, devx_storm) and inject allocation failures (alloc_fail).
#include <chrono>
#include <map>

#include "devx_names.h"
#include "devx_reply.h"
#include "request_fields.h"
#include "simulator.h"

namespace rdmasim {

using nlohmann::json;

namespace {

uint8_t byte_field(const json& req, const char* key, const char* what, uint64_t def) {
  const uint64_t v = opt<uint64_t>(req, key).value_or(def);
  if (v > 0xff)
    throw CommandError(std::string(what) + " " + std::to_string(v) + " is out of range (0..255)");
  return static_cast<uint8_t>(v);
}

std::vector<uint8_t> data_field(const json& req) {
  const std::string text = opt<std::string>(req, "data").value_or("");
  const auto data = devx::parse_hex(text, devx::kEqeDataSize);
  if (!data)
    throw CommandError("--data \"" + text + "\" is not hex bytes (at most " +
                       std::to_string(devx::kEqeDataSize) + ")");
  return *data;
}

json raised(const std::string& what, const DevxDelivery& d) {
  return {{"ok", true},
          {"message", what + ": " + devx_text(d)},
          {"devx_events", devx_events_json({d})}};
}

}  // namespace

json devx_events_json(const std::vector<DevxDelivery>& deliveries) {
  json out = json::array();
  for (const DevxDelivery& d : deliveries) {
    json e = {{"device", d.device},          {"type", d.type},
              {"subtype", d.subtype},        {"channels", d.counts.channels},
              {"queued", d.counts.queued},   {"merged", d.counts.merged},
              {"dropped", d.counts.dropped}, {"signaled", d.counts.signaled}};
    if (const char* name = devx::name_of(devx::event_types(), d.type)) e["type_name"] = name;
    out.push_back(e);
  }
  return out;
}

std::string devx_text(const DevxDelivery& d) {
  const char* name = devx::name_of(devx::event_types(), d.type);
  std::string text = (name ? name : "event " + std::to_string(d.type)) + " to " +
                     std::to_string(d.counts.channels) +
                     (d.counts.channels == 1 ? " channel" : " channels");
  std::string detail;
  for (const auto& [n, label] :
       {std::pair{d.counts.queued, "queued"}, std::pair{d.counts.merged, "merged"},
        std::pair{d.counts.dropped, "dropped"}, std::pair{d.counts.signaled, "signaled"}})
    if (n) detail += (detail.empty() ? "" : ", ") + std::to_string(n) + " " + label;
  return detail.empty() ? text : text + " (" + detail + ")";
}

std::optional<json> Simulator::handle_devx(const std::string& cmd, const json& req) {
  Fabric& f = *fabric_;
  if (cmd == "module") {
    const std::string action = need<std::string>(req, "action");
    // The module statuses of PORT_MODULE_EVENT, by the command's verb.
    static const std::map<std::string, uint8_t> kStatus = {
        {"plug", 0x1}, {"unplug", 0x2}, {"error", 0x3}, {"disable", 0x4}};
    const auto status = kStatus.find(action);
    if (status == kStatus.end())
      throw CommandError("module action \"" + action +
                         "\" is not one of: plug, unplug, disable, error");
    const auto error_type = opt<uint64_t>(req, "error");
    if ((action == "error") != error_type.has_value())
      throw CommandError(action == "error" ? "a module error needs its error type"
                                           : "only a module error has an error type");
    if (error_type && *error_type > 0xf)
      throw CommandError("error type " + std::to_string(*error_type) + " is out of range (0..15)");
    const auto module = opt<uint64_t>(req, "module");
    if (module && *module > 0xff)
      throw CommandError("module " + std::to_string(*module) + " is out of range (0..255)");
    const std::string target = need<std::string>(req, "target");
    auto [e, number] = f.module_target(
        target, module ? std::optional<uint8_t>(static_cast<uint8_t>(*module)) : std::nullopt);
    const devx::Eqe eqe =
        devx::port_module_eqe(number, status->second, static_cast<uint8_t>(error_type.value_or(0)));
    std::string what = target + ": module " + std::to_string(number) + " " +
                       devx::name_of(devx::module_statuses(), status->second);
    if (error_type) what += " (" + devx::describe(devx::module_errors(), *error_type) + ")";
    return raised(what, f.raise_eqe(e->model.name, eqe));
  }
  if (cmd == "temp_warn") {
    std::vector<uint8_t> sensors;
    for (const json& s : need<json>(req, "sensors")) {
      const uint64_t n = s.get<uint64_t>();
      if (n > 127) throw CommandError("sensor " + std::to_string(n) + " is out of range (0..127)");
      sensors.push_back(static_cast<uint8_t>(n));
    }
    if (sensors.empty()) throw CommandError("a temperature warning names at least one sensor");
    const std::string device = need<std::string>(req, "device");
    return raised(device + ": temperature warning",
                  f.raise_eqe(device, devx::temp_warning_eqe(sensors)));
  }
  if (cmd == "general_event") {
    const std::string device = need<std::string>(req, "device");
    const uint8_t subtype = byte_field(req, "subtype", "subtype", 0);
    return raised(device + ": general event " + devx::describe(devx::general_subtypes(), subtype),
                  f.raise_eqe(device, devx::general_eqe(subtype, data_field(req))));
  }
  if (cmd == "devx_event") {
    const std::string device = need<std::string>(req, "device");
    const uint8_t type = byte_field(req, "type", "event type", 256);
    const uint8_t subtype = byte_field(req, "subtype", "subtype", 0);
    return raised(device + ": DEVX event " + devx::describe(devx::event_types(), type),
                  f.raise_eqe(device, devx::raw_eqe(type, subtype, data_field(req))));
  }
  if (cmd == "devx_storm") return handle_devx_storm(req);
  if (cmd == "devx_destroy") {
    const std::string device = need<std::string>(req, "device");
    const std::vector<uint64_t> ids = f.destroy_channels(device, opt<uint64_t>(req, "channel"));
    std::string list;
    for (uint64_t id : ids)
      list += (list.empty() ? "" : ", ") + std::to_string(id);
    return json{{"ok", true},
                {"message",
                 device + ": DEVX channel" + (ids.size() == 1 ? " " : "s ") + list + " destroyed"},
                {"channels", ids}};
  }
  if (cmd == "alloc_fail") {
    const std::string device = need<std::string>(req, "device");
    const uint64_t count = opt<uint64_t>(req, "count").value_or(1);
    if (count == 0 || count > 10000000)
      throw CommandError("--count " + std::to_string(count) + " is out of range (1..10000000)");
    const std::vector<uint64_t> armed =
        f.fail_allocations(device, opt<uint64_t>(req, "channel"), count);
    std::string ids;
    for (uint64_t id : armed)
      ids += (ids.empty() ? "" : ", ") + std::to_string(id);
    return json{{"ok", true},
                {"message", device + ": the next " + std::to_string(count) +
                                (count == 1 ? " event" : " events") + " of channel" +
                                (armed.size() == 1 ? " " : "s ") + ids + " will fail to allocate"},
                {"channels", armed},
                {"count", count}};
  }
  return std::nullopt;
}

json Simulator::handle_devx_storm(const json& req) {
  Fabric& f = *fabric_;
  const auto count = need<uint64_t>(req, "count");
  if (count == 0 || count > 10000000)
    throw CommandError("--count " + std::to_string(count) + " is out of range (1..10000000)");
  std::vector<DeviceEntry*> devices;
  if (req.contains("devices")) {
    for (const json& name : req["devices"])
      devices.push_back(&f.devx_device(name.get<std::string>()));
  } else {
    for (const DeviceEntry& e : f.devices())
      if (e.state == DeviceState::kLive && e.model.devx.has_devx())
        devices.push_back(f.find(e.model.name));
    if (devices.empty()) throw CommandError("no live mlx5 device with DEVX to storm");
  }
  std::vector<uint8_t> types;
  for (const json& t : req.value("types", json::array())) {
    const uint64_t v = t.get<uint64_t>();
    if (v > 0xff)
      throw CommandError("event type " + std::to_string(v) + " is out of range (0..255)");
    types.push_back(static_cast<uint8_t>(v));
  }
  if (types.empty()) types = {devx::kEventPortModule};

  const auto start = std::chrono::steady_clock::now();
  const uint64_t queued = f.devx_storm(devices, types, count);
  channels_.flush();
  return storm_reply("devx storm", count, start, "queued", queued, "devices", devices.size());
}

}  // namespace rdmasim
