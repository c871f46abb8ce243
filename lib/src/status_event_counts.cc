#include "status_event_counts.h"

namespace rdma_eventd {

using nlohmann::json;

void write_event_counts(JsonWriter& w, const StatusReply::EventCounts& counts) {
  w.key("event_counts");
  w.begin_object();
  write_object_array(w, "ports", counts.ports, [&](const StatusReply::EventCount& c) {
    w.field("device", c.device);
    w.field("port", c.port);
    w.key("events");
    w.begin_object();
    for (const auto& [name, n] : c.events)
      w.field(name, n);
    w.end_object();
    w.field("down_transitions", c.down_transitions);
  });
  w.field("untracked", counts.untracked);
  w.end_object();
}

namespace {

bool read_events(JsonReader& rd, const json& o, StatusReply::EventCount& c) {
  const json* events = rd.object_at(o, "events");
  if (!events) return false;
  for (const auto& [name, n] : events->items()) {
    if (!n.is_number_unsigned()) return rd.fail("events." + name, "not a count");
    c.events.emplace_back(name, n.get<uint64_t>());
  }
  return true;
}

}  // namespace

bool read_event_counts(JsonReader& rd, const json& o, StatusReply::EventCounts& out) {
  return rd.entries(o, "ports", out.ports, [&](const json& item, StatusReply::EventCount& c) {
    return rd.str(item, "device", c.device) && rd.u32(item, "port", c.port) &&
           read_events(rd, item, c) && rd.u64(item, "down_transitions", c.down_transitions);
  }) && rd.u64(o, "untracked", out.untracked);
}

}  // namespace rdma_eventd
