// Writing records and snapshot records as JSON lines, for the daemon (the readers are in the
// public record.h). A record is serialized once, whatever the number of sinks, so the writer
// appends to one string with a fixed key order (docs/records.md).
#pragma once

#include <cstdint>
#include <string>

#include "rdma_eventd/record.h"
#include "schema/json_writer.h"

namespace rdma_eventd {

// One line of JSON, no trailing newline.
std::string to_json(const Record& record);
// The same, appended to `out` (a buffer that is reused keeps its capacity).
void append_json(std::string& out, const Record& record);
std::string to_json(const PortSnapshot& snapshot);

// Appends "2026-11-22T10:15:30.123456Z" (format_rfc3339_us's text) without a string of its own.
void append_rfc3339_us(std::string& out, int64_t time_us);
constexpr size_t kRfc3339UsSize = 27;
// The same written at p, which has room for its kRfc3339UsSize bytes; returns the end.
char* write_rfc3339_us(char* p, int64_t time_us);

// Writes the port block's keys (link_layer ... rate_gbps) into the object being written.
void write_port_block(JsonWriter& w, const PortInfo& port);

}  // namespace rdma_eventd
