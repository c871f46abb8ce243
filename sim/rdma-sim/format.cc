// Human-readable output of show and stats.
#include <cstdio>
#include <string>

#include "cli.h"

namespace rdmasim::cli {

using nlohmann::json;

namespace {

// "  mlx5, DEVX: event_cap, unaffiliated events port_change,port_module_event, 1 channel open"
void print_devx(const json& d) {
  std::string line = "  provider " + d["provider"].get<std::string>();
  if (d.contains("devx")) {
    const json& x = d["devx"];
    if (x["log_max_uctx"].get<int>() == 0) {
      line += "  no DEVX (log_max_uctx 0)";
    } else if (!x["event_cap"].get<bool>()) {
      line += "  DEVX  legacy events (port_change only)";
    } else {
      std::string events;
      for (const json& e : x["user_unaffiliated_events"])
        events += (events.empty() ? "" : ",") + (e.is_string() ? e.get<std::string>() : e.dump());
      line += "  DEVX  unaffiliated events " + (events.empty() ? std::string("none") : events);
    }
    if (x["channels"].get<size_t>()) line += "  " + x["channels"].dump() + " channels open";
  }
  std::printf("%s\n", line.c_str());
}

void print_channel(const json& c) {
  std::string subs;
  for (const json& s : c["subscriptions"]) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s0x%02x%s", subs.empty() ? "" : ",",
                  s["event"].get<unsigned>(), s["eventfd"].get<bool>() ? "(eventfd)" : "");
    subs += buf;
  }
  std::printf(
      "  channel %llu  context %llu  pid %d  %s  %s  %s  subscriptions %s  queued %llu  read %llu"
      "  merged %llu  dropped %llu%s\n",
      c["id"].get<unsigned long long>(), c["context"].get<unsigned long long>(),
      c["pid"].get<int>(), c["device"].get<std::string>().c_str(),
      c["omit_data"].get<bool>() ? "omit_data" : "data", c["state"].get<std::string>().c_str(),
      subs.empty() ? "none" : subs.c_str(), c["queued"].get<unsigned long long>(),
      c["read"].get<unsigned long long>(), c["merged"].get<unsigned long long>(),
      c["dropped"].get<unsigned long long>(),
      c["backlog"].get<unsigned long long>()
          ? ("  backlog " + std::to_string(c["backlog"].get<unsigned long long>())).c_str()
          : "");
}

// "    counters/  link_downed 3  symbol_error 12  (19 more at 0)": the counters that are not 0.
void print_counters(const json& port, const char* group) {
  if (!port.contains(group)) return;
  std::string line = std::string("    ") + group + "/";
  size_t zero = 0;
  for (const auto& [name, value] : port[group].items()) {
    if (value.get<uint64_t>() == 0)
      ++zero;
    else
      line += "  " + name + " " + value.dump();
  }
  if (zero == port[group].size())
    line += "  all " + std::to_string(zero) + " at 0";
  else if (zero)
    line += "  (" + std::to_string(zero) + " more at 0)";
  std::printf("%s\n", line.c_str());
}

}  // namespace

void print_show(const json& reply) {
  if (reply.value("no_rdma", false))
    std::printf("no-RDMA mode: on (the device list is NULL, ENOSYS)\n");
  if (reply.value("query_latency_us", 0u))
    std::printf("query latency: %u us\n", reply["query_latency_us"].get<unsigned>());
  for (const json& d : reply["devices"]) {
    std::printf("%s  index %d  %s  node_guid %s  %s  %zu open contexts\n",
                d["name"].get<std::string>().c_str(), d["index"].get<int>(),
                d["uverbs"].get<std::string>().c_str(), d["node_guid"].get<std::string>().c_str(),
                d["state"].get<std::string>().c_str(), d["open_contexts"].get<size_t>());
    print_devx(d);
    for (const json& p : d["ports"]) {
      std::printf("  port %d  %s  %s/%s  %s %s", p["port"].get<int>(),
                  p["link_layer"].get<std::string>().c_str(), p["state"].get<std::string>().c_str(),
                  p["phys_state"].get<std::string>().c_str(), p["width"].get<std::string>().c_str(),
                  p["speed"].get<std::string>().c_str());
      if (p["link_layer"] == "infiniband")
        std::printf("  lid %d  sm_lid %d  sm_sl %d  lmc %d", p["lid"].get<int>(),
                    p["sm_lid"].get<int>(), p["sm_sl"].get<int>(), p["lmc"].get<int>());
      if (p.contains("netdev")) std::printf("  netdev %s", p["netdev"].get<std::string>().c_str());
      if (p.contains("module")) std::printf("  module %d", p["module"].get<int>());
      std::printf("\n");
      for (const json& g : p["gids"]) {
        std::printf("    gid[%d]  %s  %s", g["index"].get<int>(),
                    g["gid"].get<std::string>().c_str(), g["type"].get<std::string>().c_str());
        if (g.contains("netdev")) std::printf("  %s", g["netdev"].get<std::string>().c_str());
        std::printf("\n");
      }
      for (const json& k : p["pkeys"])
        std::printf("    pkey[%d]  %s\n", k["index"].get<int>(),
                    k["pkey"].get<std::string>().c_str());
      print_counters(p, "counters");
      print_counters(p, "hw_counters");
      if (p.contains("fec")) std::printf("    fec %s\n", p["fec"].get<std::string>().c_str());
      print_counters(p, "ethtool");
      if (p.contains("counter_faults"))
        for (const auto& [path, fault] : p["counter_faults"].items())
          std::printf("    %s  %s\n", path.c_str(), fault.get<std::string>().c_str());
    }
  }
  for (const json& name : reply["unplugged"])
    std::printf("%s  unplugged\n", name.get<std::string>().c_str());
}

void print_stats(const json& reply) {
  std::printf("%s\n", reply["message"].get<std::string>().c_str());
  for (const json& c : reply["contexts"])
    std::printf(
        "  context %llu  pid %d  %s (index %d)  %s  queued %llu  read %llu  acked %llu%s%s%s\n",
        c["id"].get<unsigned long long>(), c["pid"].get<int>(),
        c["device"].get<std::string>().c_str(), c["device_index"].get<int>(),
        c["open"].get<bool>() ? "open" : "closed", c["queued"].get<unsigned long long>(),
        c["read"].get<unsigned long long>(), c["acked"].get<unsigned long long>(),
        c["backlog"].get<unsigned long long>()
            ? ("  backlog " + std::to_string(c["backlog"].get<unsigned long long>())).c_str()
            : "",
        c["silenced"].get<bool>() ? "  silenced" : "",
        c["reader_closed"].get<bool>() ? "  async fd closed" : "");
  for (const json& c : reply["channels"])
    print_channel(c);
  for (const json& d : reply["devices"])
    if (d["state"] != "live")
      std::printf("  device %s: %s (%zu open contexts)\n", d["name"].get<std::string>().c_str(),
                  d["state"].get<std::string>().c_str(), d["open_contexts"].get<size_t>());
}

}  // namespace rdmasim::cli
