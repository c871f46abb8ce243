#include "topology_devx.h"

#include "devx_names.h"

namespace rdmasim {
namespace {

using nlohmann::json;

// An event number: a name (port_module_event) or a number up to 255.
uint16_t event_number(const json& v, JsonFields& o, const std::string& where) {
  const std::string text = v.is_number_unsigned() ? std::to_string(v.get<uint64_t>())
                           : v.is_string()        ? v.get<std::string>()
                                                  : std::string();
  const auto n = devx::parse_named(devx::event_types(), text, devx::kMaxEventNumber);
  if (!n)
    o.fail(where, v.dump() + " is not an event number (0..255) or one of: " +
                      devx::names_list(devx::event_types()));
  return static_cast<uint16_t>(*n);
}

}  // namespace

DevxModel parse_devx(JsonFields& device) {
  DevxModel m;
  const std::string provider = device.str("provider", "mlx5", 32);
  const auto p = devx::find_name(devx::providers(), provider);
  if (!p)
    device.fail("provider",
                "\"" + provider + "\" is not one of: " + devx::names_list(devx::providers()));
  m.provider = static_cast<devx::Provider>(*p);
  const json* v = device.get("devx");
  if (!v) return m;
  if (!m.is_mlx5())
    device.fail("devx", "only an mlx5 device has DEVX (provider is \"" + provider + "\")");
  JsonFields o(*v, device.path("devx"), device.file());
  m.log_max_uctx = static_cast<uint32_t>(o.num("log_max_uctx", 16, 0, 31));
  m.event_cap = o.flag("event_cap", false);
  m.port_module_event = o.flag("port_module_event", true);
  m.temp_warn_event = o.flag("temp_warn_event", true);
  m.general_notification_event = o.flag("general_notification_event", true);
  if (const json* events = o.get("user_unaffiliated_events")) {
    if (!m.event_cap)
      o.fail("user_unaffiliated_events",
             "needs \"event_cap\": true (without it only port_change may be subscribed)");
    if (!events->is_array())
      o.fail("user_unaffiliated_events", "expected an array of events, got " + events->dump());
    for (size_t i = 0; i < events->size(); ++i) {
      const uint16_t n =
          event_number((*events)[i], o, "user_unaffiliated_events[" + std::to_string(i) + "]");
      m.user_unaffiliated_events[n / 64] |= uint64_t{1} << (n % 64);
    }
  }
  o.check_unknown();
  return m;
}

uint8_t parse_port_module(JsonFields& port, const DevxModel& devx, int port_num) {
  if (port.get("module") && !devx.is_mlx5())
    port.fail("module", "only an mlx5 device reports module events");
  return static_cast<uint8_t>(port.num("module", static_cast<uint64_t>(port_num - 1), 0, 255));
}

}  // namespace rdmasim
