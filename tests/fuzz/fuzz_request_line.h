// What the fuzz targets of request lines (fuzz_request, fuzz_report) share: parsing the line,
// and the checks of the error a refused line gives.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "fuzz_check.h"
#include "rdma_eventd/protocol.h"
#include "schema/protocol_json.h"

namespace rdma_eventd::fuzz {

// A refused line gives an error line (error_json, what the daemon answers) that a client reads
// back as that error, and that is a fixed point of reading and writing.
inline void check_request_error(const RequestError& error) {
  const std::string text = error_json(error);
  std::string why;
  auto line = parse_line(text, &why);
  FUZZ_CHECK(line.has_value(), why + ": " + text);
  const RequestError* reread = line->error();
  FUZZ_CHECK(line->kind() == MessageKind::kError && reread != nullptr, text);
  FUZZ_CHECK(reread->code == error.code, text);
  FUZZ_CHECK(reread->op == error.op, text);
  FUZZ_CHECK(reread->id == error.id, text);
  // The message may lose bytes that are not UTF-8 (the writer replaces them), once: after that
  // the line reads and writes back unchanged.
  FUZZ_CHECK(error_json(*reread) == text, text);
  FUZZ_CHECK(!error.message.empty(), text);
}

// Parses the fuzzer's input as a request line: a request goes to check_request, an error to
// check_request_error.
template <typename CheckRequest>
void fuzz_request_line(const uint8_t* data, size_t size, CheckRequest check_request) {
  const std::string_view line(reinterpret_cast<const char*>(data), size);
  auto parsed = parse_request(line);
  if (const auto* request = std::get_if<Request>(&parsed)) {
    check_request(*request);
  } else {
    check_request_error(std::get<RequestError>(parsed));
  }
}

}  // namespace rdma_eventd::fuzz
