#include "schema/health_reply.h"

#include <nlohmann/json.hpp>

#include "json_reader.h"
#include "rdma_eventd/record.h"

namespace rdma_eventd {
namespace {

using nlohmann::json;

// "window_s" came after the first health replies: a daemon without it leaves 0 (unknown).
bool read_window(JsonReader& rd, const json& item, HealthReply::Port& p) {
  return !item.contains("window_s") || rd.u32(item, "window_s", p.window_s);
}

bool read_port(JsonReader& rd, const json& item, HealthReply::Port& p) {
  return rd.str(item, "device", p.device) && rd.str(item, "node_guid", p.node_guid) &&
         rd.u32(item, "port", p.port) && rd.str(item, "health", p.health) &&
         rd.str(item, "reason", p.reason) && rd.time(item, "since", p.since_us) &&
         rd.boolean(item, "link_up", p.link_up) &&
         rd.u32(item, "downs_in_window", p.downs_in_window) && read_window(rd, item, p) &&
         rd.boolean(item, "counted", p.counted);
}

}  // namespace

void write_health(JsonWriter& w, const HealthReply& h) {
  w.key("health");
  w.begin_object();
  w.field("enabled", h.enabled);
  w.field("host", h.host);
  w.field("not_counted", h.not_counted);
  w.field("state_write_failures", h.state_write_failures);
  write_object_array(w, "ports", h.ports, [&](const HealthReply::Port& p) {
    w.field("device", p.device);
    w.field("node_guid", p.node_guid);
    w.field("port", p.port);
    w.field("health", p.health);
    w.field("reason", p.reason);
    w.field("since", format_rfc3339_us(p.since_us));
    w.field("link_up", p.link_up);
    w.field("downs_in_window", p.downs_in_window);
    w.field("window_s", p.window_s);
    w.field("counted", p.counted);
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
      rd.boolean(*body, "enabled", h.enabled) && rd.str(*body, "host", h.host) &&
      rd.u32(*body, "not_counted", h.not_counted) &&
      rd.u64(*body, "state_write_failures", h.state_write_failures) &&
      rd.entries(*body, "ports", h.ports,
                 [&](const json& item, HealthReply::Port& p) { return read_port(rd, item, p); });
  if (ok) return h;
  if (error) *error = std::move(why);
  return std::nullopt;
}

}  // namespace rdma_eventd
