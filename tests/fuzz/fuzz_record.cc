// Fuzzes the client library's line decoder (parse_line, lib/src/protocol.cc, and through it
// record_from_json and snapshot_from_json, lib/src/record.cc): what Client::next() does with every
// line the daemon sends. Beyond "no crash, no leak, no undefined behaviour, no exception", it
// checks that decoding and the daemon's writers agree:
//  - a record, snapshot record, hello, loss notice or error line that decodes is written back
//    (to_json, hello_json, lost_json, error_json) as a line that decodes to the same value, and
//    that line is a fixed point: decoding and writing it again gives the same text;
//  - parse_line and the record decoder called directly agree on what the daemon writes;
//  - a time that reads (RFC 3339 with microseconds) writes back as the same text.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "rdma_eventd/protocol.h"
#include "rdma_eventd/record.h"

namespace {

using namespace rdma_eventd;

// The line `text`, as a writer produced it, must decode to a line of `kind` whose value is
// `expected`; returns the decoded line.
Line reread(const std::string& text, LineKind kind) {
  std::string why;
  auto line = parse_line(text, &why);
  FUZZ_CHECK(line.has_value(), why + ": " + text);
  FUZZ_CHECK(line->kind == kind, text);
  FUZZ_CHECK(line->text == text, text);
  return std::move(*line);
}

void check_record(const Record& record) {
  const std::string text = to_json(record);
  const Line line = reread(text, LineKind::kRecord);
  FUZZ_CHECK(line.record == record, text);
  FUZZ_CHECK(to_json(line.record) == text, text);
  std::string why;
  auto direct = record_from_json(text, &why);
  FUZZ_CHECK(direct.has_value() && *direct == record, why + ": " + text);

  // What a filtering client looks at, and what `changes` lists.
  const RecordKey key = key_of(record);
  FUZZ_CHECK(key.port_scoped == record.port_info.has_value(), text);
  if (record.port_info) {
    FUZZ_CHECK(record.previous.has_value(), text);
    const auto changed = changed_fields(*record.previous, *record.port_info);
    FUZZ_CHECK(changed.empty() == (*record.previous == *record.port_info), text);
  }
}

void check_snapshot(const PortSnapshot& snapshot) {
  const std::string text = to_json(snapshot);
  const Line line = reread(text, LineKind::kSnapshot);
  FUZZ_CHECK(line.snapshot == snapshot, text);
  FUZZ_CHECK(to_json(line.snapshot) == text, text);
}

void check_line(const Line& line) {
  switch (line.kind) {
    case LineKind::kRecord:
      check_record(line.record);
      break;
    case LineKind::kSnapshot:
      check_snapshot(line.snapshot);
      break;
    case LineKind::kHello: {
      const std::string text = hello_json(line.hello);
      FUZZ_CHECK(reread(text, LineKind::kHello).hello == line.hello, text);
      break;
    }
    case LineKind::kLost: {
      const std::string text = lost_json(line.lost);
      FUZZ_CHECK(reread(text, LineKind::kLost).lost == line.lost, text);
      break;
    }
    case LineKind::kError: {
      const std::string text = error_json(line.error);
      const Line again = reread(text, LineKind::kError);
      FUZZ_CHECK(again.error == line.error, text);
      FUZZ_CHECK(error_json(again.error) == text, text);
      break;
    }
    case LineKind::kReply:
      // Replies are written by the daemon's hub, not by the library: nothing to write back.
      break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string why;
  if (auto line = parse_line(text, &why)) {
    FUZZ_CHECK(line->text == text, line->text);
    check_line(*line);
  } else {
    FUZZ_CHECK(!why.empty(), text);
  }
  // A time that reads is the text the writer gives for it.
  if (auto time_us = parse_rfc3339_us(text)) FUZZ_CHECK(format_rfc3339_us(*time_us) == text, text);
  // The decoders on their own, also for lines parse_line would hand to another decoder: a
  // record or snapshot they accept writes back as one they read the same way.
  if (auto record = record_from_json(text, &why)) check_record(*record);
  if (auto snapshot = snapshot_from_json(text, &why)) check_snapshot(*snapshot);
  return 0;
}
