#include "schema/inventory_reply.h"

#include <nlohmann/json.hpp>

#include "field_table.h"
#include "json_reader.h"

namespace rdma_eventd {
namespace {

using nlohmann::json;
using InventoryAdapterReply = InventoryReply::Adapter;
using InventoryPortReply = InventoryReply::Port;

const Fields<InventoryAdapterReply, 5> kInventoryAdapterFields = {{
    {"node_guid", &InventoryAdapterReply::node_guid},
    {"name", &InventoryAdapterReply::name},
    {"state", &InventoryAdapterReply::state},
    {"joined", TimeMember<InventoryAdapterReply>{&InventoryAdapterReply::joined_us}},
    {"last_seen", TimeMember<InventoryAdapterReply>{&InventoryAdapterReply::last_seen_us}},
}};

const Fields<InventoryPortReply, 4> kInventoryPortFields = {{
    {"port", &InventoryPortReply::port},
    {"width", &InventoryPortReply::width},
    {"speed", &InventoryPortReply::speed},
    {"gbps", &InventoryPortReply::gbps},
}};

void write_inventory_adapter(JsonWriter& w, const InventoryAdapterReply& a) {
  write_fields(w, a, kInventoryAdapterFields);
  // Only while missing: a time of 0 would read as 1970.
  if (a.state == "missing") w.field("missing_since", format_rfc3339_us(a.missing_since_us));
  write_object_array(w, "ports", a.ports, [&](const InventoryPortReply& p) {
    write_fields(w, p, kInventoryPortFields);
  });
}

bool read_inventory_adapter(JsonReader& rd, const json& item, InventoryAdapterReply& a) {
  if (!read_fields(rd, item, a, kInventoryAdapterFields)) return false;
  if (a.state == "missing" && !rd.time(item, "missing_since", a.missing_since_us)) return false;
  return rd.entries(item, "ports", a.ports, [&](const json& p, InventoryPortReply& port) {
    return read_fields(rd, p, port, kInventoryPortFields);
  });
}

// The object at `key` of a whole reply line, read by `read_body`.
template <typename Body, typename ReadBody>
std::optional<Body> read_reply(std::string_view reply_line, const char* what, const char* key,
                               std::string* error, ReadBody read_body) {
  std::string why;
  JsonReader rd(&why);
  json reply;
  Body out;
  const json* body = nullptr;
  if (rd.object(reply_line, what, reply) && (body = rd.object_at(reply, key)) &&
      read_body(rd, *body, out)) {
    return out;
  }
  if (error) *error = std::move(why);
  return std::nullopt;
}

}  // namespace

void write_inventory(JsonWriter& w, const InventoryReply& inventory) {
  w.key("inventory");
  w.begin_object();
  w.field("enabled", inventory.enabled);
  write_object_array(w, "adapters", inventory.adapters,
                     [&](const InventoryAdapterReply& a) { write_inventory_adapter(w, a); });
  w.end_object();
}

void write_retired(JsonWriter& w, const InventoryAdapterReply& adapter) {
  w.key("retired");
  w.begin_object();
  write_inventory_adapter(w, adapter);
  w.end_object();
}

std::optional<InventoryReply> inventory_reply_from_json(std::string_view reply_line,
                                                        std::string* error) {
  return read_reply<InventoryReply>(
      reply_line, "inventory reply", "inventory", error,
      [](JsonReader& rd, const json& body, InventoryReply& inventory) {
        return rd.boolean(body, "enabled", inventory.enabled) &&
               rd.entries(body, "adapters", inventory.adapters,
                          [&](const json& item, InventoryAdapterReply& a) {
                            return read_inventory_adapter(rd, item, a);
                          });
      });
}

std::optional<InventoryAdapterReply> retired_from_json(std::string_view reply_line,
                                                       std::string* error) {
  return read_reply<InventoryAdapterReply>(reply_line, "retire reply", "retired", error,
                                           &read_inventory_adapter);
}

}  // namespace rdma_eventd
