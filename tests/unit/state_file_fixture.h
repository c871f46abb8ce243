// What the unit tests of the daemon's state files share (health_state_file_test.cc,
// link_quality_state_test.cc): why a file was rejected, and a file with one change made to it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <variant>

#include "core/state_document.h"

namespace rdma_eventd::daemon {

// Why the daemon rejected a state file; "(accepted)" when it read the file's states.
template <typename States>
std::string why_rejected(const std::variant<States, StateRejected>& r) {
  return std::holds_alternative<StateRejected>(r) ? std::get<StateRejected>(r).reason
                                                  : "(accepted)";
}

// The state file `text` with one change made to its JSON.
inline std::string edited_json(const std::string& text, void (*edit)(nlohmann::json&)) {
  nlohmann::json doc = nlohmann::json::parse(text);
  edit(doc);
  return doc.dump();
}

}  // namespace rdma_eventd::daemon
