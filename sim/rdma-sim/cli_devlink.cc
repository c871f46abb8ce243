// The devlink commands: show, ports, report, recover, set, dump-clear, add and remove a devlink
// health reporter of the stand-in kernel (docs/simulator.md, "devlink health").
#include <cstdint>

#include "cli_commands.h"

namespace rdmasim::cli {

using nlohmann::json;

namespace {

// --port N: a devlink port index (DEVLINK_ATTR_PORT_INDEX, a u32), for a port reporter.
void put_port(json& req, const Args& a) {
  if (auto v = option(a, "--port")) req["port"] = number(*v, "--port", UINT32_MAX);
}

json reporter_request(const std::string& action, const Args& a) {
  json req = {{"cmd", "devlink"},
              {"action", action},
              {"target", a.positional[0]},
              {"reporter", a.positional[1]}};
  put_port(req, a);
  return req;
}

bool on_off(const std::string& text, const std::string& what) {
  if (text == "on" || text == "true") return true;
  if (text == "off" || text == "false") return false;
  throw UsageError(what + " \"" + text + "\" is not on or off");
}

std::string recovery(const Args& a) {
  const std::string r = option(a, "--recovery").value_or("ok");
  if (r != "ok" && r != "fail") throw UsageError("--recovery \"" + r + "\" is not ok or fail");
  return r;
}

// devlink report and devlink recover: the reporter's ACTION, the recovery it starts ending as
// --recovery says (ok or fail).
Spec recovery_command(const std::string& action) {
  return {"devlink " + action,
          2,
          2,
          {"--recovery", "--port"},
          {},
          [action](const Global& g, const Args& a) {
            json req = reporter_request(action, a);
            req["recovery"] = recovery(a);
            return send(g, req);
          }};
}

// Grace periods are milliseconds, as devlink(8) takes them.
uint64_t grace(const std::string& text) {
  return number(text, "--grace-period", UINT64_MAX / 2);
}

}  // namespace

std::vector<Spec> with_devlink_specs(std::vector<Spec> specs) {
  const std::vector<Spec> devlink_specs = {
      {"devlink show",
       0,
       1,
       {"--port"},
       {},
       [](const Global& g, const Args& a) {
         json req = {{"cmd", "devlink"}, {"action", "show"}};
         if (!a.positional.empty()) req["target"] = a.positional[0];
         if (a.positional.empty() && option(a, "--port"))
           throw UsageError("--port needs a DEV or HANDLE");
         put_port(req, a);
         return send(g, req);
       }},
      {"devlink ports",
       0,
       1,
       {},
       {},
       [](const Global& g, const Args& a) {
         json req = {{"cmd", "devlink"}, {"action", "ports"}};
         if (!a.positional.empty()) req["target"] = a.positional[0];
         return send(g, req);
       }},
      recovery_command("report"),
      {"reload",
       1,
       1,
       {},
       {},
       [](const Global& g, const Args& a) {
         return send(g, {{"cmd", "reload"}, {"device", a.positional[0]}});
       }},
      recovery_command("recover"),
      {"devlink set",
       2,
       2,
       {"--grace-period", "--auto-recover", "--auto-dump", "--port"},
       {},
       [](const Global& g, const Args& a) {
         json req = reporter_request("set", a);
         if (auto v = option(a, "--grace-period")) req["grace_period_ms"] = grace(*v);
         if (auto v = option(a, "--auto-recover"))
           req["auto_recover"] = on_off(*v, "--auto-recover");
         if (auto v = option(a, "--auto-dump")) req["auto_dump"] = on_off(*v, "--auto-dump");
         return send(g, req);
       }},
      {"devlink dump-clear",
       2,
       2,
       {"--port"},
       {},
       [](const Global& g, const Args& a) { return send(g, reporter_request("dump_clear", a)); }},
      {"devlink add",
       2,
       2,
       {"--grace-period", "--port"},
       {"--no-recover", "--no-dump"},
       [](const Global& g, const Args& a) {
         json req = reporter_request("add", a);
         req["recover"] = !a.options.count("--no-recover");
         req["dump"] = !a.options.count("--no-dump");
         if (auto v = option(a, "--grace-period")) req["grace_period_ms"] = grace(*v);
         return send(g, req);
       }},
      {"devlink close",
       0,
       0,
       {},
       {},
       [](const Global& g, const Args&) {
         return send(g, {{"cmd", "devlink"}, {"action", "close"}});
       }},
      {"devlink remove",
       2,
       2,
       {"--port"},
       {},
       [](const Global& g, const Args& a) { return send(g, reporter_request("remove", a)); }},
  };
  specs.insert(specs.end(), devlink_specs.begin(), devlink_specs.end());
  return specs;
}

}  // namespace rdmasim::cli
