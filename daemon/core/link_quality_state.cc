#include "core/link_quality_state.h"

#include <nlohmann/json.hpp>
#include <utility>

namespace rdma_eventd::daemon {
namespace {

using nlohmann::json;
using state_document::Corrupt;
using state_document::instant_json;
using state_document::rate_json;
using state_document::Reader;

json counter_json(const LinkQualityState::Counter& c) {
  json steps = json::array();
  for (const GrowthStep& s : c.steps)
    steps.push_back({s.mono_us, s.growth});
  return {{"name", c.name},
          {"value", c.value},
          {"baseline", c.has_baseline},
          {"pegged", c.pegged},
          {"pegged_since_wall_us", c.pegged_since_wall_us},
          {"last_growth_monotonic_us", c.last_growth_mono_us},
          {"steps", steps}};
}

json link_quality_port_json(const PortLinkQualityState& p) {
  const LinkQualityState& s = p.state;
  json counters = json::array();
  for (const LinkQualityState::Counter& c : s.counters)
    counters.push_back(counter_json(c));
  json faults = json::array();
  for (const LinkQualityState::Fault& f : s.faults)
    faults.push_back({{"fault", link_fault_name(f.fault)},
                      {"counters", f.counters},
                      {"last_over_monotonic_us", f.last_over_mono_us}});
  return {{"port", p.port},
          {"since", instant_json(s.since)},
          {"first_sample", instant_json(s.first_sample)},
          {"last_sample", instant_json(s.last_sample)},
          {"rate", rate_json(s.last_rate)},
          {"ber_window_s", s.ber_window_s},
          {"downs_pending", s.downs_seen_pending},
          {"faults", faults},
          {"counters", counters}};
}

std::string counter_name(const json& v, const std::string& key) {
  if (!v.is_string()) throw Corrupt{key, "expected a string"};
  std::string name = v.get<std::string>();
  if (name.empty() || name.size() > kMaxStateCounterName) {
    throw Corrupt{
        key, "not a counter's name (1 to " + std::to_string(kMaxStateCounterName) + " characters)"};
  }
  return name;
}

std::vector<GrowthStep> read_steps(const Reader& r, int64_t saved_us) {
  std::vector<GrowthStep> steps;
  const json& list = r.array("steps", kMaxStateSteps);
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string key = r.key("steps", i);
    const json& v = list[i];
    if (!v.is_array() || v.size() != 2 || !v[0].is_number_integer() || !v[1].is_number_unsigned()) {
      throw Corrupt{key, "expected [monotonic_us, growth]"};
    }
    const GrowthStep s{v[0].get<int64_t>(), v[1].get<uint64_t>()};
    if (s.mono_us < 0 || s.mono_us > saved_us || (i > 0 && s.mono_us <= steps.back().mono_us)) {
      throw Corrupt{key, "not a time in order before the document was saved"};
    }
    if (s.growth == 0) throw Corrupt{key, "a step of no growth"};
    steps.push_back(s);
  }
  return steps;
}

LinkQualityState::Counter read_counter(const Reader& r, int64_t saved_us) {
  LinkQualityState::Counter c;
  c.name = counter_name(r.at("name"), r.key("name"));
  c.value = r.unsigned_integer("value", counter_max(counter_bits(c.name)));
  c.has_baseline = r.boolean("baseline");
  c.pegged = r.boolean("pegged");
  c.pegged_since_wall_us = r.integer("pegged_since_wall_us");
  c.last_growth_mono_us = r.time("last_growth_monotonic_us", saved_us);
  c.steps = read_steps(r, saved_us);
  return c;
}

std::vector<LinkQualityState::Fault> read_faults(const Reader& r, int64_t saved_us) {
  std::vector<LinkQualityState::Fault> faults;
  const json& list = r.array("faults", kLinkFaultCount);
  for (size_t i = 0; i < list.size(); ++i) {
    const Reader f(list[i], r.key("faults", i));
    LinkQualityState::Fault fault{f.name<LinkFault>("fault", &link_fault_from_name), {}, 0};
    if (i > 0 && fault.fault <= faults.back().fault) {
      throw Corrupt{f.key("fault"), "faults listed twice or out of order"};
    }
    const json& counters = f.array("counters", kMaxStateCounters);
    if (counters.empty()) throw Corrupt{f.key("counters"), "a bad fault of no counter"};
    for (size_t j = 0; j < counters.size(); ++j) {
      fault.counters.push_back(counter_name(counters[j], f.key("counters", j)));
    }
    // Written since clean is defined by the rules; a document without it leaves 0 (the clean
    // period then counts from the counters' last read of an unknown time, as it did).
    if (list[i].contains("last_over_monotonic_us"))
      fault.last_over_mono_us = f.time("last_over_monotonic_us", saved_us);
    faults.push_back(std::move(fault));
  }
  return faults;
}

PortLinkQualityState read_link_quality_port(const Reader& r, int64_t saved_us) {
  PortLinkQualityState p;
  p.port = r.port_number("port");
  LinkQualityState& s = p.state;
  s.sampled = true;  // only a port sampled is written
  s.since = r.instant("since", saved_us);
  s.first_sample = r.instant("first_sample", saved_us);
  s.last_sample = r.instant("last_sample", saved_us);
  if (s.last_sample.mono_us < s.first_sample.mono_us) {
    throw Corrupt{r.key("last_sample"), "before first_sample"};
  }
  s.last_rate = r.rate("rate");
  s.ber_window_s = static_cast<uint32_t>(r.unsigned_integer("ber_window_s", UINT32_MAX));
  s.downs_seen_pending = static_cast<uint32_t>(r.unsigned_integer("downs_pending", UINT32_MAX));
  s.faults = read_faults(r, saved_us);
  s.counters = state_document::read_ordered<LinkQualityState::Counter>(
      r, "counters", kMaxStateCounters, [&](const Reader& c) { return read_counter(c, saved_us); },
      "name", [](const LinkQualityState::Counter& c) -> const std::string& { return c.name; },
      "counters listed twice or out of order");
  return p;
}

}  // namespace

const state_document::Format<PortLinkQualityState> kLinkQualityStateFile{
    kLinkQualityStateVersion, link_quality_port_json, read_link_quality_port};

}  // namespace rdma_eventd::daemon
