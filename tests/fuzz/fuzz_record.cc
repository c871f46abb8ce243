// Fuzzes the client library's line decoder (parse_line, lib/src/message.cc, and through it
// record_from_json and snapshot_from_json, lib/src/record.cc): what Client::next() does with every
// line the daemon sends. Beyond "no crash, no leak, no undefined behaviour, no exception", it
// checks that decoding and the daemon's writers agree:
//  - a record, snapshot record, hello, loss notice or error line that decodes is written back
//    (to_json, hello_json, lost_json, error_json) as a line that decodes to the same value, and
//    that line is a fixed point: decoding and writing it again gives the same text;
//  - parse_line and the record decoder called directly agree on what the daemon writes;
//  - a time that reads (RFC 3339 with microseconds) writes back as the same text;
//  - the P_Key and GUID parsers accept exactly what independent reference parsers below accept,
//    with the same value: on the whole input and on every piece of it between double quotes (the
//    strings of a JSON line).
#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "rdma_eventd/protocol.h"
#include "rdma_eventd/record.h"
#include "schema/protocol_json.h"

namespace {

using namespace rdma_eventd;

// --- reference parsers -------------------------------------------------------------------------
// Written apart from lib/src/values.cc, and as literally as record.h states the forms: first the
// shape is checked character class by character class, then strtoull reads digits that are
// known to be hex only.

bool all_hex(std::string_view s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](char c) { return std::isxdigit(c & 0xff) != 0; });
}

uint64_t hex_number(std::string_view digits) {
  return std::strtoull(std::string(digits).c_str(), nullptr, 16);
}

// "0x" and 1 to 4 hex digits.
std::optional<uint16_t> reference_pkey(std::string_view text) {
  if (!text.starts_with("0x")) return std::nullopt;
  const std::string_view digits = text.substr(2);
  if (digits.size() > 4 || !all_hex(digits)) return std::nullopt;
  return static_cast<uint16_t>(hex_number(digits));
}

// "xxxx:xxxx:xxxx:xxxx", "0x" or "0X" and 16 digits, or 16 digits.
std::optional<uint64_t> reference_guid(std::string_view text) {
  std::string digits;
  if (text.size() == 19) {
    for (size_t group = 0; group < 4; ++group) {
      const std::string_view four = text.substr(group * 5, 4);
      if (four.size() != 4 || !all_hex(four)) return std::nullopt;
      if (group < 3 && text[group * 5 + 4] != ':') return std::nullopt;
      digits += four;
    }
  } else if (text.starts_with("0x") || text.starts_with("0X")) {
    digits = text.substr(2);
  } else {
    digits = text;
  }
  if (digits.size() != 16 || !all_hex(digits)) return std::nullopt;
  return hex_number(digits);
}

void check_value_parsers(std::string_view text) {
  FUZZ_CHECK(parse_pkey(text) == reference_pkey(text), text);
  FUZZ_CHECK(parse_guid(text) == reference_guid(text), text);
}

// --- lines ---------------------------------------------------------------------------------------

// The line `text`, as a writer produced it, must decode to a message of `kind`; returns it.
Message reread(const std::string& text, MessageKind kind) {
  std::string why;
  auto message = parse_line(text, &why);
  FUZZ_CHECK(message.has_value(), why + ": " + text);
  FUZZ_CHECK(message->kind() == kind, text);
  FUZZ_CHECK(message->text() == text, text);
  return std::move(*message);
}

void check_record(const Record& record) {
  const std::string text = to_json(record);
  const Message message = reread(text, MessageKind::kRecord);
  FUZZ_CHECK(message.record() != nullptr && *message.record() == record, text);
  FUZZ_CHECK(to_json(*message.record()) == text, text);
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
  const Message message = reread(text, MessageKind::kSnapshot);
  FUZZ_CHECK(message.snapshot() != nullptr && *message.snapshot() == snapshot, text);
  FUZZ_CHECK(to_json(*message.snapshot()) == text, text);
}

void check_message(const Message& m) {
  // Exactly the accessor of its kind answers.
  const int answers = (m.record() != nullptr) + (m.snapshot() != nullptr) + (m.hello() != nullptr) +
                      (m.reply() != nullptr) + (m.error() != nullptr) + (m.lost() != nullptr);
  FUZZ_CHECK(answers == 1, m.text());
  if (const Record* r = m.record()) check_record(*r);
  if (const PortSnapshot* s = m.snapshot()) check_snapshot(*s);
  if (const Hello* h = m.hello()) {
    const std::string text = hello_json(*h);
    FUZZ_CHECK(*reread(text, MessageKind::kHello).hello() == *h, text);
  }
  if (const Lost* l = m.lost()) {
    const std::string text = lost_json(*l);
    FUZZ_CHECK(*reread(text, MessageKind::kLost).lost() == *l, text);
  }
  if (const RequestError* e = m.error()) {
    const std::string text = error_json(*e);
    const Message again = reread(text, MessageKind::kError);
    FUZZ_CHECK(*again.error() == *e, text);
    FUZZ_CHECK(error_json(*again.error()) == text, text);
  }
  // Replies are written by the daemon's hub, not by the library: nothing to write back.
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string why;
  if (auto message = parse_line(text, &why)) {
    FUZZ_CHECK(message->text() == text, message->text());
    check_message(*message);
  } else {
    FUZZ_CHECK(!why.empty(), text);
  }
  // A time that reads is the text the writer gives for it.
  if (auto time_us = parse_rfc3339_us(text)) FUZZ_CHECK(format_rfc3339_us(*time_us) == text, text);
  // The decoders on their own, also for lines parse_line would hand to another decoder: a
  // record or snapshot they accept writes back as one they read the same way.
  if (auto record = record_from_json(text, &why)) check_record(*record);
  if (auto snapshot = snapshot_from_json(text, &why)) check_snapshot(*snapshot);
  check_value_parsers(text);
  for (size_t start = 0; start <= text.size();) {
    const size_t quote = std::min(text.find('"', start), text.size());
    check_value_parsers(text.substr(start, quote - start));
    start = quote + 1;
  }
  return 0;
}
