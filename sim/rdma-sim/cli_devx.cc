// The DEVX commands: module events, temperature warnings, general events, raw EQEs, DEVX storms
// and injected allocation failures. Names become numbers here (devx_names.h); the simulator
// checks the numbers again.
#include "cli_commands.h"
#include "devx_names.h"

namespace rdmasim::cli {

using nlohmann::json;

namespace {

uint32_t named(const devx::NameTable& table, const std::string& text, const std::string& what,
               uint32_t max) {
  const auto v = devx::parse_named(table, text, max);
  if (!v)
    throw UsageError(what + " \"" + text + "\" is not a number (0.." + std::to_string(max) +
                     ") or one of: " + devx::names_list(table));
  return *v;
}

std::string hex_data(const Args& a) {
  const auto data = option(a, "--data");
  if (!data) return "";
  if (!devx::parse_hex(*data, devx::kEqeDataSize))
    throw UsageError("--data \"" + *data + "\" is not hex bytes (at most " +
                     std::to_string(devx::kEqeDataSize) + ", e.g. 0a0b0c)");
  return *data;
}

Handler module_command(const std::string& action) {
  return [action](const Global& g, const Args& a) {
    json req = {{"cmd", "module"}, {"action", action}, {"target", a.positional[0]}};
    if (auto v = option(a, "--module")) req["module"] = number(*v, "--module", 255);
    if (action == "error")
      req["error"] = named(devx::module_errors(), a.positional[1], "error type", 15);
    return send(g, req);
  };
}

}  // namespace

std::vector<Spec> with_devx_specs(std::vector<Spec> specs) {
  const std::vector<Spec> devx_specs = {
      {"module plug", 1, 1, {"--module"}, {}, module_command("plug")},
      {"module unplug", 1, 1, {"--module"}, {}, module_command("unplug")},
      {"module disable", 1, 1, {"--module"}, {}, module_command("disable")},
      {"module error", 2, 2, {"--module"}, {}, module_command("error")},
      {"temp-warn",
       2,
       2,
       {},
       {},
       [](const Global& g, const Args& a) {
         json sensors = json::array();
         for (const std::string& s : split(a.positional[1], ','))
           sensors.push_back(number(s, "sensor", 127));
         return send(g, {{"cmd", "temp_warn"}, {"device", a.positional[0]}, {"sensors", sensors}});
       }},
      {"general-event",
       2,
       2,
       {"--data"},
       {},
       [](const Global& g, const Args& a) {
         return send(g,
                     {{"cmd", "general_event"},
                      {"device", a.positional[0]},
                      {"subtype", named(devx::general_subtypes(), a.positional[1], "subtype", 255)},
                      {"data", hex_data(a)}});
       }},
      {"devx-event",
       2,
       2,
       {"--subtype", "--data"},
       {},
       [](const Global& g, const Args& a) {
         json req = {{"cmd", "devx_event"},
                     {"device", a.positional[0]},
                     {"type", named(devx::event_types(), a.positional[1], "event type", 255)},
                     {"data", hex_data(a)}};
         if (auto v = option(a, "--subtype")) req["subtype"] = number(*v, "--subtype", 255);
         return send(g, req);
       }},
      {"devx-storm",
       0,
       0,
       {"--count", "--devices", "--types"},
       {},
       [](const Global& g, const Args& a) {
         return send(
             g, storm_request(a, "devx-storm", "devx_storm", "devices", [](const std::string& t) {
               return named(devx::event_types(), t, "event type", 255);
             }));
       }},
      {"devx-destroy",
       1,
       1,
       {"--channel"},
       {},
       [](const Global& g, const Args& a) {
         json req = {{"cmd", "devx_destroy"}, {"device", a.positional[0]}};
         if (auto v = option(a, "--channel")) req["channel"] = number(*v, "--channel", UINT64_MAX);
         return send(g, req);
       }},
      {"alloc-fail",
       1,
       1,
       {"--channel", "--count"},
       {},
       [](const Global& g, const Args& a) {
         json req = {{"cmd", "alloc_fail"}, {"device", a.positional[0]}};
         if (auto v = option(a, "--channel")) req["channel"] = number(*v, "--channel", UINT64_MAX);
         if (auto v = option(a, "--count")) req["count"] = number(*v, "--count", 10000000);
         return send(g, req);
       }},
  };
  specs.insert(specs.end(), devx_specs.begin(), devx_specs.end());
  return specs;
}

}  // namespace rdmasim::cli
