#include "core/health_state_file.h"

#include <nlohmann/json.hpp>

namespace rdma_eventd::daemon {
namespace {

using nlohmann::json;
using state_document::instant_json;
using state_document::rate_json;
using state_document::Reader;

constexpr std::string_view kErrorSourceNames[kErrorSourceCount] = {"application", "module",
                                                                   "firmware", "queue"};
// Sources a document from before them may lack (taken as nothing counted).
constexpr size_t kFirstOptionalSource = static_cast<size_t>(ErrorSource::kFirmware);

json health_port_json(const PortHealthState& s) {
  json errors = json::object();
  for (size_t i = 0; i < kErrorSourceCount; ++i) {
    const ErrorWindowState& w = s.errors[i];
    errors[std::string(kErrorSourceNames[i])] = {
        {"times_monotonic_us", w.times_mono_us},
        {"over", w.over},
        {"quiet_since_monotonic_us", w.quiet_since_mono_us}};
  }
  return {{"port", s.port},
          {"health", health_name(s.health)},
          {"reason", reason_name(s.reason)},
          {"since", instant_json(s.since)},
          {"ever_up", s.ever_up},
          {"link_up", s.link_up},
          {"rate", rate_json(s.rate)},
          {"last_healthy", rate_json(s.last_healthy)},
          {"downs_monotonic_us", s.downs_mono_us},
          {"flapping", s.flapping},
          {"quiet_since_monotonic_us", s.quiet_since_mono_us},
          {"fatal", s.fatal},
          {"gone", s.gone},
          {"gone_reason", reason_name(s.gone_reason)},
          {"gone_since_monotonic_us", s.gone_since_mono_us},
          {"errors", errors}};
}

PortHealthState read_health_port(const Reader& r, int64_t saved_us) {
  PortHealthState s;
  s.port = r.port_number("port");
  s.health = r.name<PortHealth>("health", &health_from_name);
  s.reason = r.name<HealthReason>("reason", &reason_from_name);
  s.since = r.instant("since", saved_us);
  s.ever_up = r.boolean("ever_up");
  s.link_up = r.boolean("link_up");
  s.rate = r.rate("rate");
  s.last_healthy = r.rate("last_healthy");
  s.downs_mono_us = r.times("downs_monotonic_us", kMaxFlapDowns, saved_us);
  s.flapping = r.boolean("flapping");
  s.quiet_since_mono_us = r.time("quiet_since_monotonic_us", saved_us);
  s.fatal = r.boolean("fatal");
  s.gone = r.boolean("gone");
  s.gone_reason = r.name<HealthReason>("gone_reason", &reason_from_name);
  s.gone_since_mono_us = r.time("gone_since_monotonic_us", saved_us);
  const Reader errors(r.at("errors"), r.key("errors"));
  const json& error_object = r.at("errors");
  for (size_t i = 0; i < kErrorSourceCount; ++i) {
    if (i >= kFirstOptionalSource && error_object.is_object() &&
        !error_object.contains(kErrorSourceNames[i])) {
      continue;
    }
    const Reader w(errors.at(kErrorSourceNames[i]), errors.key(kErrorSourceNames[i]));
    s.errors[i].times_mono_us = w.times("times_monotonic_us", kMaxStateErrorTimes, saved_us);
    s.errors[i].over = w.boolean("over");
    s.errors[i].quiet_since_mono_us = w.time("quiet_since_monotonic_us", saved_us);
  }
  return s;
}

}  // namespace

const state_document::Format<PortHealthState> kHealthStateFile{kHealthStateVersion,
                                                               health_port_json, read_health_port};

}  // namespace rdma_eventd::daemon
