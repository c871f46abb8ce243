// Fuzzes the daemon's request parser (parse_request, lib/src/protocol.cc) with arbitrary request
// lines, as any local user can send them to the subscriber socket. Beyond "no crash, no leak, no
// undefined behaviour, no exception", it checks what the protocol promises:
//  - a request that parses is written back by request_json (what clients send) as a line that
//    parses to the same request;
//  - a request that fails gives an error line (error_json, what the daemon answers) that a client
//    reads back as that error, and that is a fixed point of reading and writing;
//  - the filter of a subscribe request can be applied to records without trouble.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "fuzz_check.h"
#include "fuzz_request_line.h"
#include "rdma_eventd/protocol.h"
#include "schema/protocol_json.h"

namespace {

using namespace rdma_eventd;

void check_request(const Request& request) {
  const std::string text = request_json(request);
  auto again = parse_request(text);
  const Request* reread = std::get_if<Request>(&again);
  FUZZ_CHECK(reread != nullptr, text);
  FUZZ_CHECK(*reread == request, text);

  // A subscribe filter meets device names and GUIDs that do and do not look like its patterns.
  const Filter& f = request.filter;
  Record port_record;
  port_record.event = EventKind::kPortErr;
  port_record.severity = Severity::kError;
  port_record.device = "mlx5_0";
  port_record.node_guid = "248a:0703:00a1:b2c0";
  port_record.port = 1;
  port_record.port_info = PortInfo{};
  (void)f.matches(key_of(port_record));
  Record device_record;
  device_record.event = EventKind::kDeviceFatal;
  device_record.severity = Severity::kCritical;
  device_record.device = "mlx5_*[";
  (void)f.matches(key_of(device_record));
  (void)f.matches_port("mlx5_1", "", 2);
  if (f.matches_everything()) FUZZ_CHECK(f.matches(key_of(device_record)), text);
  FUZZ_CHECK(!filter_json(f).empty(), text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::fuzz_request_line(data, size, check_request);
  return 0;
}
