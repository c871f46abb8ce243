// The subscriber protocol's lines as JSON, both ways: what the daemon reads (requests) and
// writes (hello, error and loss lines; replies are the hub's), and what the client writes
// (requests) and reads (parse_line). Internal: clients see the results as Message (protocol.h).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "rdma_eventd/protocol.h"
#include "schema/json_writer.h"
#include "schema/record_json.h"

namespace rdma_eventd {

// One request line (without its newline).
std::variant<Request, RequestError> parse_request(std::string_view line);
// The line a client sends for a request (without the newline).
std::string request_json(const Request& request);
// A filter's subscribe keys as a JSON object: {"events":[...],"devices":[...],...}.
std::string filter_json(const Filter& filter);

std::string hello_json(const Hello& hello);
std::string lost_json(const Lost& lost);
std::string error_json(const RequestError& error);

// One line from the daemon. nullopt (and *error naming what is wrong) when the line is neither a
// record nor a v1 protocol line.
std::optional<Message> parse_line(std::string_view text, std::string* error);

}  // namespace rdma_eventd
