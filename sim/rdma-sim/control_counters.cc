// The counter control request: {"cmd": "counter", "action": "add"|"set"|"fail"|"reset",
// "port": "DEV/PORT", "name": COUNTER, "value": N (add, set), "mode": MODE (fail)}. The reply
// has the counter as it is now; counters queue no event. A name "ethtool/..." is a RoCE port's
// PHY counter (add and set only): ethtool netlink reports it, no file holds it.
#include "request_fields.h"
#include "simulator.h"

namespace rdmasim {

using nlohmann::json;

namespace {

json counter_json(const Fabric::CounterChange& c) {
  return {{"port", c.port},           {"group", group_dir(c.counter.group)},
          {"name", c.counter.name},   {"bits", c.counter.bits},
          {"max", c.counter.max()},   {"wraps", c.counter.wraps},
          {"value", c.counter.value}, {"fault", fault_name(c.counter.fault)}};
}

// What a reader of the file meets now.
std::string reading(const Counter& c) {
  switch (c.fault) {
    case CounterFault::kNone:
      return "reads " + std::to_string(c.value);
    case CounterFault::kMissing:
      return "missing (open fails with ENOENT)";
    case CounterFault::kEmpty:
      return "empty";
    case CounterFault::kGarbage:
      return "reads \"N/A (no PMA)\"";
    case CounterFault::kUnreadable:
      return "unreadable (a directory: read fails with EISDIR)";
    case CounterFault::kHang:
      return "hangs (a FIFO: open blocks, as a read that waits on a firmware that stopped "
             "answering)";
  }
  return "";
}

json reply(const Fabric::CounterChange& c, std::string message) {
  if (c.counter.fault != CounterFault::kNone)
    message +=
        "; the file stays " +
        std::string(c.counter.fault == CounterFault::kHang ? "hung" : fault_name(c.counter.fault)) +
        " until `counter fail " + c.port + " " + c.counter.path() + " ok`";
  return {{"ok", true},
          {"message", std::move(message)},
          {"counter", counter_json(c)},
          {"saturated", c.saturated},
          {"wrapped", c.wrapped},
          {"events", json::array()}};
}

// What an add or set past a wrapping counter's maximum did.
std::string wrapped_note(const Fabric::CounterChange& c) {
  return c.wrapped ? " (wrapped: " + std::to_string(c.counter.bits) + " bits go on from 0 past " +
                         std::to_string(c.counter.max()) + ")"
                   : "";
}

// The reply to add or set on an ethtool counter, shaped as a sysfs counter's.
json phy_reply(const Fabric::PhyCounterChange& c, std::string message) {
  if (c.fec == FecMode::kOff && c.name != "ethtool/symbol_errors")
    message += " (not reported while FEC is off)";
  return {{"ok", true},
          {"message", std::move(message)},
          {"counter",
           {{"port", c.port},
            {"group", "ethtool"},
            {"name", c.name.substr(std::string(kEthtoolPrefix).size())},
            {"bits", 64},
            {"max", UINT64_MAX},
            {"value", c.value},
            {"fec", fec_mode_name(c.fec)}}},
          {"saturated", c.saturated},
          {"events", json::array()}};
}

json handle_phy_counter(Fabric& f, const std::string& action, const std::string& port,
                        const std::string& name, const json& req) {
  if (action == "add") {
    const auto n = need<uint64_t>(req, "value");
    const Fabric::PhyCounterChange c = f.phy_counter_add(port, name, n);
    return phy_reply(c, c.port + ": " + c.name + " +" + std::to_string(n) + " = " +
                            std::to_string(c.value) + (c.saturated ? " (saturated)" : ""));
  }
  if (action == "set") {
    const Fabric::PhyCounterChange c = f.phy_counter_set(port, name, need<uint64_t>(req, "value"));
    return phy_reply(c, c.port + ": " + c.name + " = " + std::to_string(c.value));
  }
  throw CommandError("counter " + action + " is for sysfs counters: " + name +
                     " is read over ethtool netlink and takes only add and set");
}

}  // namespace

json Simulator::handle_counter(const json& req) {
  Fabric& f = *fabric_;
  const std::string action = need<std::string>(req, "action");
  const std::string port = need<std::string>(req, "port");
  if (action == "reset") {
    const size_t n = f.counter_reset(port);
    return {{"ok", true},
            {"message", port + ": " + std::to_string(n) + " counters/ counters reset to 0"},
            {"reset", n},
            {"events", json::array()}};
  }
  const std::string name = need<std::string>(req, "name");
  if (is_ethtool_counter(name)) return handle_phy_counter(f, action, port, name, req);
  if (action == "add") {
    const auto n = need<uint64_t>(req, "value");
    const Fabric::CounterChange c = f.counter_add(port, name, n);
    return reply(c, c.port + ": " + c.counter.path() + " +" + std::to_string(n) + " = " +
                        std::to_string(c.counter.value) +
                        (c.saturated ? " (saturated: " + std::to_string(c.counter.bits) +
                                           " bits stop at " + std::to_string(c.counter.max()) + ")"
                                     : wrapped_note(c)));
  }
  if (action == "set") {
    const Fabric::CounterChange c = f.counter_set(port, name, need<uint64_t>(req, "value"));
    return reply(c, c.port + ": " + c.counter.path() + " = " + std::to_string(c.counter.value) +
                        wrapped_note(c));
  }
  if (action == "fail") {
    const std::string mode = need<std::string>(req, "mode");
    CounterFault fault;
    if (!parse_fault(mode, &fault))
      throw CommandError("counter mode \"" + mode + "\" is not one of: " + kFaultNames);
    const Fabric::CounterChange c = f.counter_fail(port, name, fault);
    return reply(c, c.port + ": " + c.counter.path() + " " + reading(c.counter));
  }
  throw CommandError("counter action \"" + action + "\" is not one of: add, set, fail, reset");
}

}  // namespace rdmasim
