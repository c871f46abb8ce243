// Reading the fields of a control request (one JSON object): absent or null is "not given"; and
// the reply to a storm.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "fabric.h"

namespace rdmasim {

template <typename T>
std::optional<T> opt(const nlohmann::json& req, const char* key) {
  auto it = req.find(key);
  if (it == req.end() || it->is_null()) return std::nullopt;
  return it->get<T>();
}

// A field the request must have; CommandError otherwise.
template <typename T>
T need(const nlohmann::json& req, const char* key) {
  auto v = opt<T>(req, key);
  if (!v) throw CommandError(std::string("request lacks \"") + key + "\"");
  return *v;
}

// What a storm of `count` events begun at `start` did: how fast, and how many `outcome`
// (deliveries, queued) on how many `targets` (ports, devices).
inline nlohmann::json storm_reply(const char* name, uint64_t count,
                                  std::chrono::steady_clock::time_point start, const char* outcome,
                                  uint64_t outcomes, const char* target_key, size_t targets) {
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double rate = seconds > 0 ? static_cast<double>(count) / seconds : 0;
  char msg[160];
  std::snprintf(msg, sizeof msg, "%s: %llu events in %.6f s (%.0f events/s), %llu %s", name,
                static_cast<unsigned long long>(count), seconds, rate,
                static_cast<unsigned long long>(outcomes), outcome);
  return nlohmann::json{{"ok", true},
                        {"message", msg},
                        {"count", count},
                        {"seconds", seconds},
                        {"events_per_second", rate},
                        {outcome, outcomes},
                        {target_key, targets}};
}

}  // namespace rdmasim
