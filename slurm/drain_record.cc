#include "drain_record.h"

#include <nlohmann/json.hpp>

namespace rdma_eventd_slurm {
namespace {

using nlohmann::json;

constexpr int kVersion = 1;

struct RecordError {
  std::string message;
};

const json& member(const json& object, const char* key, const std::string& where) {
  const auto it = object.find(key);
  if (it == object.end()) throw RecordError{where + key + ": missing"};
  return *it;
}

std::string text_member(const json& object, const char* key, const std::string& where) {
  const json& v = member(object, key, where);
  if (!v.is_string()) throw RecordError{where + key + ": not a string"};
  return v.get<std::string>();
}

}  // namespace

std::string drain_record_json(const DrainRecord& record) {
  json ports = json::array();
  for (const DrainedPort& p : record.ports)
    ports.push_back({{"name", p.name}, {"node_guid", p.node_guid}, {"port", p.port}});
  const json doc = {{"version", kVersion},
                    {"node", record.node},
                    {"reason", record.reason},
                    {"ports", std::move(ports)}};
  // Names and reasons are bytes from Slurm and the daemon: never an exception for them.
  return doc.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

std::optional<DrainRecord> parse_drain_record(std::string_view text, std::string* error) {
  const json doc = json::parse(text, nullptr, false);
  try {
    if (doc.is_discarded()) throw RecordError{"not valid JSON"};
    if (!doc.is_object()) throw RecordError{"not a JSON object"};
    const json& version = member(doc, "version", "");
    if (!version.is_number_unsigned() || version.get<uint64_t>() != kVersion) {
      throw RecordError{"version: not " + std::to_string(kVersion)};
    }
    DrainRecord r;
    r.node = text_member(doc, "node", "");
    r.reason = text_member(doc, "reason", "");
    const json& ports = member(doc, "ports", "");
    if (!ports.is_array()) throw RecordError{"ports: not an array"};
    if (ports.size() > kMaxDrainedPorts) {
      throw RecordError{"ports: more than " + std::to_string(kMaxDrainedPorts)};
    }
    for (size_t i = 0; i < ports.size(); ++i) {
      const std::string where = "ports[" + std::to_string(i) + "].";
      if (!ports[i].is_object())
        throw RecordError{"ports[" + std::to_string(i) + "]: not an object"};
      DrainedPort p;
      p.name = text_member(ports[i], "name", where);
      if (p.name.empty()) throw RecordError{where + "name: empty"};
      p.node_guid = text_member(ports[i], "node_guid", where);
      const json& number = member(ports[i], "port", where);
      if (!number.is_number_unsigned() || number.get<uint64_t>() < 1 ||
          number.get<uint64_t>() > 255) {
        throw RecordError{where + "port: not a port number (1 to 255)"};
      }
      p.port = number.get<uint32_t>();
      r.ports.push_back(std::move(p));
    }
    return r;
  } catch (const RecordError& e) {
    if (error) *error = e.message;
    return std::nullopt;
  }
}

}  // namespace rdma_eventd_slurm
