// Fuzzes rdma-eventd-slurm's configuration parser (parse_config, slurm/config.cc) with arbitrary
// file contents. Beyond "no crash, no leak, no undefined behaviour, no exception" (a bad file must
// end in one message and exit 78), it checks:
//  - a refused file says why;
//  - the result depends on the JSON value only: the same value written compactly or indented
//    gives the same configuration, or the same error;
//  - the values a configuration holds are within their documented limits (the drain limit and
//    its splay included);
//  - a configuration written back with every key parses to the same configuration.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "config.h"
#include "fuzz_check.h"
#include "fuzz_json.h"

namespace {

using nlohmann::json;
using rdma_eventd_slurm::Config;
using rdma_eventd_slurm::DrainLimit;
using rdma_eventd_slurm::parse_config;

// The limit as the configuration spells it: a number of nodes, or limit_text's "10%" and "off".
json limit_json(const DrainLimit& limit) {
  if (limit.kind == DrainLimit::kNodes) return limit.value;
  return rdma_eventd_slurm::limit_text(limit);
}

json written_back(const Config& c) {
  json drain_on = json::array();
  for (const std::string& v : c.drain_on)
    drain_on.push_back(v);
  json out = {{"reason_prefix", c.reason_prefix},
              {"drain_on", drain_on},
              {"reconcile_interval_s", c.reconcile_interval_s},
              {"scontrol_timeout_s", c.scontrol_timeout_s},
              {"scontrol", c.scontrol},
              {"socket", c.socket},
              {"drain_when_daemon_unreachable", c.drain_when_daemon_unreachable}};
  // The drain limit's keys, then those written only when set.
  out.update({{"drain_limit", limit_json(c.drain_limit)}, {"drain_splay_s", c.drain_splay_s}});
  if (!c.node_name.empty()) out["node_name"] = c.node_name;
  if (!c.sinfo.empty()) out["sinfo"] = c.sinfo;
  return out;
}

void check_config(const Config& c, const std::string& input) {
  FUZZ_CHECK(!c.reason_prefix.empty() && c.reason_prefix.size() <= 64, input);
  FUZZ_CHECK(std::none_of(c.reason_prefix.begin(), c.reason_prefix.end(),
                          [](unsigned char ch) { return ch < 0x20 || ch == 0x7f; }),
             input);
  FUZZ_CHECK(c.reconcile_interval_s >= 1 && c.reconcile_interval_s <= 86400, input);
  FUZZ_CHECK(c.scontrol_timeout_s >= 1 && c.scontrol_timeout_s <= 20, input);
  FUZZ_CHECK(!c.scontrol.empty(), input);
  FUZZ_CHECK(c.node_name.find_first_of(" \t\n=,[]") == std::string::npos, input);
  FUZZ_CHECK(c.drain_splay_s <= 600, input);
  FUZZ_CHECK(c.drain_limit.kind == DrainLimit::kOff ||
                 (c.drain_limit.kind == DrainLimit::kNodes && c.drain_limit.value >= 1) ||
                 (c.drain_limit.kind == DrainLimit::kPercent && c.drain_limit.value >= 1 &&
                  c.drain_limit.value <= 100),
             input);
  // The verdicts, and the link-quality reasons of degraded (docs/scheduler.md).
  for (const std::string& v : c.drain_on)
    FUZZ_CHECK(v == "degraded" || v == "down" || v == "flapping" || v == "gone" || v == "fatal" ||
                   v == "bit_errors" || v == "link_recoveries" || v == "transport_errors" ||
                   v == "firmware_errors" || v == "queue_errors",
               input);
  const std::string again_text = written_back(c).dump();
  std::string error;
  const auto again = parse_config(again_text, &error);
  FUZZ_CHECK(again.has_value(), again_text + "  " + error);
  FUZZ_CHECK(*again == c, again_text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::string error;
  const auto result = parse_config(text, &error);
  if (!result) FUZZ_CHECK(!error.empty(), text);

  int depth = 0;
  const json root = rdma_eventd::fuzz::parse_json(text, &depth);
  if (root.is_discarded()) {
    FUZZ_CHECK(!result, text);
    return 0;
  }
  if (depth > rdma_eventd::fuzz::kMaxDepthWrittenBack) return 0;
  for (const std::string& form : {root.dump(), root.dump(2)}) {
    std::string form_error;
    const auto again = parse_config(form, &form_error);
    FUZZ_CHECK(again.has_value() == result.has_value(), form);
    if (result) FUZZ_CHECK(*again == *result, form);
    if (!result) FUZZ_CHECK(form_error == error, form + "  " + error + " / " + form_error);
  }
  if (result) check_config(*result, text);
  return 0;
}
