// Reading the fields of a control request (one JSON object): absent or null is "not given".
#pragma once

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

}  // namespace rdmasim
