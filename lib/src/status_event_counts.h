// The status reply's "event_counts" block (docs/protocol.md), written and read apart from the
// other blocks: its events are a map named by the schema's event names, not a fixed table. Such
// maps of counts by name (link_health's counters are another) are written and read here.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "json_reader.h"
#include "schema/json_writer.h"
#include "schema/status_reply.h"

namespace rdma_eventd {

// Counts by name, in the order given: an event's records here, link_health's counter values.
using NamedCounts = std::vector<std::pair<std::string, uint64_t>>;
// "key": {"NAME": N, ...}
void write_named_counts(JsonWriter& w, std::string_view key, const NamedCounts& counts);
// The object at `key`, each value an unsigned integer; an error names "KEY.NAME".
bool read_named_counts(JsonReader& rd, const nlohmann::json& o, std::string_view key,
                       NamedCounts& out);

// "event_counts": {"ports": [...], "untracked": N}
void write_event_counts(JsonWriter& w, const StatusReply::EventCounts& counts);
// The block's object; false, and rd's error naming the key, when it is malformed.
bool read_event_counts(JsonReader& rd, const nlohmann::json& o, StatusReply::EventCounts& out);

}  // namespace rdma_eventd
