#include "summary.h"

#include <nlohmann/json.hpp>

#include "escape.h"
#include "faults.h"

namespace rdma_eventd_fleet {

void Summary::add(const JournalEntry& e) {
  const uint32_t port = port_of(e.port);
  Row& row = rows_[{e.hostname, e.device, port}];
  ++row.events[e.event.empty() ? "unknown" : e.event];
  if (!e.health.empty()) row.health = e.health;
}

void Summary::print(std::FILE* out, bool json) const {
  if (!json && !rows_.empty())
    std::fprintf(out, "%-20s %-14s %-8s %s\n", "HOST", "PORT", "HEALTH", "EVENTS");
  for (const auto& [key, row] : rows_) {
    const auto& [host, device, port] = key;
    if (json) {
      nlohmann::ordered_json events = nlohmann::ordered_json::object();
      for (const auto& [name, count] : row.events)
        events[json_text(name)] = count;
      nlohmann::ordered_json j{
          {"host", json_text(host)},
          {"device", json_text(device)},
          {"port", port},
          {"health", row.health.empty() ? nlohmann::ordered_json()
                                        : nlohmann::ordered_json(json_text(row.health))},
          {"events", std::move(events)}};
      std::fprintf(out, "%s\n", dump_ascii(j).c_str());
      continue;
    }
    std::string events;
    for (const auto& [name, count] : row.events)
      events += (events.empty() ? "" : ", ") + printable(name) + " " + std::to_string(count);
    const std::string where = printable(port ? device + "/" + std::to_string(port) : device);
    std::fprintf(out, "%-20s %-14s %-8s %s\n", printable(host).c_str(), where.c_str(),
                 row.health.empty() ? "-" : printable(row.health).c_str(), events.c_str());
  }
}

}  // namespace rdma_eventd_fleet
