// The host's inventory (docs/health.md, "The inventory"): every adapter that has had a port in
// service, by node GUID, and each of its ports that has, with the name and rate it last had.
// Kept across boots (unlike the port health state, which a reboot drops), so that an adapter
// that does not come back after a reboot is known to be missing, whatever name another adapter
// now has. Pure: the caller says what it saw and when, and writes the document.
//
// Wall times only (CLOCK_REALTIME µs): they are shown, never used to judge.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/port_health_types.h"
#include "core/state_document.h"

namespace rdma_eventd::daemon {

inline constexpr int kInventoryVersion = 1;

struct InventoryPort {
  uint32_t port = 0;
  LinkRate rate;  // the rate it last had in service
  friend bool operator==(const InventoryPort&, const InventoryPort&) = default;
};

struct InventoryAdapter {
  std::string node_guid;             // its identity
  std::string name;                  // the name it last had
  int64_t joined_us = 0;             // when a port of it first came up in service
  int64_t last_seen_us = 0;          // when it was last known present
  int64_t missing_since_us = 0;      // when it was found absent; 0 while present
  std::vector<InventoryPort> ports;  // by port number
  bool missing() const { return missing_since_us != 0; }
  friend bool operator==(const InventoryAdapter&, const InventoryAdapter&) = default;
};

class Inventory {
 public:
  Inventory() = default;
  explicit Inventory(std::vector<InventoryAdapter> adapters) : adapters_(std::move(adapters)) {}

  // By node GUID.
  const std::vector<InventoryAdapter>& adapters() const { return adapters_; }
  const InventoryAdapter* by_guid(std::string_view node_guid) const;
  bool contains(std::string_view node_guid, uint32_t port) const;

  // Each returns whether the inventory changed (and so is to be written).
  // A port up in service: its adapter joins (or is present again), the port joins, and the
  // name and rate are remembered. A GUID that is not one (empty, zero) is no identity: ignored.
  bool in_service(std::string_view name, std::string_view node_guid, uint32_t port, LinkRate rate,
                  int64_t now_us);
  // The adapter is present under `name` (found at start, added, renamed).
  bool present(std::string_view node_guid, std::string_view name, int64_t now_us);
  // The adapter is absent (not found at start, removed): missing since now, unless it already is.
  bool absent(std::string_view node_guid, int64_t now_us);
  // Present adapters seen until now (at a clean stop): their last_seen.
  void seen_until(int64_t now_us);
  // An operator took the adapter out of service: it is forgotten.
  bool retire(std::string_view node_guid);

  // The adapter `what` names: a node GUID, else a name (the one adapter that last had it).
  // Empty, with `error` set, when none or several match.
  std::string find(std::string_view what, std::string* error) const;

  friend bool operator==(const Inventory&, const Inventory&) = default;

 private:
  InventoryAdapter* mutable_by_guid(std::string_view node_guid);
  std::vector<InventoryAdapter> adapters_;  // by node GUID
};

// The document, one line of JSON: {"version", "saved_at", "adapters": [...]}.
std::string inventory_json(const Inventory& inventory, int64_t saved_wall_us);
// Accepts only a whole document of this version: every key present with its type and within
// its bounds, adapters by GUID and named once, ports in increasing order. No boot id: the
// inventory outlives boots.
std::variant<Inventory, StateRejected> inventory_from_json(std::string_view text);

}  // namespace rdma_eventd::daemon
