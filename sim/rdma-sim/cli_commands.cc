// The control commands: each one's arguments become a request to the simulator.
#include "cli_commands.h"

#include <cerrno>
#include <cstdio>
#include <functional>

namespace rdmasim::cli {

using nlohmann::json;

uint64_t number(const std::string& text, const std::string& what, uint64_t max) {
  // Decimal, or hex with 0x (P_Keys, GUID-like values). No octal surprises: "010" is ten.
  const bool hex = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
  const std::string digits = hex ? text.substr(2) : text;
  if (digits.empty() || digits.size() > 20 ||
      digits.find_first_not_of(hex ? "0123456789abcdefABCDEF" : "0123456789") != std::string::npos)
    throw UsageError(what + " \"" + text + "\" is not a number");
  errno = 0;
  const unsigned long long v = std::strtoull(digits.c_str(), nullptr, hex ? 16 : 10);
  if (errno == ERANGE || v > max)
    throw UsageError(what + " " + text + " is out of range (0.." + std::to_string(max) + ")");
  return v;
}

std::optional<std::string> option(const Args& a, const std::string& name) {
  auto it = a.options.find(name);
  if (it == a.options.end()) return std::nullopt;
  return it->second;
}

int send(const Global& g, json req, const std::function<void(const json&)>& human) {
  const json reply = request(resolve_dir(g), req);
  const bool ok = reply.value("ok", false);
  if (g.json) std::printf("%s\n", reply.dump().c_str());
  if (!ok) {
    std::fprintf(stderr, "rdma-sim: %s\n", reply.value("error", std::string("failed")).c_str());
    return kExitFailed;
  }
  if (!g.json) {
    if (human)
      human(reply);
    else
      std::printf("%s\n", reply.value("message", std::string("ok")).c_str());
  }
  return kExitOk;
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t pos = text.find(sep, start);
    out.push_back(text.substr(start, pos - start));
    if (pos == std::string::npos) return out;
    start = pos + 1;
  }
}

json storm_request(const Args& a, const std::string& command, const std::string& cmd,
                   const std::string& where, const std::function<json(const std::string&)>& type) {
  auto count = option(a, "--count");
  if (!count) throw UsageError(command + " needs --count N");
  json req = {{"cmd", cmd}, {"count", number(*count, "--count", 10000000)}};
  if (auto v = option(a, "--" + where); v && *v != "all") req[where] = split(*v, ',');
  if (auto v = option(a, "--types")) {
    json types = json::array();
    for (const std::string& t : split(*v, ','))
      types.push_back(type(t));
    req["types"] = types;
  }
  return req;
}

namespace {

// {"cmd": CMD, "port": PORT, KEY: N}: the commands of a port and a 16-bit number
// (`lid mlx5_0/1 7`); `what` names the number in the usage error.
json port_number_request(const std::string& cmd, const Args& a, const std::string& key,
                         const std::string& what) {
  return {{"cmd", cmd}, {"port", a.positional[0]}, {key, number(a.positional[1], what, 0xffff)}};
}

// A command that sends port_number_request and nothing more.
Handler port_number_command(const std::string& cmd, const std::string& key,
                            const std::string& what) {
  return [cmd, key, what](const Global& g, const Args& a) {
    return send(g, port_number_request(cmd, a, key, what));
  };
}

json event_type(const std::string& text) {
  static const char* const kNames[] = {"port_active", "port_err",     "lid_change",
                                       "pkey_change", "sm_change",    "client_reregister",
                                       "gid_change",  "device_fatal", "device_speed_change"};
  static const uint32_t kTypes[] = {9, 10, 11, 12, 13, 17, 18, 8, 20};
  for (size_t i = 0; i < std::size(kNames); ++i)
    if (text == kNames[i]) return kTypes[i];
  if (!text.empty() && text.find_first_not_of("0123456789") == std::string::npos)
    return number(text, "event type", UINT32_MAX);
  throw UsageError("event type \"" + text +
                   "\" is not a number or one of: port_active, port_err, lid_change, pkey_change, "
                   "sm_change, client_reregister, gid_change, device_fatal, device_speed_change");
}

}  // namespace

const std::vector<Spec>& specs() {
  static const std::vector<Spec> kSpecs = with_devlink_specs(with_counter_specs(with_devx_specs({
      {"start",
       0,
       0,
       {"--topology", "--query-latency-us", "--rdma-netlink"},
       {"--no-rdma", "--foreground", "--udev"},
       cmd_start},
      {"stop", 0, 0, {}, {}, cmd_stop},
      {"run", 0, 0, {}, {}, cmd_run},
      {"env", 0, 0, {}, {}, cmd_env},
      {"show",
       0,
       1,
       {},
       {},
       [](const Global& g, const Args& a) {
         json req = {{"cmd", "show"}};
         if (!a.positional.empty()) req["device"] = a.positional[0];
         return send(g, req, print_show);
       }},
      {"stats",
       0,
       0,
       {},
       {},
       [](const Global& g, const Args&) {
         return send(g, {{"cmd", "stats"}}, print_stats);
       }},
      {"port down",
       1,
       1,
       {"--phys"},
       {},
       [](const Global& g, const Args& a) {
         json req = {{"cmd", "port_down"}, {"port", a.positional[0]}};
         if (auto phys = option(a, "--phys")) {
           if (*phys != "polling" && *phys != "disabled" && *phys != "sleep")
             throw UsageError("--phys \"" + *phys + "\" is not one of: polling, disabled, sleep");
           req["phys"] = *phys;
         }
         return send(g, req);
       }},
      {"port up",
       1,
       1,
       {"--lid", "--sm-lid", "--width", "--speed"},
       {},
       [](const Global& g, const Args& a) {
         json req = {{"cmd", "port_up"}, {"port", a.positional[0]}};
         if (auto v = option(a, "--width")) req["width"] = *v;
         if (auto v = option(a, "--speed")) req["speed"] = *v;
         if (auto v = option(a, "--lid")) req["lid"] = number(*v, "LID", 0xffff);
         if (auto v = option(a, "--sm-lid")) req["sm_lid"] = number(*v, "SM LID", 0xffff);
         return send(g, req);
       }},
      {"port mtu", 2, 2, {}, {}, port_number_command("port_mtu", "mtu", "MTU")},
      {"lid", 2, 2, {}, {}, port_number_command("lid", "lid", "LID")},
      {"sm",
       2,
       2,
       {"--sl"},
       {},
       [](const Global& g, const Args& a) {
         json req = port_number_request("sm", a, "sm_lid", "SM LID");
         if (auto v = option(a, "--sl")) req["sl"] = number(*v, "SM SL", 15);
         return send(g, req);
       }},
      {"reregister",
       1,
       1,
       {},
       {},
       [](const Global& g, const Args& a) {
         return send(g, {{"cmd", "reregister"}, {"port", a.positional[0]}});
       }},
      {"pkey",
       3,
       3,
       {},
       {},
       [](const Global& g, const Args& a) {
         json req = port_number_request("pkey", a, "index", "P_Key index");
         req["value"] = number(a.positional[2], "P_Key", 0xffff);
         return send(g, req);
       }},
      {"gid add",
       2,
       2,
       {"--index", "--type", "--netdev"},
       {},
       [](const Global& g, const Args& a) {
         json req = {{"cmd", "gid_add"}, {"port", a.positional[0]}, {"gid", a.positional[1]}};
         if (auto v = option(a, "--index")) req["index"] = number(*v, "GID index", 0xffff);
         if (auto v = option(a, "--type")) {
           if (*v != "ib" && *v != "roce-v1" && *v != "roce-v2")
             throw UsageError("--type \"" + *v + "\" is not one of: ib, roce-v1, roce-v2");
           req["type"] = *v;
         }
         if (auto v = option(a, "--netdev")) req["netdev"] = *v;
         return send(g, req);
       }},
      {"gid del", 2, 2, {}, {}, port_number_command("gid_del", "index", "GID index")},
      {"gid add-ip",
       2,
       2,
       {"--netdev"},
       {},
       [](const Global& g, const Args& a) {
         auto netdev = option(a, "--netdev");
         if (!netdev || netdev->empty()) throw UsageError("gid add-ip needs --netdev NAME");
         return send(g, {{"cmd", "gid_add_ip"},
                         {"port", a.positional[0]},
                         {"ip", a.positional[1]},
                         {"netdev", *netdev}});
       }},
      {"gid del-ip",
       2,
       2,
       {},
       {},
       [](const Global& g, const Args& a) {
         return send(g,
                     {{"cmd", "gid_del_ip"}, {"port", a.positional[0]}, {"ip", a.positional[1]}});
       }},
      {"fatal",
       1,
       1,
       {"--port"},
       {},
       [](const Global& g, const Args& a) {
         json req = {{"cmd", "fatal"}, {"device", a.positional[0]}};
         if (auto v = option(a, "--port")) req["element"] = number(*v, "--port", UINT32_MAX);
         return send(g, req);
       }},
      {"speed-change",
       1,
       1,
       // Options of earlier versions, which set ports' width and speed: passed on so that the
       // simulator can say why it takes none, and where a retrain is.
       {"--ports", "--width", "--speed"},
       {},
       [](const Global& g, const Args& a) {
         json req = {{"cmd", "speed_change"}, {"device", a.positional[0]}};
         for (const char* o : {"--ports", "--width", "--speed"})
           if (auto v = option(a, o)) req[std::string(o + 2)] = *v;
         return send(g, req);
       }},
      {"unplug",
       1,
       1,
       {"--wait"},
       {"--no-disassociate"},
       [](const Global& g, const Args& a) {
         json req = {{"cmd", "unplug"},
                     {"device", a.positional[0]},
                     {"disassociate", !a.options.count("--no-disassociate")}};
         if (auto v = option(a, "--wait")) {
           char* end = nullptr;
           const double s = std::strtod(v->c_str(), &end);
           if (v->empty() || *end || !(s >= 0) || s > 86400)
             throw UsageError("--wait \"" + *v + "\" is not a number of seconds");
           req["wait"] = s;
         }
         return send(g, req);
       }},
      {"replug",
       1,
       1,
       {},
       {},
       [](const Global& g, const Args& a) {
         return send(g, {{"cmd", "replug"}, {"device", a.positional[0]}});
       }},
      {"cycle",
       1,
       1,
       {"--count"},
       {},
       [](const Global& g, const Args& a) {
         json req = {{"cmd", "cycle"}, {"device", a.positional[0]}};
         if (auto v = option(a, "--count")) req["count"] = number(*v, "--count", 100000);
         return send(g, req);
       }},
      {"rename",
       2,
       2,
       {},
       {},
       [](const Global& g, const Args& a) {
         return send(
             g, {{"cmd", "rename"}, {"device", a.positional[0]}, {"new_name", a.positional[1]}});
       }},
      {"event",
       2,
       2,
       {"--element", "--context"},
       {},
       [](const Global& g, const Args& a) {
         json req = {
             {"cmd", "event"}, {"target", a.positional[0]}, {"type", event_type(a.positional[1])}};
         if (auto v = option(a, "--element")) req["element"] = number(*v, "--element", UINT64_MAX);
         if (auto v = option(a, "--context")) req["context"] = number(*v, "--context", UINT64_MAX);
         return send(g, req);
       }},
      {"storm",
       0,
       0,
       {"--count", "--targets", "--types"},
       {},
       [](const Global& g, const Args& a) {
         return send(g, storm_request(a, "storm", "storm", "targets", event_type));
       }},
      {"rdma-netlink close",
       0,
       0,
       {},
       {},
       [](const Global& g, const Args&) { return send(g, {{"cmd", "rdma_netlink_close"}}); }},
      {"no-rdma",
       1,
       1,
       {},
       {},
       [](const Global& g, const Args& a) {
         const std::string& v = a.positional[0];
         if (v != "on" && v != "off")
           throw UsageError("no-rdma takes on or off, not \"" + v + "\"");
         return send(g, {{"cmd", "no_rdma"}, {"on", v == "on"}});
       }},
      {"set",
       2,
       2,
       {},
       {},
       [](const Global& g, const Args& a) {
         if (a.positional[0] != "query-latency-us")
           throw UsageError("set knows one setting, query-latency-us, not \"" + a.positional[0] +
                            "\"");
         return send(g,
                     {{"cmd", "set"},
                      {"query_latency_us", number(a.positional[1], "query-latency-us", 10000000)}});
       }},
  })));
  return kSpecs;
}

}  // namespace rdmasim::cli
