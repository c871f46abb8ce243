#include "status_event_counts.h"

namespace rdma_eventd {

using nlohmann::json;

void write_named_counts(JsonWriter& w, std::string_view key, const NamedCounts& counts) {
  w.key(key);
  w.begin_object();
  for (const auto& [name, n] : counts)
    w.field(name, n);
  w.end_object();
}

bool read_named_counts(JsonReader& rd, const json& o, std::string_view key, NamedCounts& out) {
  const json* counts = rd.object_at(o, key);
  if (!counts) return false;
  for (const auto& [name, n] : counts->items()) {
    if (!n.is_number_unsigned()) return rd.fail(std::string(key) + "." + name, "not a count");
    out.emplace_back(name, n.get<uint64_t>());
  }
  return true;
}

void write_event_counts(JsonWriter& w, const StatusReply::EventCounts& counts) {
  w.key("event_counts");
  w.begin_object();
  write_object_array(w, "ports", counts.ports, [&](const StatusReply::EventCount& c) {
    w.field("device", c.device);
    w.field("port", c.port);
    write_named_counts(w, "events", c.events);
    w.field("down_transitions", c.down_transitions);
  });
  w.field("untracked", counts.untracked);
  w.end_object();
}

bool read_event_counts(JsonReader& rd, const json& o, StatusReply::EventCounts& out) {
  return rd.entries(o, "ports", out.ports, [&](const json& item, StatusReply::EventCount& c) {
    return rd.str(item, "device", c.device) && rd.u32(item, "port", c.port) &&
           read_named_counts(rd, item, "events", c.events) &&
           rd.u64(item, "down_transitions", c.down_transitions);
  }) && rd.u64(o, "untracked", out.untracked);
}

}  // namespace rdma_eventd
