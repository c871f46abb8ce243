// The inventory reply's body, typed: every adapter the host has had in service, by node GUID,
// present or missing (docs/protocol.md, "inventory"; docs/health.md, "The inventory"); and the
// retire reply's, the adapter retired. The daemon fills them, the hub writes them, and
// rdma-eventctl inventory reads them back with every key required.
//
// Internal: clients read it as JSON (Message::text()).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "schema/json_writer.h"

namespace rdma_eventd {

struct InventoryReply {
  struct Port {
    uint32_t port = 0;
    uint32_t width = 0;  // lanes; 0 unknown
    std::string speed;   // "HDR", ...: the rate it last had in service
    double gbps = 0;
    friend bool operator==(const Port&, const Port&) = default;
  };
  struct Adapter {
    std::string node_guid;
    std::string name;              // the name it last had
    std::string state;             // "present" or "missing"
    int64_t joined_us = 0;         // wall clock, written as RFC 3339
    int64_t last_seen_us = 0;      // wall clock
    int64_t missing_since_us = 0;  // "missing" only
    std::vector<Port> ports;
    friend bool operator==(const Adapter&, const Adapter&) = default;
  };
  bool enabled = false;           // health.enabled: false, and the daemon keeps no inventory
  std::vector<Adapter> adapters;  // by node GUID
  friend bool operator==(const InventoryReply&, const InventoryReply&) = default;
};

// The reply's "inventory" key and its object.
void write_inventory(JsonWriter& w, const InventoryReply& inventory);
// The retire reply's "retired" key: the adapter as the inventory had it.
void write_retired(JsonWriter& w, const InventoryReply::Adapter& adapter);
// From a whole reply line.
std::optional<InventoryReply> inventory_reply_from_json(std::string_view reply_line,
                                                        std::string* error);
std::optional<InventoryReply::Adapter> retired_from_json(std::string_view reply_line,
                                                         std::string* error);

}  // namespace rdma_eventd
