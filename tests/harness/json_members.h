// The members of a JSON object that a test names (an answer's, a journal entry's), to compare
// with what it expects as a whole, so that a failure shows every member that differs:
//
//   const json want = {{"RDMA_EVENT", "port_err"}, {"PRIORITY", "3"}};
//   EXPECT_EQ(members_of(entry, want), want);
#pragma once

#include <nlohmann/json.hpp>

namespace rdmatest {

// The members of `object` that `expected` names (null where `object` lacks one).
inline nlohmann::json members_of(const nlohmann::json& object, const nlohmann::json& expected) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [key, value] : expected.items())
    out[key] = object.contains(key) ? object[key] : nlohmann::json();
  return out;
}

}  // namespace rdmatest
