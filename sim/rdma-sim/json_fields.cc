#include "json_fields.h"

#include <cerrno>
#include <cstdlib>

#include "topology.h"

namespace rdmasim {

using nlohmann::json;

namespace {

[[noreturn]] void fail_at(const std::string& file, const std::string& path,
                          const std::string& msg) {
  throw TopologyError(file + ": " + path + ": " + msg);
}

std::string range(uint64_t min, uint64_t max) {
  return " is out of range (" + std::to_string(min) + ".." + std::to_string(max) + ")";
}

}  // namespace

uint64_t number_at(const json& v, const std::string& path, const std::string& file, uint64_t min,
                   uint64_t max) {
  uint64_t n = 0;
  if (v.is_number_unsigned()) {
    n = v.get<uint64_t>();
  } else if (v.is_number_integer()) {
    fail_at(file, path, v.dump() + range(min, max));  // negative
  } else if (v.is_string()) {
    // Decimal, or hex with 0x (P_Keys, flags). No octal surprise: "010" is ten.
    const std::string s = v.get<std::string>();
    const bool hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
    const std::string digits = hex ? s.substr(2) : s;
    if (digits.empty() || digits.size() > 20 ||
        digits.find_first_not_of(hex ? "0123456789abcdefABCDEF" : "0123456789") !=
            std::string::npos)
      fail_at(file, path, "expected a number, got " + v.dump());
    errno = 0;
    n = std::strtoull(digits.c_str(), nullptr, hex ? 16 : 10);
    if (errno) fail_at(file, path, v.dump() + range(min, max));
  } else {
    fail_at(file, path, "expected a number, got " + v.dump());
  }
  if (n < min || n > max) fail_at(file, path, v.dump() + range(min, max));
  return n;
}

JsonFields::JsonFields(const json& j, std::string path, const std::string& file)
    : j_(j), path_(std::move(path)), file_(file) {
  if (!j.is_object()) fail_here("expected an object, got " + j.dump());
}

const json* JsonFields::get(const std::string& key) {
  used_.insert(key);
  auto it = j_.find(key);
  return it == j_.end() || it->is_null() ? nullptr : &*it;
}

std::string JsonFields::path(const std::string& key) const {
  return path_.empty() ? key : path_ + "." + key;
}

void JsonFields::fail(const std::string& key, const std::string& msg) const {
  fail_at(file_, path(key), msg);
}

void JsonFields::fail_here(const std::string& msg) const {
  fail_at(file_, path_.empty() ? "top level" : path_, msg);
}

void JsonFields::check_unknown() const {
  for (auto it = j_.begin(); it != j_.end(); ++it)
    if (!used_.count(it.key())) fail(it.key(), "unknown field");
}

uint64_t JsonFields::num(const std::string& key, uint64_t def, uint64_t min, uint64_t max) {
  const json* v = get(key);
  return v ? number_at(*v, path(key), file_, min, max) : def;
}

std::string JsonFields::str(const std::string& key, const std::string& def, size_t max_len) {
  const json* v = get(key);
  if (!v) return def;
  if (!v->is_string()) fail(key, "expected a string, got " + v->dump());
  std::string s = v->get<std::string>();
  if (s.size() > max_len)
    fail(key, v->dump() + " is too long (at most " + std::to_string(max_len) + " characters)");
  return s;
}

bool JsonFields::flag(const std::string& key, bool def) {
  const json* v = get(key);
  if (!v) return def;
  if (!v->is_boolean()) fail(key, "expected true or false, got " + v->dump());
  return v->get<bool>();
}

uint32_t JsonFields::choice(const std::string& key, uint32_t def,
                            const std::map<std::string, uint32_t>& names) {
  const json* v = get(key);
  if (!v) return def;
  if (v->is_string()) {
    auto it = names.find(v->get<std::string>());
    if (it != names.end()) return it->second;
  }
  if (v->is_number_unsigned())
    for (const auto& entry : names)
      if (entry.second == v->get<uint64_t>()) return entry.second;
  std::string allowed;
  for (const auto& entry : names)
    allowed += (allowed.empty() ? "" : ", ") + entry.first;
  fail(key, v->dump() + " is not one of: " + allowed);
}

}  // namespace rdmasim
