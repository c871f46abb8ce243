// Fuzzes the DEVX event decoder (daemon/core/devx_decode.cc): what the daemon makes of every
// 72-byte read from an mlx5 device's event channel, and of QUERY_HCA_CAP replies. The input is
// the read: an 8-byte cookie (its first byte, mod 5, is the device's port count here) and the
// event entry, which may be short. Beyond "no crash, no undefined behaviour, no exception":
//  - nothing is dropped: every entry becomes exactly one record of a vendor kind, carrying the
//    entry's type, subtype and 28 data bytes in hex;
//  - module records name a port the device has, or none; temperature sensors are the bitmap's
//    set bits, ascending;
//  - the record written as JSON reads back as the same record, and its text is not empty;
//  - capability replies shorter than a page, or with a non-zero status, read as nothing.
#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "core/devx_decode.h"
#include "fuzz_check.h"
#include "rdma_eventd/record.h"
#include "schema/record_json.h"
#include "schema/record_text.h"

namespace {

using namespace rdma_eventd;
using namespace rdma_eventd::daemon;

std::string hex_of(std::span<const uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s;
  for (uint8_t b : bytes) {
    s += kDigits[b >> 4];
    s += kDigits[b & 0xf];
  }
  return s;
}

void check_event(std::span<const uint8_t> read) {
  const uint32_t num_ports = read.empty() ? 1 : read[0] % 5;
  const auto eqe = read.size() > devx::kCookieSize ? read.subspan(devx::kCookieSize)
                                                   : std::span<const uint8_t>();
  std::array<uint8_t, devx::kEqeSize> padded{};
  std::copy_n(eqe.begin(), std::min(eqe.size(), padded.size()), padded.begin());

  const devx::DecodedEvent d = devx::decode_event(eqe);
  FUZZ_CHECK(d.kind >= EventKind::kModulePlugged && d.kind <= EventKind::kVendorEvent,
             event_name(d.kind));
  FUZZ_CHECK(d.vendor.type == padded[1], "type");
  FUZZ_CHECK(d.vendor.subtype == padded[3], "subtype");
  FUZZ_CHECK(d.vendor.data == hex_of(std::span(padded).subspan(32, 28)), d.vendor.data);
  if (d.kind == EventKind::kTemperatureWarning) {
    size_t bits = 0;
    for (size_t i = 32; i < 48; ++i)
      bits += static_cast<size_t>(std::popcount(padded[i]));
    FUZZ_CHECK(d.vendor.sensors.size() == bits, "sensor count");
    for (size_t i = 1; i < d.vendor.sensors.size(); ++i)
      FUZZ_CHECK(d.vendor.sensors[i - 1] < d.vendor.sensors[i], "sensors ascending");
  }

  DeviceView view;
  view.name = "mlx5_0";
  view.ports.resize(num_ports);
  for (uint32_t p = 1; p <= num_ports; ++p)
    view.ports[p - 1].info.port = p;
  Record r = devx::vendor_record(view, d);
  FUZZ_CHECK(r.port <= num_ports, "port");
  FUZZ_CHECK(r.port_info.has_value() == (r.port != 0), "port block");
  r.seq = 1;
  r.stream = "s";
  r.host = "h";
  const std::string json = to_json(r);
  std::string error;
  const auto back = record_from_json(json, &error);
  FUZZ_CHECK(back.has_value(), error + " " + json);
  FUZZ_CHECK(*back == r, json);
  FUZZ_CHECK(!describe(r).empty(), json);
}

void check_replies(std::span<const uint8_t> data) {
  const bool page = data.size() >= devx::kQueryHcaCapOutSize && data[0] == 0;
  FUZZ_CHECK(devx::event_cap_from_reply(data).has_value() == page, "event_cap reply");
  FUZZ_CHECK(devx::unaffiliated_from_reply(data).has_value() == page, "mask reply");
  if (!page) return;
  devx::EventCaps caps{*devx::event_cap_from_reply(data), *devx::unaffiliated_from_reply(data)};
  for (uint16_t e : devx::events_to_subscribe(caps)) {
    FUZZ_CHECK(caps.allows(e) && e != devx::kPortChange, "subscribed event");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> in(data, size);
  check_event(in.first(std::min(size, devx::kReadSize)));
  check_replies(in);
  return 0;
}
