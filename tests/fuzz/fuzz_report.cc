// Fuzzes the report request (parse_request with "op":"report", lib/src/protocol.cc), which any
// client allowed to report sends, and the app_report record made from it. Beyond "no crash, no
// leak, no undefined behaviour, no exception", it checks what docs/protocol.md promises:
//  - a report that parses names a reportable event, a device of 1 to 64 bytes, a port of 0 to
//    255, an object number of -1 to 2^32-1 and at most 256 bytes of detail without control
//    characters; request_json writes it back as a line that parses to the same request;
//  - a refused one gives an error line that reads back with the same code, op and id, and that
//    is a fixed point of reading and writing;
//  - the app_report record the daemon would make of it writes as JSON that reads back equal,
//    its sentence is not empty, and a filter of app_report records matches it.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "fuzz_check.h"
#include "fuzz_request_line.h"
#include "rdma_eventd/protocol.h"
#include "rdma_eventd/record.h"
#include "schema/protocol_json.h"
#include "schema/record_text.h"

namespace {

using namespace rdma_eventd;

void check_report(const Request& request) {
  const std::string text = request_json(request);
  if (request.op != Op::kReport) return;  // fuzz_request covers the other ops
  const Report& rep = request.report;
  const ReportableEvent* event = reportable_event(rep.event_type);
  FUZZ_CHECK(event != nullptr, text);
  FUZZ_CHECK(!rep.device.empty() && rep.device.size() <= 64, text);
  FUZZ_CHECK(rep.port <= 255, text);
  FUZZ_CHECK(rep.object_id >= -1 && rep.object_id <= int64_t{UINT32_MAX}, text);
  FUZZ_CHECK(rep.detail.size() <= kMaxReportDetailBytes, text);
  for (char c : rep.detail)
    FUZZ_CHECK(static_cast<unsigned char>(c) >= 0x20 && c != 0x7f, text);
  auto again = parse_request(text);
  const Request* reread = std::get_if<Request>(&again);
  FUZZ_CHECK(reread != nullptr && *reread == request, text);

  // The record hub_reports.cc makes of it, with a reporter.
  Record r;
  r.seq = 1;
  r.stream = "847eff512abbab7d6f447f3d16f8a903";
  r.host = "node17";
  r.event = EventKind::kAppReport;
  r.event_type = rep.event_type;
  r.severity = Severity::kError;
  r.device = rep.device;
  r.node_guid = "0c42:a103:00f6:5e44";
  r.port = rep.port;
  r.object = std::string(event->object);
  r.object_id = rep.object_id;
  r.detail = rep.detail;
  r.reporter = {4242, 1000, 1000, "trainer", "job.service", "/system.slice/job.service"};
  const std::string json = to_json(r);
  std::string why;
  const auto back = record_from_json(json, &why);
  FUZZ_CHECK(back.has_value(), why + ": " + json);
  // The request's strings were valid JSON, so valid UTF-8: nothing is replaced on the way.
  FUZZ_CHECK(*back == r, json);
  FUZZ_CHECK(!event_text(*back).empty(), json);
  Filter f;
  f.events = {EventKind::kAppReport};
  FUZZ_CHECK(f.matches(key_of(*back)), json);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::fuzz_request_line(data, size, check_report);
  return 0;
}
