// The status reply's "event_counts" block (docs/protocol.md), written and read apart from the
// other blocks: its events are a map named by the schema's event names, not a fixed table.
#pragma once

#include <nlohmann/json.hpp>

#include "json_reader.h"
#include "schema/json_writer.h"
#include "schema/status_reply.h"

namespace rdma_eventd {

// "event_counts": {"ports": [...], "untracked": N}
void write_event_counts(JsonWriter& w, const StatusReply::EventCounts& counts);
// The block's object; false, and rd's error naming the key, when it is malformed.
bool read_event_counts(JsonReader& rd, const nlohmann::json& o, StatusReply::EventCounts& out);

}  // namespace rdma_eventd
