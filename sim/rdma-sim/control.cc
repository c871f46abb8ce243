// The control requests the rdma-sim CLI sends (one JSON object per connection) and their replies.
// Every reply has "ok"; a successful one a human "message" and the queued "events".
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "devx_reply.h"
#include "request_fields.h"
#include "simulator.h"
#include "topology.h"

namespace rdmasim {

using nlohmann::json;

json events_json(const std::vector<Delivery>& deliveries) {
  json events = json::array();
  for (const Delivery& d : deliveries) {
    json e = {
        {"device", d.device}, {"type", d.type}, {"element", d.element}, {"contexts", d.contexts}};
    if (const char* name = event_type_name(d.type)) e["type_name"] = name;
    events.push_back(e);
  }
  return events;
}

namespace {

std::string event_label(uint32_t type) {
  const char* name = event_type_name(type);
  return name ? name : "event " + std::to_string(type);
}

std::string events_text(const std::vector<Delivery>& deliveries) {
  if (deliveries.empty()) return "no event";
  std::string text;
  for (const Delivery& d : deliveries)
    text += (text.empty() ? "" : ", ") + event_label(d.type) + " (element " +
            std::to_string(d.element) + ") to " + std::to_string(d.contexts) +
            (d.contexts == 1 ? " context" : " contexts");
  return text;
}

json done(const std::string& what, const std::vector<Delivery>& deliveries) {
  json reply = {{"ok", true},
                {"message", what + ": " + events_text(deliveries)},
                {"events", events_json(deliveries)}};
  std::vector<DevxDelivery> devx;
  for (const Delivery& d : deliveries)
    if (d.devx) devx.push_back(*d.devx);
  if (devx.empty()) return reply;
  reply["devx_events"] = devx_events_json(devx);
  for (const DevxDelivery& d : devx)
    if (d.counts.channels)
      reply["message"] = reply["message"].get<std::string>() + "; DEVX " + devx_text(d);
  return reply;
}

std::optional<uint8_t> phys_option(const json& req) {
  auto phys = opt<std::string>(req, "phys");
  if (!phys) return std::nullopt;
  if (*phys == "sleep") return 1;
  if (*phys == "polling") return 2;
  if (*phys == "disabled") return 3;
  throw CommandError("--phys \"" + *phys + "\" is not one of: polling, disabled, sleep");
}

// speed-change's answer to a width, speed or port list: DEVICE_SPEED_CHANGE says the effective
// speed changed, which ibv_query_port does not carry (docs/simulator.md, "Where it differs from
// real hardware").
constexpr const char* kRetrainIsElsewhere =
    ": it changes no port attribute (the effective speed it announces is not one); a link "
    "that retrained is 'port down DEV/PORT', then 'port up DEV/PORT --width W --speed S'";

Fabric::Retrain retrain_option(const json& req) {
  Fabric::Retrain r;
  if (auto w = opt<std::string>(req, "width")) {
    r.width = width_code(*w);
    if (!r.width) throw CommandError("--width \"" + *w + "\" is not one of: " + width_names());
  }
  if (auto s = opt<std::string>(req, "speed")) {
    r.speed = speed_code(*s);
    if (!r.speed) throw CommandError("--speed \"" + *s + "\" is not one of: " + speed_names());
  }
  return r;
}

std::optional<uint16_t> lid_option(const json& req, const char* key) {
  auto v = opt<uint64_t>(req, key);
  if (!v) return std::nullopt;
  if (*v > 0xffff)
    throw CommandError(std::string(key) + " " + std::to_string(*v) + " is out of range");
  return static_cast<uint16_t>(*v);
}

}  // namespace

json Simulator::stats() const {
  json s = contexts_.stats();
  json devices = json::array();
  const json shown = fabric_->show("");
  for (const json& d : shown["devices"])
    devices.push_back({{"name", d["name"]},
                       {"index", d["index"]},
                       {"state", d["state"]},
                       {"open_contexts", d["open_contexts"]}});
  s["devices"] = devices;
  s["unplugged"] = shown["unplugged"];
  s["no_rdma"] = load_relaxed(shm_.fabric().header.no_rdma) != 0;
  s["query_latency_us"] = load_relaxed(shm_.fabric().header.query_latency_us);
  s["udev"] = udev_ != nullptr;
  s["udev_messages"] = udev_ ? udev_->sent() : 0;
  const DevlinkStandIn::Stats dl = devlink_socket_->stats();
  s["devlink"] = {{"connections_open", devlink_socket_->open_connections()},
                  {"connections", devlink_socket_->connections()},
                  {"requests", devlink_socket_->requests()},
                  {"dumps", dl.dumps},
                  {"port_dumps", dl.port_dumps},
                  {"notifications", dl.notifications},
                  {"ethtool_fec_replies", ethtool_->stats().fec},
                  {"ethtool_stats_replies", ethtool_->stats().stats}};
  const RdmaNetlinkStandIn::Stats nl = rdma_netlink_->stats();
  s["rdma_netlink"] = {{"kernel", rdma_netlink_kernel_name(rdma_netlink_->kernel())},
                       {"connections_open", rdma_netlink_->open_connections()},
                       {"connections", rdma_netlink_->connections()},
                       {"requests", rdma_netlink_->requests()},
                       {"errors", nl.errors},
                       {"notifications", nl.notifications}};
  json devx = channels_.stats();
  s["channels"] = std::move(devx["channels"]);
  s["devx_totals"] = std::move(devx["totals"]);
  s["ok"] = true;
  const json& t = s["totals"];
  s["message"] = std::to_string(t["contexts_open"].get<uint64_t>()) + " contexts open (" +
                 std::to_string(t["contexts_opened"].get<uint64_t>()) + " opened, " +
                 std::to_string(t["contexts_closed"].get<uint64_t>()) + " closed); events queued " +
                 std::to_string(t["events_queued"].get<uint64_t>()) + ", read " +
                 std::to_string(t["events_read"].get<uint64_t>()) + ", acked " +
                 std::to_string(t["events_acked"].get<uint64_t>());
  const json& d = s["devx_totals"];
  if (d["channels_created"].get<uint64_t>() > 0)
    s["message"] = s["message"].get<std::string>() + "; " +
                   std::to_string(d["channels_open"].get<uint64_t>()) +
                   " DEVX channels open, records queued " +
                   std::to_string(d["records_queued"].get<uint64_t>()) + ", read " +
                   std::to_string(d["records_read"].get<uint64_t>()) + ", merged " +
                   std::to_string(d["merged"].get<uint64_t>()) + ", dropped " +
                   std::to_string(d["dropped"].get<uint64_t>());
  return s;
}

std::optional<json> Simulator::handle(uint64_t connection, const json& req) {
  const std::string cmd = need<std::string>(req, "cmd");
  Fabric& f = *fabric_;
  if (cmd == "ping")
    return json{{"ok", true}, {"message", "ready " + dir_}, {"dir", dir_}, {"pid", getpid()}};
  if (cmd == "show") {
    const std::string only = opt<std::string>(req, "device").value_or("");
    if (!only.empty() && !f.find(only)) f.device(only);  // the error for an unknown device
    json s = f.show(only);
    s["ok"] = true;
    s["no_rdma"] = load_relaxed(shm_.fabric().header.no_rdma) != 0;
    s["query_latency_us"] = load_relaxed(shm_.fabric().header.query_latency_us);
    s["udev"] = udev_ != nullptr;
    s["udev_messages"] = udev_ ? udev_->sent() : 0;
    return s;
  }
  if (cmd == "stats") return stats();
  if (cmd == "stop") {
    stopping_ = true;  // the loop ends after this round; `rdma-sim stop` waits for the exit
    return json{{"ok", true}, {"message", "stopping"}, {"pid", getpid()}};
  }

  const auto port = [&] { return need<std::string>(req, "port"); };
  if (cmd == "port_down")
    return done(port() + ": port down", f.port_down(port(), phys_option(req)));
  if (cmd == "port_up")
    return done(port() + ": port up", f.port_up(port(), lid_option(req, "lid"),
                                                lid_option(req, "sm_lid"), retrain_option(req)));
  if (cmd == "port_mtu") {
    const uint32_t mtu = need<uint32_t>(req, "mtu");
    return done(port() + ": active MTU " + std::to_string(mtu), f.set_active_mtu(port(), mtu));
  }
  if (cmd == "lid") {
    const auto lid = lid_option(req, "lid");
    if (!lid) throw CommandError("request lacks \"lid\"");
    return done(port() + ": LID " + std::to_string(*lid), f.set_lid(port(), *lid));
  }
  if (cmd == "sm") {
    const auto sm = lid_option(req, "sm_lid");
    if (!sm) throw CommandError("request lacks \"sm_lid\"");
    auto sl = opt<uint64_t>(req, "sl");
    if (sl && *sl > 15)
      throw CommandError("SM SL " + std::to_string(*sl) + " is out of range (0..15)");
    return done(port() + ": SM LID " + std::to_string(*sm),
                f.set_sm(port(), *sm,
                         sl ? std::optional<uint8_t>(static_cast<uint8_t>(*sl)) : std::nullopt));
  }
  if (cmd == "reregister") return done(port() + ": client reregister", f.reregister(port()));
  if (cmd == "pkey") {
    const auto value = need<uint64_t>(req, "value");
    if (value > 0xffff)
      throw CommandError("P_Key " + std::to_string(value) + " is out of range (0..0xffff)");
    const auto index = need<int64_t>(req, "index");
    if (index < 0 || index > 0xffff)
      throw CommandError("P_Key index " + std::to_string(index) + " is out of range");
    return done(port() + ": P_Key[" + std::to_string(index) + "]",
                f.set_pkey(port(), static_cast<int>(index), static_cast<uint16_t>(value)));
  }
  if (cmd == "gid_add") {
    auto index = opt<int64_t>(req, "index");
    if (index && (*index < 0 || *index > 0xffff))
      throw CommandError("GID index " + std::to_string(*index) + " is out of range");
    return done(port() + ": GID added",
                f.gid_add(port(), need<std::string>(req, "gid"),
                          index ? std::optional<int>(static_cast<int>(*index)) : std::nullopt,
                          opt<std::string>(req, "type"), opt<std::string>(req, "netdev")));
  }
  if (cmd == "gid_del") {
    const auto index = need<int64_t>(req, "index");
    if (index < 0 || index > 0xffff)
      throw CommandError("GID index " + std::to_string(index) + " is out of range");
    return done(port() + ": GID " + std::to_string(index) + " removed",
                f.gid_del(port(), static_cast<int>(index)));
  }
  if (cmd == "gid_add_ip")
    return done(
        port() + ": GIDs for " + need<std::string>(req, "ip") + " added",
        f.gid_add_ip(port(), need<std::string>(req, "ip"), need<std::string>(req, "netdev")));
  if (cmd == "gid_del_ip")
    return done(port() + ": GIDs for " + need<std::string>(req, "ip") + " removed",
                f.gid_del_ip(port(), need<std::string>(req, "ip")));

  const auto device = [&] { return need<std::string>(req, "device"); };
  if (cmd == "fatal")
    return done(device() + ": fatal error",
                f.fatal(device(), opt<uint64_t>(req, "element").value_or(0)));
  if (cmd == "speed_change") {
    // The event changes no port attribute; a client of an earlier simulator that asks it to is
    // told where a retrain is.
    for (const char* key : {"ports", "width", "speed"})
      if (req.contains(key))
        throw CommandError(std::string("speed-change takes no ") + key + kRetrainIsElsewhere);
    return done(device() + ": speed change", f.speed_change(device()));
  }
  if (cmd == "unplug") {
    const bool disassociate = opt<bool>(req, "disassociate").value_or(true);
    const std::string name = device();
    json reply = done(name + ": unplugged", f.unplug(name, disassociate));
    const bool pending = f.removal_pending(name);
    reply["removal_pending"] = pending;
    if (pending)
      reply["message"] =
          reply["message"].get<std::string>() + "; removal pending until its contexts close";
    auto wait = opt<double>(req, "wait");
    if (pending && wait) {
      const auto deadline = std::chrono::steady_clock::now() +
                            std::chrono::milliseconds(static_cast<int64_t>(*wait * 1000));
      waiters_.push_back(Waiter{connection, name, deadline, reply});
      return std::nullopt;
    }
    return reply;
  }
  if (cmd == "replug") {
    f.replug(device());
    const DeviceEntry& e = f.device(device());
    return json{{"ok", true},
                {"message", device() + ": plugged in as index " + std::to_string(e.index) +
                                ", uverbs" + std::to_string(e.uverbs)},
                {"index", e.index},
                {"events", json::array()}};
  }
  if (cmd == "cycle") return handle_cycle(req);
  if (cmd == "reload") return handle_reload(req);
  if (cmd == "rename") {
    const std::string to = need<std::string>(req, "new_name");
    f.rename(device(), to);
    return json{
        {"ok", true}, {"message", device() + ": renamed to " + to}, {"events", json::array()}};
  }
  if (cmd == "event") {
    const auto type = need<uint64_t>(req, "type");
    if (type > UINT32_MAX)
      throw CommandError("event type " + std::to_string(type) + " is out of range");
    Delivery d = f.raw_event(need<std::string>(req, "target"), static_cast<uint32_t>(type),
                             opt<uint64_t>(req, "element"), opt<uint64_t>(req, "context"));
    return done(need<std::string>(req, "target") + ": raw event", {d});
  }
  if (cmd == "storm") return handle_storm(req);
  if (cmd == "no_rdma") {
    const bool on = need<bool>(req, "on");
    store_release(shm_.fabric().header.no_rdma, on ? 1u : 0u);
    return json{{"ok", true},
                {"message", std::string("no-RDMA mode ") + (on ? "on" : "off")},
                {"no_rdma", on}};
  }
  if (cmd == "counter") return handle_counter(req);
  if (cmd == "devlink") return handle_devlink(req);
  if (cmd == "rdma_netlink_close") {
    const size_t n = rdma_netlink_->close_all();
    return json{{"ok", true},
                {"message", "rdma-netlink.sock: " + std::to_string(n) + " connection(s) closed"},
                {"closed", n},
                {"events", json::array()}};
  }
  if (auto reply = handle_devx(cmd, req)) return reply;
  if (cmd == "set") {
    const auto us = need<uint64_t>(req, "query_latency_us");
    if (us > 10000000)
      throw CommandError("query latency " + std::to_string(us) +
                         " us is out of range (0..10000000)");
    store_release(shm_.fabric().header.query_latency_us, static_cast<uint32_t>(us));
    return json{{"ok", true},
                {"message", "query latency " + std::to_string(us) + " us"},
                {"query_latency_us", us}};
  }
  throw CommandError("unknown command \"" + cmd + "\"");
}

json Simulator::handle_storm(const json& req) {
  Fabric& f = *fabric_;
  const auto count = need<uint64_t>(req, "count");
  if (count == 0 || count > 10000000)
    throw CommandError("--count " + std::to_string(count) + " is out of range (1..10000000)");
  std::vector<std::pair<DeviceEntry*, int>> targets;
  const json& t = req.contains("targets") ? req["targets"] : json("all");
  if (t.is_string() && t.get<std::string>() == "all") {
    for (const DeviceEntry& e : f.devices())
      if (e.state == DeviceState::kLive)
        for (size_t p = 1; p <= e.model.ports.size(); ++p)
          targets.emplace_back(f.find(e.model.name), static_cast<int>(p));
    if (targets.empty()) throw CommandError("no live device to storm");
  } else {
    for (const json& name : t) {
      auto target = f.port(name.get<std::string>());
      if (target.first->state != DeviceState::kLive)
        throw CommandError("device " + target.first->model.name + " is not live");
      targets.push_back(target);
    }
  }
  std::vector<uint32_t> types;
  if (req.contains("types"))
    for (const json& v : req["types"])
      types.push_back(v.get<uint32_t>());
  if (types.empty()) types = {IBV_EVENT_PORT_ERR, IBV_EVENT_PORT_ACTIVE};

  const auto start = std::chrono::steady_clock::now();
  const uint64_t deliveries = f.storm(targets, types, count);
  contexts_.flush();
  return storm_reply("storm", count, start, "deliveries", deliveries, "targets", targets.size());
}

json Simulator::handle_cycle(const json& req) {
  Fabric& f = *fabric_;
  const std::string name = need<std::string>(req, "device");
  const auto count = opt<uint64_t>(req, "count").value_or(1);
  if (count == 0 || count > 100000)
    throw CommandError("--count " + std::to_string(count) + " is out of range (1..100000)");
  f.device(name);  // refused before anything changes when there is no such device
  size_t fatal_deliveries = 0;
  for (uint64_t i = 0; i < count; ++i) {
    // Like a driver reload: each open context gets its DEVICE_FATAL, the device goes and comes
    // back with a new index.
    for (const Delivery& d : f.unplug(name, /*disassociate=*/true))
      fatal_deliveries += d.contexts;
    contexts_.flush();
    f.replug(name);
  }
  const DeviceEntry& e = f.device(name);
  return json{{"ok", true},
              {"message", name + ": unplugged and plugged in " + std::to_string(count) +
                              " times, now index " + std::to_string(e.index) + ", uverbs" +
                              std::to_string(e.uverbs) + "; device_fatal to " +
                              std::to_string(fatal_deliveries) + " contexts"},
              {"index", e.index},
              {"count", count},
              {"events", json::array()}};
}

}  // namespace rdmasim
