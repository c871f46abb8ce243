// What the devlink health tests share: a daemon following the simulator's stand-in for the
// kernel's devlink family (RDMA_EVENTD_DEVLINK_SOCKET), its devlink_health records, and a port's
// verdict as `rdma-eventctl health` gives it.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "daemon_process.h"
#include "paths.h"
#include "process.h"
#include "test_support.h"

namespace rdma_eventd::test {

using nlohmann::json;
using rdmatest::SimFabric;

// Marked inline: each test file that includes it uses some of them.
inline DaemonOptions devlink_options(const SimFabric& sim, const std::string& state_dir,
                                     json config = json::object()) {
  DaemonOptions o;
  if (!config.contains("health")) config["health"] = {{"enabled", true}};
  o.config_json = config.dump();
  o.env = {{"STATE_DIRECTORY", state_dir},
           {"RDMA_EVENTD_DEVLINK_SOCKET", sim.dir() + "/devlink.sock"}};
  return o;
}

inline Record next_devlink(DaemonProcess& d, const std::string& reporter, const std::string& change,
                           std::vector<Record>* skipped = nullptr) {
  return next_record_where(
      d,
      [&](const Record& r) {
        return r.event == EventKind::kDevlinkHealth && r.devlink &&
               r.devlink->reporter == reporter && r.devlink->change == change;
      },
      "devlink_health " + reporter + " " + change, skipped);
}

// The next `count` degraded verdicts of `device`'s ports, by port.
inline std::vector<Record> degraded_verdicts(DaemonProcess& d, const std::string& device,
                                             int count) {
  std::vector<Record> out;
  for (int i = 0; i < count; ++i) {
    out.push_back(next_record_where(
        d,
        [&](const Record& x) {
          return x.event == EventKind::kPortHealth && x.device == device && x.health == "degraded";
        },
        "a degraded " + device + " port"));
  }
  std::sort(out.begin(), out.end(),
            [](const Record& a, const Record& b) { return a.port < b.port; });
  return out;
}

// A port's verdict and reason as `rdma-eventctl health --json` gives them ({"", ""}: absent).
inline std::pair<std::string, std::string> port_health_of(DaemonProcess& d,
                                                          const std::string& device,
                                                          uint32_t port) {
  const rdmatest::CommandResult r = rdmatest::run_command(
      {rdmatest::bin("rdma-eventctl"), "--socket", d.socket(), "health", "--json"});
  const json reply = json::parse(r.out, nullptr, false);
  if (!reply.contains("health")) return {"", ""};
  for (const json& p : reply["health"]["ports"])
    if (p["device"] == device && p["port"] == port) return {p["health"], p["reason"]};
  return {"", ""};
}

// The daemon follows the stand-in once its status says so (the dump at start is done).
inline void wait_following(DaemonProcess& d) {
  ASSERT_TRUE(rdmatest::wait_until(
      [&] {
        const json s = d.status()["devlink"];
        return s["available"] == true && s["dumps"].get<uint64_t>() >= 1;
      },
      std::chrono::seconds(20)))
      << d.status()["devlink"].dump();
}

// The two-adapter simulator and one daemon with devlink health on, started once the test has
// set the simulator up.
}  // namespace rdma_eventd::test
