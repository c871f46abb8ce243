// Small helpers shared by the integration tests.
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim_fabric.h"

namespace rdma_eventd::test {

// A record with the keys that differ from run to run (time, stream, host, seq) removed, so a
// test can compare the rest as a whole.
inline nlohmann::json stable_part(nlohmann::json record) {
  for (const char* key : {"time", "stream", "host", "seq"})
    record.erase(key);
  return record;
}

// Runs a control command and fails the test if it is refused.
inline void inject(const rdmatest::SimFabric& sim, const std::vector<std::string>& args) {
  rdmatest::CommandResult r = sim.ctl(args);
  ASSERT_EQ(r.exit_code(), 0) << "rdma-sim " << args[0] << " refused: " << r.err;
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
