// Reading a JSON object field by field with the path of every value, for error messages that
// name the file, the field (devices[1].ports[0].lid) and the value. Fields never read are
// reported as unknown: a typo must not silently become a default.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

namespace rdmasim {

class JsonFields {
 public:
  // Throws TopologyError unless j is an object.
  JsonFields(const nlohmann::json& j, std::string path, const std::string& file);

  // The value of key (null counts as absent), marking it read.
  const nlohmann::json* get(const std::string& key);
  std::string path(const std::string& key) const;
  const std::string& file() const { return file_; }

  [[noreturn]] void fail(const std::string& key, const std::string& msg) const;
  [[noreturn]] void fail_here(const std::string& msg) const;
  // Fails on the first field no get() asked for.
  void check_unknown() const;

  // A number (JSON integer, or a string in decimal or 0x hex) in [min, max], or def if absent.
  uint64_t num(const std::string& key, uint64_t def, uint64_t min, uint64_t max);
  std::string str(const std::string& key, const std::string& def, size_t max_len);
  // true or false, or def if absent.
  bool flag(const std::string& key, bool def);
  // One of the names (or one of their values as a number), or def if absent.
  uint32_t choice(const std::string& key, uint32_t def,
                  const std::map<std::string, uint32_t>& names);

 private:
  const nlohmann::json& j_;
  std::string path_;
  const std::string& file_;
  std::set<std::string> used_;
};

// The number at `path` (as JsonFields::num), for array elements.
uint64_t number_at(const nlohmann::json& v, const std::string& path, const std::string& file,
                   uint64_t min, uint64_t max);

}  // namespace rdmasim
