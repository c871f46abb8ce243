// Reading the daemon's lines strictly: each helper finds a key, checks its type and, when either
// is wrong, says which key and what is wrong in *error. Every key is required: a renamed or
// missing key is an error, never a silent default. Private to lib/src.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "rdma_eventd/protocol.h"
#include "rdma_eventd/record.h"

namespace rdma_eventd {

class JsonReader {
 public:
  explicit JsonReader(std::string* error) : error_(error) {}

  // Sets *error to "KEY: PROBLEM" and returns false.
  bool fail(std::string_view key, std::string_view problem);

  // Parses `text` as one JSON object into *out; `what` names the line in the error.
  bool object(std::string_view text, std::string_view what, nlohmann::json& out);

  const nlohmann::json* find(const nlohmann::json& obj, std::string_view key);
  // The value at `key` if `valid` accepts it; otherwise nullptr and the error "KEY: PROBLEM".
  const nlohmann::json* typed(const nlohmann::json& obj, std::string_view key,
                              bool (*valid)(const nlohmann::json&), std::string_view problem);
  // An object or an array at `key`, or nullptr (and the error).
  const nlohmann::json* object_at(const nlohmann::json& obj, std::string_view key);
  const nlohmann::json* array_at(const nlohmann::json& obj, std::string_view key);

  bool u64(const nlohmann::json& obj, std::string_view key, uint64_t& out);
  bool u32(const nlohmann::json& obj, std::string_view key, uint32_t& out);
  bool i64(const nlohmann::json& obj, std::string_view key, int64_t& out);
  bool boolean(const nlohmann::json& obj, std::string_view key, bool& out);
  // A finite number, 0 or more (a rate, an estimate).
  bool real(const nlohmann::json& obj, std::string_view key, double& out);
  bool str(const nlohmann::json& obj, std::string_view key, std::string& out);
  // A string or null (read as "": a value not known).
  bool str_or_null(const nlohmann::json& obj, std::string_view key, std::string& out);
  // An RFC 3339 time with microseconds, as the daemon writes it.
  bool time(const nlohmann::json& obj, std::string_view key, int64_t& out_us);
  // An array of strings.
  bool strings(const nlohmann::json& obj, std::string_view key, std::vector<std::string>& out);

  // Every port-block key (link_layer ... rate_gbps); `where` prefixes the key in errors.
  bool port_block(const nlohmann::json& obj, PortInfo& p, std::string_view where);
  // The array at `key`, each entry an object that `read_one(item, entry)` reads.
  template <typename Entry, typename ReadOne>
  bool entries(const nlohmann::json& obj, std::string_view key, std::vector<Entry>& out,
               ReadOne read_one) {
    const nlohmann::json* v = array_at(obj, key);
    if (!v) return false;
    for (const auto& item : *v) {
      Entry e;
      if (!item.is_object()) return fail(key, "entry is not an object");
      if (!read_one(item, e)) return false;
      out.push_back(std::move(e));
    }
    return true;
  }
  bool gids(const nlohmann::json& obj, std::string_view key, std::vector<GidEntry>& out);
  bool pkeys(const nlohmann::json& obj, std::string_view key, std::vector<PkeyEntry>& out);

 private:
  std::string* error_;
};

// A subscribe filter's keys (events, devices, ports, min_severity) from an object, as a
// subscribe request gives them and as the status reply echoes them; protocol.cc.
std::optional<Filter> filter_from_json(const nlohmann::json& obj, std::string* error);

}  // namespace rdma_eventd
