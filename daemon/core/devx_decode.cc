#include "core/devx_decode.h"

#include <algorithm>
#include <array>
#include <cstdio>

#include "rdma_eventd/internal/enum_names.h"
#include "rdma_eventd/internal/mlx5_module_errors.h"

namespace rdma_eventd::daemon::devx {
namespace {

// PORT_MODULE_EVENT data (struct mlx5_eqe_port_module): module at data byte 1, status at 3,
// error type at 6, each in the low nibble but the module.
constexpr size_t kModuleByte = kEqeDataOffset + 1;
constexpr size_t kModuleStatusByte = kEqeDataOffset + 3;
constexpr size_t kModuleErrorByte = kEqeDataOffset + 6;

enum ModuleStatus : uint8_t { kPlugged = 0x1, kUnplugged = 0x2, kError = 0x3, kDisabled = 0x4 };

std::string_view module_error_name(uint32_t code) {
  for (const internal::Mlx5ModuleError& e : internal::kMlx5ModuleErrors)
    if (e.code == code) return e.name;
  return "unknown";
}

std::string_view event_name(uint16_t event) {
  switch (event) {
    case kPortChange:
      return "port_change";
    case kPortModuleEvent:
      return "port_module_event";
    case kTempWarnEvent:
      return "temp_warn_event";
    case kGeneralEvent:
      return "general_event";
    default:
      return "?";
  }
}

uint64_t be64_at(std::span<const uint8_t> b, size_t at) {
  uint64_t v = 0;
  for (size_t i = 0; i < 8; ++i)
    v = v << 8 | b[at + i];
  return v;
}

// A PRM field of the capability page: `bits` wide at bit `offset`, big-endian.
uint32_t prm_get(std::span<const uint8_t> page, unsigned offset, unsigned bits) {
  uint32_t v = 0;
  for (unsigned bit = offset; bit < offset + bits; ++bit)
    v = v << 1 | ((page[bit / 8] >> (7 - bit % 8)) & 1u);
  return v;
}

constexpr size_t kReplyHeader = 16;
constexpr unsigned kEventCapBit = 0x90;         // cmd_hca_cap.event_cap
constexpr size_t kUnaffiliatedEventsByte = 32;  // device_event_cap.user_unaffiliated_events

// The capability page of a reply whose status byte is 0.
std::optional<std::span<const uint8_t>> page_of(std::span<const uint8_t> reply) {
  if (reply.size() < kQueryHcaCapOutSize || reply[0] != 0) return std::nullopt;
  return reply.subspan(kReplyHeader);
}

std::string hex(std::span<const uint8_t> bytes) {
  std::string s;
  s.reserve(bytes.size() * 2);
  char buf[3];
  for (uint8_t b : bytes) {
    std::snprintf(buf, sizeof buf, "%02x", b);
    s += buf;
  }
  return s;
}

void decode_module(std::span<const uint8_t> e, DecodedEvent& out) {
  switch (e[kModuleStatusByte] & 0xf) {
    case kPlugged:
      out.kind = EventKind::kModulePlugged;
      break;
    case kUnplugged:
      out.kind = EventKind::kModuleUnplugged;
      break;
    case kDisabled:
      out.kind = EventKind::kModuleDisabled;
      break;
    case kError:
      out.kind = EventKind::kModuleError;
      out.vendor.error_code = e[kModuleErrorByte] & 0xf;
      out.vendor.error_type = std::string(module_error_name(out.vendor.error_code));
      break;
    default:
      // A status this version does not know: a vendor_event with the raw bytes, which carry
      // the module number too; "module" belongs to the module records only.
      return;
  }
  out.vendor.module = e[kModuleByte];
}

// struct mlx5_eqe_temp_warning: sensor_warning_msb then _lsb, big-endian; sensor n is bit n of
// the 128-bit value.
void decode_temperature(std::span<const uint8_t> e, DecodedEvent& out) {
  const uint64_t msb = be64_at(e, kEqeDataOffset);
  const uint64_t lsb = be64_at(e, kEqeDataOffset + 8);
  for (uint32_t n = 0; n < 128; ++n) {
    const uint64_t word = n < 64 ? lsb : msb;
    if ((word >> (n % 64)) & 1u) out.vendor.sensors.push_back(n);
  }
  out.kind = EventKind::kTemperatureWarning;
}

}  // namespace

std::array<uint8_t, kQueryHcaCapInSize> query_hca_cap_command(uint16_t cap_type) {
  std::array<uint8_t, kQueryHcaCapInSize> in{};
  in[0] = static_cast<uint8_t>(kOpQueryHcaCap >> 8);
  in[1] = static_cast<uint8_t>(kOpQueryHcaCap & 0xff);
  const uint16_t op_mod = static_cast<uint16_t>(cap_type << 1 | 1);  // HCA_CAP_OPMOD_GET_CUR
  in[6] = static_cast<uint8_t>(op_mod >> 8);
  in[7] = static_cast<uint8_t>(op_mod & 0xff);
  return in;
}

bool EventCaps::allows(uint16_t event) const {
  if (!event_cap) return event == kPortChange;  // the kernel's legacy rule
  return event < 256 && (unaffiliated[event / 64] >> (event % 64)) & 1u;
}

std::optional<bool> event_cap_from_reply(std::span<const uint8_t> reply) {
  const auto page = page_of(reply);
  if (!page) return std::nullopt;
  return prm_get(*page, kEventCapBit, 1) != 0;
}

std::optional<std::array<uint64_t, 4>> unaffiliated_from_reply(std::span<const uint8_t> reply) {
  const auto page = page_of(reply);
  if (!page) return std::nullopt;
  std::array<uint64_t, 4> mask{};
  for (size_t w = 0; w < 4; ++w)
    mask[w] = be64_at(*page, kUnaffiliatedEventsByte + 8 * w);
  return mask;
}

std::vector<uint16_t> events_to_subscribe(const EventCaps& caps) {
  std::vector<uint16_t> out;
  for (uint16_t e : {kPortModuleEvent, kTempWarnEvent, kGeneralEvent}) {
    if (caps.allows(e)) out.push_back(e);
  }
  return out;
}

std::string event_names(const std::vector<uint16_t>& events) {
  std::string s;
  for (uint16_t e : events)
    s += (s.empty() ? "" : ",") + std::string(event_name(e));
  return s;
}

DecodedEvent decode_event(std::span<const uint8_t> eqe) {
  std::array<uint8_t, kEqeSize> e{};
  std::copy_n(eqe.begin(), std::min(eqe.size(), e.size()), e.begin());
  DecodedEvent out;
  out.vendor.type = e[1];
  out.vendor.subtype = e[3];
  out.vendor.data = hex(std::span(e).subspan(kEqeDataOffset, kEqeDataSize));
  switch (e[1]) {
    case kPortModuleEvent:
      decode_module(e, out);
      break;
    case kTempWarnEvent:
      decode_temperature(e, out);
      break;
    case kGeneralEvent:
      if (e[3] == kPciPowerChange) out.kind = EventKind::kPciPowerChange;
      if (e[3] == kFwLivePatch || e[3] == kPciSyncForFwUpdate) out.kind = EventKind::kFirmwareEvent;
      break;
    default:
      break;
  }
  return out;
}

uint32_t port_of_module(uint32_t module, uint32_t num_ports) {
  return module < num_ports ? module + 1 : 0;
}

Record vendor_record(const DeviceView& view, const DecodedEvent& event) {
  Record r = device_record(event.kind, view);
  r.vendor = event.vendor;
  const bool about_module =
      event.kind >= EventKind::kModulePlugged && event.kind <= EventKind::kModuleError;
  const uint32_t port = about_module ? port_of_module(event.vendor.module, view.num_ports()) : 0;
  if (port != 0) {
    r.port = port;
    r.port_info = view.ports[port - 1].info;
    r.previous = r.port_info;
  }
  return r;
}

std::vector<Record> events_lost_records(DeviceView& view, DeviceQueries& queries,
                                        std::vector<QueryFailure>* failures) {
  std::vector<Record> out;
  out.push_back(device_record(EventKind::kVendorEventsLost, view));
  for (uint32_t p = 1; p <= view.num_ports(); ++p) {
    DeviceQueries::PortAttr attr;
    if (int err = queries.query_port(p, attr); err != 0) {
      failures->push_back(QueryFailure{QueryFailure::What::kPort, p, err});
      continue;
    }
    PortView& pv = view.ports[p - 1];
    if (attr.info == pv.info) continue;
    Record r = device_record(EventKind::kPortState, view);
    r.port = p;
    r.previous = pv.info;
    r.port_info = attr.info;
    pv.info = attr.info;
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace rdma_eventd::daemon::devx

namespace rdma_eventd::daemon {

std::string_view devx_state_name(DevxState s) {
  // Indexed by DevxState.
  static constexpr std::array<std::string_view, 7> kNames = {
      "active", "not_mlx5", "refused", "no_event_cap", "no_events", "failed", "closed"};
  return internal::enum_name(kNames, s, "?");
}

}  // namespace rdma_eventd::daemon
