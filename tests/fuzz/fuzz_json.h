// What the fuzz targets of JSON files share (fuzz_config, fuzz_slurm_config): the input as a JSON
// value, with how deep it nests.
#pragma once

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string_view>

namespace rdma_eventd::fuzz {

// The value (discarded when the text is not JSON) and in *depth its deepest nesting. Writing a
// value back (dump) recurses as deep as it nests, where the parsers under test never do: a
// target writes back only values of a depth a configuration can have.
inline nlohmann::json parse_json(std::string_view text, int* depth) {
  *depth = 0;
  auto note_depth = [depth](int d, nlohmann::json::parse_event_t, nlohmann::json&) {
    *depth = std::max(*depth, d);
    return true;
  };
  return nlohmann::json::parse(text, note_depth, /*allow_exceptions=*/false);
}
inline constexpr int kMaxDepthWrittenBack = 64;

}  // namespace rdma_eventd::fuzz
