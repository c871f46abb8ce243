// The devlink control request: {"cmd": "devlink", "action": ACTION, "target": DEV or HANDLE,
// "reporter": NAME, ...} (docs/simulator.md, "devlink health"). Reports and recoveries send
// their notifications to every connection of DIR/devlink.sock before the reply.
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <optional>

#include "common/protocol.h"
#include "devx_reply.h"
#include "request_fields.h"
#include "simulator.h"
#include "topology_devlink.h"

namespace rdmasim {

using nlohmann::json;

namespace {

// The driver's recover operation: it works ("ok", 0) or fails ("fail": EIO, as mlx5's
// mlx5_health_try_recover does when the device does not come back).
int recovery_error(const json& req) {
  const std::string r = opt<std::string>(req, "recovery").value_or("ok");
  if (r == "ok") return 0;
  if (r == "fail") return EIO;
  throw CommandError("--recovery \"" + r + "\" is not one of: ok, fail");
}

std::string error_name(int error) {
  switch (error) {
    case 0:
      return "0";
    case ECANCELED:
      return "ECANCELED";
    case EIO:
      return "EIO";
    case EOPNOTSUPP:
      return "EOPNOTSUPP";
  }
  return std::to_string(error);
}

std::string state_text(const DevlinkReporter& r) {
  return std::string(r.state == 0 ? "healthy" : "error") + " (errors " +
         std::to_string(r.error_count) + ", recoveries " + std::to_string(r.recovery_count) + ")";
}

json outcome_json(const DevlinkHealth::Outcome& o, std::string message) {
  json j = {{"ok", true},
            {"message", std::move(message)},
            {"handle", o.handle},
            {"reporter", o.reporter.spec.name},
            {"state", o.reporter.state == 0 ? "healthy" : "error"},
            {"error_count", o.reporter.error_count},
            {"recover_count", o.reporter.recovery_count},
            {"result", error_name(o.error)},
            {"recovered", o.recovered},
            {"notifications", o.notifications},
            {"events", json::array()}};
  if (o.reporter.spec.port_index >= 0) j["port_index"] = o.reporter.spec.port_index;
  return j;
}

// "HANDLE REPORTER" or "HANDLE port N REPORTER", as a message names a reporter.
std::string reporter_text(const DevlinkHealth::Outcome& o) {
  const int64_t port = o.reporter.spec.port_index;
  return o.handle + (port >= 0 ? " port " + std::to_string(port) : "") + " " + o.reporter.spec.name;
}

// A devlink port index (the request's "port"), as DEVLINK_ATTR_PORT_INDEX carries it: a u32.
std::optional<int64_t> port_of(const json& req) {
  const auto port = opt<uint64_t>(req, "port");
  if (port && *port > UINT32_MAX)
    throw CommandError("devlink port index " + std::to_string(*port) + " is not a u32");
  return port ? std::optional<int64_t>(static_cast<int64_t>(*port)) : std::nullopt;
}

std::string port_text(const std::optional<int64_t>& port) {
  return port ? " port " + std::to_string(*port) : "";
}

// devlink port show's line: "auxiliary/mlx5_core.eth.0/65535: type eth netdev eth2 flavour
// physical port 0 (mlx5_1)".
std::string port_line(const json& instance, const json& p) {
  std::string line = instance["handle"].get<std::string>() + "/" +
                     std::to_string(p["index"].get<uint32_t>()) + ": type " +
                     p["type"].get<std::string>();
  if (p.contains("netdev"))
    line += " netdev " + p["netdev"].get<std::string>() + " ifindex " +
            std::to_string(p["ifindex"].get<uint32_t>());
  line += " flavour " + p["flavour"].get<std::string>() + " port " +
          std::to_string(p["number"].get<uint32_t>());
  const std::string device = instance["device"].get<std::string>();
  return device.empty() ? line : line + " (" + device + ")";
}

// One line per instance, its device and its ports, before the reporters' lines.
std::string instances_text(const json& instances) {
  std::string text;
  for (const json& i : instances) {
    const std::string device = i["device"].get<std::string>();
    text += "instance " + i["handle"].get<std::string>() +
            (device.empty() ? "" : " (" + device + ")") + ": " +
            std::to_string(i["reporters"].get<size_t>()) + " reporter(s), " +
            std::to_string(i["ports"].size()) + " port(s)\n";
    for (const json& p : i["ports"])
      text += "  port " + port_line(i, p) + "\n";
  }
  return text;
}

// What mlx5 did to the device: "entered_error" (the DEVICE_FATAL of mlx5_enter_error_state),
// "unloaded" (the recovery's or the driver's unload disassociated it: its events), "reloaded".
json& with_mlx5(json& reply, const Mlx5Fatal& f) {
  if (f.device.empty()) return reply;
  reply["events"] = events_json(f.entered);
  reply["unload_events"] = events_json(f.reload);
  reply["device"] = f.device;
  return reply;
}

}  // namespace

json Simulator::handle_devlink(const json& req) {
  const std::string action = need<std::string>(req, "action");
  if (action == "show") {
    const std::string only = opt<std::string>(req, "target").value_or("");
    json reporters = devlink_.show(only, port_of(req));
    std::string message;
    for (const json& r : reporters) {
      message +=
          (message.empty() ? "" : "\n") + r["handle"].get<std::string>() +
          (r.contains("port_index") ? " port " + std::to_string(r["port_index"].get<int64_t>())
                                    : "") +
          " " + r["reporter"].get<std::string>() + ": " + r["state"].get<std::string>() +
          ", errors " + std::to_string(r["error_count"].get<uint64_t>()) + ", recoveries " +
          std::to_string(r["recover_count"].get<uint64_t>()) +
          (r["device"].get<std::string>().empty() ? ""
                                                  : " (" + r["device"].get<std::string>() + ")");
    }
    if (message.empty()) message = "no devlink health reporter";
    const json instances = devlink_.instances_json(only);
    return {{"ok", true},
            {"message", instances_text(instances) + message},
            {"reporters", reporters},
            {"instances", instances},
            {"kernel", kernel_.text()},
            {"socket", dir_ + "/" + kDevlinkSocketFile}};
  }
  if (action == "ports") {
    const json instances = devlink_.instances_json(opt<std::string>(req, "target").value_or(""));
    std::string message;
    for (const json& i : instances)
      for (const json& p : i["ports"])
        message += port_line(i, p) + "\n";
    if (message.empty()) message = "no devlink port\n";
    message.pop_back();
    return {{"ok", true}, {"message", message}, {"instances", instances}};
  }
  if (action == "close") {
    const size_t n = devlink_socket_->close_all();
    return {{"ok", true},
            {"message", "devlink.sock: " + std::to_string(n) + " connection(s) closed"},
            {"closed", n},
            {"events", json::array()}};
  }
  const std::string target = need<std::string>(req, "target");
  const std::string name = need<std::string>(req, "reporter");
  const DevlinkHealth::Address address{target, name, port_of(req)};
  if (action == "report") {
    // mlx5's fw_fatal: the device enters the error state first, the recovery reloads the
    // function, and an aborted one unloads it (control_mlx5.cc).
    Mlx5Fatal fatal = mlx5_fatal_of(address);
    enter_error_state(fatal);
    const DevlinkHealth::Outcome o =
        devlink_.report(address, recovery_error(req), mlx5_recover(fatal));
    std::string what = reporter_text(o) + ": reported, " + state_text(o.reporter);
    if (!fatal.entered.empty()) what = fatal.device + " entered the error state; " + what;
    if (o.recovered) what += ", recovered at once";
    if (o.recovered && !fatal.device.empty())
      what += " (" + fatal.device + " unloaded and loaded again)";
    if (o.error == ECANCELED) {
      what += "; recovery aborted (already in error or within the grace period)";
      unload_in_error(fatal);
      if (!fatal.device.empty()) what += "; driver in error state: " + fatal.device + " unloaded";
    }
    if (o.error && o.error != ECANCELED)
      what += "; recovery failed (" + error_name(o.error) + "): left in error";
    json reply =
        outcome_json(o, what + "; " + std::to_string(o.notifications) + " notification(s)");
    return with_mlx5(reply, fatal);
  }
  if (action == "recover") {
    Mlx5Fatal fatal = mlx5_fatal_of(address);
    const DevlinkHealth::Outcome o =
        devlink_.recover(address, recovery_error(req), mlx5_recover(fatal));
    if (o.error == EOPNOTSUPP)
      throw CommandError(o.handle + " reporter " + name + " has no recover operation (EOPNOTSUPP)");
    std::string what = reporter_text(o) + ": ";
    what += o.error ? "recovery failed (" + error_name(o.error) + "), " + state_text(o.reporter)
            : o.recovered ? "recovered, " + state_text(o.reporter)
                          : "already healthy, nothing done";
    json reply = outcome_json(o, what);
    if (o.error) {
      reply["ok"] = false;
      reply["error"] = what;
    }
    return with_mlx5(reply, fatal);
  }
  if (action == "set") {
    const auto grace = opt<uint64_t>(req, "grace_period_ms");
    const auto auto_recover = opt<bool>(req, "auto_recover");
    const auto auto_dump = opt<bool>(req, "auto_dump");
    if (!grace && !auto_recover && !auto_dump)
      throw CommandError("nothing to set: --grace-period, --auto-recover or --auto-dump");
    const DevlinkReporter r = devlink_.set(address, grace, auto_recover, auto_dump);
    return {{"ok", true},
            {"message", target + port_text(address.port) + " " + name + ": grace period " +
                            std::to_string(r.spec.grace_period_ms) + " ms, auto recover " +
                            (r.auto_recover ? "on" : "off") + ", auto dump " +
                            (r.auto_dump ? "on" : "off")},
            {"events", json::array()}};
  }
  if (action == "dump_clear") {
    devlink_.dump_clear(address);
    return {{"ok", true},
            {"message", target + port_text(address.port) + " " + name + ": dump cleared"},
            {"events", json::array()}};
  }
  if (action == "add") {
    std::string bus, device;
    if (!split_devlink_handle(target, &bus, &device))
      throw CommandError("\"" + target + "\" is not a devlink handle (BUS/DEVICE)");
    if (!valid_reporter_name(name))
      throw CommandError("\"" + name + "\" is not a reporter name (1 to 63 characters, no '/')");
    DevlinkReporterSpec spec;
    spec.name = name;
    spec.recover = opt<bool>(req, "recover").value_or(true);
    spec.dump = opt<bool>(req, "dump").value_or(true);
    spec.grace_period_ms = opt<uint64_t>(req, "grace_period_ms").value_or(0);
    spec.port_index = address.port.value_or(-1);
    if (spec.grace_period_ms && !spec.recover)
      throw CommandError("a reporter without recovery has no grace period");
    devlink_.add_reporter(target, spec);
    return {{"ok", true},
            {"message", target + port_text(address.port) + " " + name +
                            ": reporter created (no notification)"},
            {"events", json::array()}};
  }
  if (action == "remove") {
    devlink_.remove_reporter(address);
    return {{"ok", true},
            {"message", target + port_text(address.port) + " " + name +
                            ": reporter destroyed (no notification)"},
            {"events", json::array()}};
  }
  throw CommandError(
      "devlink action \"" + action +
      "\" is not one of: show, ports, report, recover, set, dump_clear, add, remove, close");
}

}  // namespace rdmasim
