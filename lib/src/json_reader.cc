#include "json_reader.h"

#include <cmath>

#include "port_fields.h"

namespace rdma_eventd {

using nlohmann::json;

bool JsonReader::fail(std::string_view key, std::string_view problem) {
  if (error_) *error_ = std::string(key) + ": " + std::string(problem);
  return false;
}

bool JsonReader::object(std::string_view text, std::string_view what, json& out) {
  out = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (out.is_discarded()) return fail(what, "not valid JSON");
  if (!out.is_object()) return fail(what, "not a JSON object");
  return true;
}

const json* JsonReader::find(const json& obj, std::string_view key) {
  auto it = obj.find(key);
  if (it == obj.end()) {
    fail(key, "missing");
    return nullptr;
  }
  return &*it;
}

const json* JsonReader::typed(const json& obj, std::string_view key, bool (*valid)(const json&),
                              std::string_view problem) {
  const json* v = find(obj, key);
  if (v && !valid(*v)) {
    fail(key, problem);
    return nullptr;
  }
  return v;
}

const json* JsonReader::object_at(const json& obj, std::string_view key) {
  return typed(
      obj, key, [](const json& v) { return v.is_object(); }, "not an object");
}

const json* JsonReader::array_at(const json& obj, std::string_view key) {
  return typed(
      obj, key, [](const json& v) { return v.is_array(); }, "not an array");
}

bool JsonReader::u64(const json& obj, std::string_view key, uint64_t& out) {
  const json* v = typed(
      obj, key, [](const json& j) { return j.is_number_unsigned(); }, "not an unsigned integer");
  if (v) out = v->get<uint64_t>();
  return v != nullptr;
}

bool JsonReader::u32(const json& obj, std::string_view key, uint32_t& out) {
  auto fits = [](const json& j) {
    uint32_t unused;
    return read_u32(j, unused);
  };
  const json* v = typed(obj, key, fits, "not a 32-bit unsigned integer");
  return v && read_u32(*v, out);
}

bool JsonReader::real(const json& obj, std::string_view key, double& out) {
  auto fits = [](const json& j) {
    return j.is_number() && std::isfinite(j.get<double>()) && j.get<double>() >= 0;
  };
  const json* v = typed(obj, key, fits, "not a finite number >= 0");
  if (v) out = v->get<double>();
  return v != nullptr;
}

bool JsonReader::i64(const json& obj, std::string_view key, int64_t& out) {
  // An unsigned value above INT64_MAX is not an int64_t.
  auto fits = [](const json& j) {
    return j.is_number_integer() && !(j.is_number_unsigned() && j.get<uint64_t>() > INT64_MAX);
  };
  const json* v = typed(obj, key, fits, "not an integer");
  if (v) out = v->get<int64_t>();
  return v != nullptr;
}

bool JsonReader::boolean(const json& obj, std::string_view key, bool& out) {
  const json* v = typed(
      obj, key, [](const json& j) { return j.is_boolean(); }, "not a boolean");
  if (v) out = v->get<bool>();
  return v != nullptr;
}

bool JsonReader::str(const json& obj, std::string_view key, std::string& out) {
  const json* v = typed(
      obj, key, [](const json& j) { return j.is_string(); }, "not a string");
  if (v) out = v->get<std::string>();
  return v != nullptr;
}

bool JsonReader::str_or_null(const json& obj, std::string_view key, std::string& out) {
  const json* v = find(obj, key);
  if (!v) return false;
  if (!v->is_null() && !v->is_string()) return fail(key, "neither a string nor null");
  out = v->is_string() ? v->get<std::string>() : std::string();
  return true;
}

bool JsonReader::time(const json& obj, std::string_view key, int64_t& out_us) {
  std::string text;
  if (!str(obj, key, text)) return false;
  const auto t = parse_rfc3339_us(text);
  if (!t) return fail(key, "not an RFC 3339 UTC time with microseconds: '" + text + "'");
  out_us = *t;
  return true;
}

bool JsonReader::strings(const json& obj, std::string_view key, std::vector<std::string>& out) {
  const json* v = array_at(obj, key);
  if (!v) return false;
  for (const json& s : *v) {
    if (!s.is_string()) return fail(key, "entry is not a string");
    out.push_back(s.get<std::string>());
  }
  return true;
}

bool JsonReader::port_block(const json& obj, PortInfo& p, std::string_view where) {
  for (const auto& f : port_fields()) {
    auto it = obj.find(f.name);
    if (it == obj.end()) return fail(std::string(where) + std::string(f.name), "missing");
    if (!f.read(*it, p)) return fail(std::string(where) + std::string(f.name), "bad value");
  }
  return true;
}

bool JsonReader::gids(const json& obj, std::string_view key, std::vector<GidEntry>& out) {
  return entries(obj, key, out, [&](const json& item, GidEntry& g) {
    std::string type;
    if (!u32(item, "index", g.index) || !str(item, "gid", g.gid) || !str(item, "type", type) ||
        !str(item, "netdev", g.netdev)) {
      return false;
    }
    const auto t = gid_type_from_name(type);
    if (!t) return fail("type", "unknown GID type '" + type + "'");
    g.type = *t;
    return true;
  });
}

bool JsonReader::pkeys(const json& obj, std::string_view key, std::vector<PkeyEntry>& out) {
  return entries(obj, key, out, [&](const json& item, PkeyEntry& p) {
    std::string text;
    if (!u32(item, "index", p.index) || !str(item, "pkey", text)) return false;
    const auto pkey = parse_pkey(text);
    if (!pkey) return fail("pkey", "not a P_Key (0x and 1 to 4 hex digits): '" + text + "'");
    p.pkey = *pkey;
    return true;
  });
}

}  // namespace rdma_eventd
