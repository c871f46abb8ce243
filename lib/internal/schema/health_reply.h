// The health reply's body, typed: every port's verdict and the host's worst (docs/protocol.md,
// "health"; docs/health.md). The daemon fills it from its health model, the hub writes it, and
// rdma-eventctl health reads it back with every key required.
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

struct HealthReply {
  struct Port {
    std::string device;
    std::string node_guid;
    uint32_t port = 0;
    std::string health;  // "healthy", "degraded", "down", "flapping", "gone", "fatal"
    std::string reason;
    int64_t since_us = 0;  // wall clock, written as RFC 3339
    bool link_up = false;
    uint32_t downs_in_window = 0;
    uint32_t window_s = 0;  // the flap window those downs are counted in (health.flap_window_s)
    bool counted = true;    // false: down and never up, not in service (not in "host")
    // What the port's error counters say (docs/health.md, "Link quality"): "clean" (read and
    // judged clean), "bad", "unknown" (not judged: link_quality_reason says why), or "" where
    // they are not read (counter health off, the device excluded) or the daemon did not say.
    std::string link_quality;
    std::string link_quality_reason;
    friend bool operator==(const Port&, const Port&) = default;
  };
  bool enabled = false;  // health.enabled: false, and the daemon judges nothing
  // The worst verdict of the counted ports; "unknown" when none counts or health is off.
  std::string host = "unknown";
  uint32_t not_counted = 0;
  // Writes of the state file and of the inventory that failed since the daemon started
  // (docs/health.md).
  uint64_t state_write_failures = 0;
  std::vector<Port> ports;  // by device name, then port number
  friend bool operator==(const HealthReply&, const HealthReply&) = default;
};

// The reply's "health" key and its object.
void write_health(JsonWriter& w, const HealthReply& h);
// From a whole reply line.
std::optional<HealthReply> health_from_json(std::string_view reply_line, std::string* error);

}  // namespace rdma_eventd
