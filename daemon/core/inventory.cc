#include "core/inventory.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <utility>

#include "rdma_eventd/record.h"

namespace rdma_eventd::daemon {
namespace {

using nlohmann::json;
using state_document::Corrupt;
using state_document::Reader;

// "" for 0 (not missing).
std::string inventory_wall_text(int64_t us) {
  return us == 0 ? "" : format_rfc3339_us(us);
}

int64_t read_inventory_wall(const Reader& r, std::string_view name, bool may_be_empty) {
  const std::string text = r.string(name);
  if (text.empty() && may_be_empty) return 0;
  auto us = parse_rfc3339_us(text);
  if (!us || *us <= 0) throw Corrupt{r.key(name), "not an RFC 3339 time"};
  return *us;
}

InventoryPort read_inventory_port(const Reader& r) {
  return {r.port_number("port"), r.rate("rate")};
}

InventoryAdapter read_inventory_adapter(const Reader& r) {
  InventoryAdapter a;
  a.node_guid = r.string("node_guid");
  if (!known_guid(a.node_guid)) throw Corrupt{r.key("node_guid"), "not a node GUID"};
  a.name = r.string("name");
  if (a.name.empty()) throw Corrupt{r.key("name"), "empty"};
  a.joined_us = read_inventory_wall(r, "joined", false);
  a.last_seen_us = read_inventory_wall(r, "last_seen", false);
  a.missing_since_us = read_inventory_wall(r, "missing_since", true);
  a.ports = state_document::read_ordered<InventoryPort>(
      r, "ports", kMaxStatePorts, read_inventory_port, "port",
      [](const InventoryPort& p) { return p.port; }, "ports not in increasing order");
  if (a.ports.empty()) throw Corrupt{r.key("ports"), "empty"};
  return a;
}

}  // namespace

const InventoryAdapter* Inventory::by_guid(std::string_view node_guid) const {
  auto it = std::lower_bound(
      adapters_.begin(), adapters_.end(), node_guid,
      [](const InventoryAdapter& a, std::string_view g) { return a.node_guid < g; });
  return it != adapters_.end() && it->node_guid == node_guid ? &*it : nullptr;
}

InventoryAdapter* Inventory::mutable_by_guid(std::string_view node_guid) {
  return const_cast<InventoryAdapter*>(std::as_const(*this).by_guid(node_guid));
}

bool Inventory::contains(std::string_view node_guid, uint32_t port) const {
  const InventoryAdapter* a = by_guid(node_guid);
  return a && std::any_of(a->ports.begin(), a->ports.end(),
                          [port](const InventoryPort& p) { return p.port == port; });
}

bool Inventory::in_service(std::string_view name, std::string_view node_guid, uint32_t port,
                           LinkRate rate, int64_t now_us) {
  if (!known_guid(node_guid) || port == 0) return false;
  InventoryAdapter* a = mutable_by_guid(node_guid);
  bool changed = false;
  if (!a) {
    if (adapters_.size() >= kMaxStateDevices) return false;
    InventoryAdapter added;
    added.node_guid = std::string(node_guid);
    added.joined_us = now_us;
    auto at = std::lower_bound(
        adapters_.begin(), adapters_.end(), node_guid,
        [](const InventoryAdapter& x, std::string_view g) { return x.node_guid < g; });
    a = &*adapters_.insert(at, std::move(added));
    changed = true;
  }
  changed = present(node_guid, name, now_us) || changed;
  auto p = std::lower_bound(a->ports.begin(), a->ports.end(), port,
                            [](const InventoryPort& x, uint32_t n) { return x.port < n; });
  if (p == a->ports.end() || p->port != port) {
    if (a->ports.size() >= kMaxStatePorts) return changed;
    a->ports.insert(p, InventoryPort{port, rate});
    return true;
  }
  if (rate.known() && p->rate != rate) {
    p->rate = rate;
    changed = true;
  }
  return changed;
}

bool Inventory::present(std::string_view node_guid, std::string_view name, int64_t now_us) {
  InventoryAdapter* a = mutable_by_guid(node_guid);
  if (!a) return false;
  const bool changed = a->name != name || a->missing();
  a->name = std::string(name);
  a->missing_since_us = 0;
  // Only written with another change: last_seen is as fresh as the last write (and the stop).
  a->last_seen_us = now_us;
  return changed;
}

bool Inventory::absent(std::string_view node_guid, int64_t now_us) {
  InventoryAdapter* a = mutable_by_guid(node_guid);
  if (!a || a->missing()) return false;
  a->missing_since_us = now_us;
  return true;
}

void Inventory::seen_until(int64_t now_us) {
  for (InventoryAdapter& a : adapters_) {
    if (!a.missing()) a.last_seen_us = now_us;
  }
}

bool Inventory::retire(std::string_view node_guid) {
  const auto before = adapters_.size();
  std::erase_if(adapters_, [&](const InventoryAdapter& a) { return a.node_guid == node_guid; });
  return adapters_.size() != before;
}

std::string Inventory::find(std::string_view what, std::string* error) const {
  if (by_guid(what)) return std::string(what);
  std::vector<const InventoryAdapter*> named;
  for (const InventoryAdapter& a : adapters_) {
    if (a.name == what) named.push_back(&a);
  }
  if (named.size() == 1) return named.front()->node_guid;
  if (named.empty()) {
    *error =
        "no adapter of the inventory has the node GUID or the name '" + std::string(what) + "'";
  } else {
    *error = std::to_string(named.size()) + " adapters of the inventory were last named '" +
             std::string(what) + "' (" + named[0]->node_guid + ", " + named[1]->node_guid +
             "): name one by its node GUID";
  }
  return "";
}

std::string inventory_json(const Inventory& inventory, int64_t saved_wall_us) {
  json list = json::array();
  for (const InventoryAdapter& a : inventory.adapters()) {
    json ports = json::array();
    for (const InventoryPort& p : a.ports)
      ports.push_back({{"port", p.port}, {"rate", state_document::rate_json(p.rate)}});
    list.push_back({{"node_guid", a.node_guid},
                    {"name", a.name},
                    {"joined", inventory_wall_text(a.joined_us)},
                    {"last_seen", inventory_wall_text(a.last_seen_us)},
                    {"missing_since", inventory_wall_text(a.missing_since_us)},
                    {"ports", std::move(ports)}});
  }
  json doc = {{"version", kInventoryVersion},
              {"saved_at", inventory_wall_text(saved_wall_us)},
              {"adapters", std::move(list)}};
  return doc.dump();
}

std::variant<Inventory, StateRejected> inventory_from_json(std::string_view text) {
  json doc;
  if (auto bad = state_document::parse(text, doc)) return *bad;
  try {
    const Reader root(doc, "");
    if (auto newer = state_document::check_version(root, kInventoryVersion, "inventory"))
      return *newer;
    read_inventory_wall(root, "saved_at", false);
    return Inventory(state_document::read_ordered<InventoryAdapter>(
        root, "adapters", kMaxStateDevices, read_inventory_adapter, "node_guid",
        [](const InventoryAdapter& a) { return a.node_guid; },
        "adapters not in increasing order of node GUID, or one listed twice"));
  } catch (const Corrupt& c) {
    return state_document::rejected(c);
  } catch (const json::exception& e) {
    return state_document::rejected(e);
  }
}

}  // namespace rdma_eventd::daemon
