// Small helpers shared by the integration tests.
#pragma once

#include <gtest/gtest.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "json_members.h"
#include "line_client.h"
#include "proc_info.h"
#include "process.h"
#include "sim_fabric.h"

namespace rdma_eventd::test {

// A record with the keys that differ from run to run (time, stream, host, seq) removed, so a
// test can compare the rest as a whole.
inline nlohmann::json stable_part(nlohmann::json record) {
  for (const char* key : {"time", "stream", "host", "seq"})
    record.erase(key);
  return record;
}

// The records of the two-adapter topology (sim/topologies/two-adapters.json), for comparing
// whole records after stable_part().

// mlx5_0 port 1 as the daemon first sees it.
inline nlohmann::json ib_port(nlohmann::json overrides = nlohmann::json::object()) {
  nlohmann::json p = {{"link_layer", "infiniband"},
                      {"state", "active"},
                      {"phys_state", "link_up"},
                      {"lid", 7},
                      {"sm_lid", 1},
                      {"sm_sl", 0},
                      {"lmc", 0},
                      {"active_mtu", 4096},
                      {"width", "4x"},
                      {"speed", "hdr"},
                      {"rate_gbps", 200}};
  p.update(overrides);
  return p;
}

// mlx5_1 port 1 or 2: an Ethernet (RoCE) port, which has no LID and no subnet manager.
inline nlohmann::json roce_port(nlohmann::json overrides = nlohmann::json::object()) {
  nlohmann::json p = ib_port({{"link_layer", "ethernet"},
                              {"lid", 0},
                              {"sm_lid", 0},
                              {"active_mtu", 1024},
                              {"speed", "edr"},
                              {"rate_gbps", 100}});
  p.update(overrides);
  return p;
}

// The keys every record has; node_guid from the device name.
inline nlohmann::json record(const std::string& event, int type, const std::string& severity,
                             const std::string& device, int port) {
  return {{"schema", 1},
          {"event", event},
          {"event_type", type},
          {"severity", severity},
          {"device", device},
          {"port", port},
          {"node_guid", device == "mlx5_0" ? "0c42:a103:00f6:5e44" : "0c42:a103:006d:0b3a"}};
}

// device_speed_change of a device of `ports` ports, as a daemon on rdma-core 44 (no
// ibv_query_port_speed) writes it: every port's effective speed unknown.
inline nlohmann::json speed_change_record(const std::string& device, int ports) {
  nlohmann::json r = record("device_speed_change", 20, "notice", device, 0);
  r["effective_speed"] = nlohmann::json::array();
  for (int port = 1; port <= ports; ++port)
    r["effective_speed"].push_back(
        {{"port", port}, {"gbps", nullptr}, {"unknown", "not_in_libibverbs"}});
  return r;
}

inline nlohmann::json port_record(const std::string& event, int type, const std::string& severity,
                                  const std::string& device, int port, const nlohmann::json& block,
                                  const nlohmann::json& changes) {
  nlohmann::json r = record(event, type, severity, device, port);
  r.update(block);
  r["changes"] = changes;
  return r;
}

inline nlohmann::json change(nlohmann::json old_value, nlohmann::json new_value) {
  return {{"old", old_value}, {"new", new_value}};
}

// The harness's: the simulator's control commands (throwing when refused), and a raw client
// of the subscriber socket.
using rdmatest::inject;
using rdmatest::LineClient;
using rdmatest::reply_to;

// The journal entries (in order) that `want` names by their place have the fields it gives
// each, compared as a whole.
inline void expect_entry_fields(const std::vector<nlohmann::json>& entries,
                                const std::map<size_t, nlohmann::json>& want) {
  for (const auto& [i, fields] : want) {
    ASSERT_LT(i, entries.size());
    EXPECT_EQ(rdmatest::members_of(entries[i], fields), fields) << "journal entry " << i;
  }
}

// The wakeups of a daemon's main thread once it has settled (its start, a status request's
// connection): read `poll` apart until two reads agree, for up to 10 s.
inline uint64_t settled_wakeups(pid_t pid, std::chrono::milliseconds poll) {
  uint64_t before = rdmatest::main_thread_wakeups(pid);
  EXPECT_TRUE(rdmatest::wait_until(
      [&] {
        std::this_thread::sleep_for(poll);
        const uint64_t now = rdmatest::main_thread_wakeups(pid);
        return std::exchange(before, now) == now;
      },
      std::chrono::seconds(10)));
  return before;
}

// The simulator's accounting for the contexts a process opened.
inline std::vector<nlohmann::json> contexts_of(const nlohmann::json& stats, int pid) {
  std::vector<nlohmann::json> out;
  for (const auto& c : stats["contexts"]) {
    if (c["pid"] == pid) out.push_back(c);
  }
  return out;
}

}  // namespace rdma_eventd::test
