#include "schema/health_reply.h"

#include <nlohmann/json.hpp>

#include "field_table.h"
#include "json_reader.h"

namespace rdma_eventd {
namespace {

using nlohmann::json;
using Health = HealthReply;

const Fields<Health, 4> kHealthFields = {{
    {"enabled", &Health::enabled},
    {"host", &Health::host},
    {"not_counted", &Health::not_counted},
    {"state_write_failures", &Health::state_write_failures},
}};

// Before "window_s", which older daemons leave out.
const Fields<Health::Port, 8> kPortFields = {{
    {"device", &Health::Port::device},
    {"node_guid", &Health::Port::node_guid},
    {"port", &Health::Port::port},
    {"health", &Health::Port::health},
    {"reason", &Health::Port::reason},
    {"since", TimeMember<Health::Port>{&Health::Port::since_us}},
    {"link_up", &Health::Port::link_up},
    {"downs_in_window", &Health::Port::downs_in_window},
}};

// "window_s" came after the first health replies: a daemon without it leaves 0 (unknown).
bool read_window(JsonReader& rd, const json& item, HealthReply::Port& p) {
  return !item.contains("window_s") || rd.u32(item, "window_s", p.window_s);
}

// "link_quality" and its reason came later still: "" from a daemon without them.
bool read_link_quality(JsonReader& rd, const json& item, HealthReply::Port& p) {
  return !item.contains("link_quality") ||
         (rd.str(item, "link_quality", p.link_quality) &&
          rd.str(item, "link_quality_reason", p.link_quality_reason));
}

bool read_port(JsonReader& rd, const json& item, HealthReply::Port& p) {
  return read_fields(rd, item, p, kPortFields) && read_window(rd, item, p) &&
         rd.boolean(item, "counted", p.counted) && read_link_quality(rd, item, p);
}

}  // namespace

void write_health(JsonWriter& w, const HealthReply& h) {
  w.key("health");
  w.begin_object();
  write_fields(w, h, kHealthFields);
  write_object_array(w, "ports", h.ports, [&](const HealthReply::Port& p) {
    write_fields(w, p, kPortFields);
    w.field("window_s", p.window_s);
    w.field("counted", p.counted);
    w.field("link_quality", p.link_quality);
    w.field("link_quality_reason", p.link_quality_reason);
  });
  w.end_object();
}

std::optional<HealthReply> health_from_json(std::string_view reply_line, std::string* error) {
  std::string why;
  JsonReader rd(&why);
  json reply;
  HealthReply h;
  const json* body = nullptr;
  const bool ok =
      rd.object(reply_line, "health reply", reply) && (body = rd.object_at(reply, "health")) &&
      read_fields(rd, *body, h, kHealthFields) &&
      rd.entries(*body, "ports", h.ports,
                 [&](const json& item, HealthReply::Port& p) { return read_port(rd, item, p); });
  if (ok) return h;
  if (error) *error = std::move(why);
  return std::nullopt;
}

}  // namespace rdma_eventd
