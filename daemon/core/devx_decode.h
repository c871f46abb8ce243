// mlx5 DEVX vendor events, pure: what the firmware's capability pages allow, which events the
// daemon subscribes to, and what one event read from a DEVX event channel means as a record.
// daemon/verbs reads the bytes (mlx5dv_devx_general_cmd, mlx5dv_devx_get_event); everything
// they mean is decided here.
//
// Layouts (docs/simulator.md, "DEVX", has the sources): a read in data mode is 72 bytes, the
// 8-byte cookie and the 64-byte event entry (struct mlx5_eqe: type at byte 1, subtype at byte 3,
// 28 data bytes from byte 32). Event numbers and data layouts are the kernel's device.h and
// mlx5 core events.h.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/device_view.h"
#include "core/devx_status.h"
#include "core/enricher.h"
#include "rdma_eventd/record.h"

namespace rdma_eventd::daemon::devx {

inline constexpr size_t kCookieSize = 8;
inline constexpr size_t kEqeSize = 64;
inline constexpr size_t kReadSize = kCookieSize + kEqeSize;  // one event in data mode
inline constexpr size_t kEqeDataOffset = 32;
inline constexpr size_t kEqeDataSize = 28;

inline constexpr uint16_t kPortChange = 0x09;
inline constexpr uint16_t kPortModuleEvent = 0x16;
inline constexpr uint16_t kTempWarnEvent = 0x17;
inline constexpr uint16_t kGeneralEvent = 0x22;

// GENERAL_EVENT subtypes.
inline constexpr uint8_t kPciPowerChange = 0x5;
inline constexpr uint8_t kFwLivePatch = 0x7;
inline constexpr uint8_t kPciSyncForFwUpdate = 0x8;

// QUERY_HCA_CAP (opcode 0x100), as mlx5_ifc.h lays it out: the command is 16 bytes, the reply a
// 16-byte header and the 4096-byte capability page.
inline constexpr uint16_t kOpQueryHcaCap = 0x100;
inline constexpr size_t kQueryHcaCapInSize = 16;
inline constexpr size_t kQueryHcaCapOutSize = 16 + 4096;
inline constexpr uint16_t kCapGeneral = 0x0;
inline constexpr uint16_t kCapDeviceEvent = 0x14;  // MLX5_CAP_DEV_EVENT

// The QUERY_HCA_CAP command for page `cap_type`, current values (op_mod = type << 1 | 1).
std::array<uint8_t, kQueryHcaCapInSize> query_hca_cap_command(uint16_t cap_type);

// What the firmware says about DEVX events, from the two pages.
struct EventCaps {
  bool event_cap = false;  // cmd_hca_cap.event_cap: 0 is firmware that allows only PORT_CHANGE
  std::array<uint64_t, 4> unaffiliated{};  // user_unaffiliated_events: event n is bit n % 64
                                           // of word n / 64
  bool allows(uint16_t event) const;
};

// Reads event_cap from a QUERY_HCA_CAP reply of the general page. nullopt when the reply is
// short or its status is not 0.
std::optional<bool> event_cap_from_reply(std::span<const uint8_t> reply);
// Reads user_unaffiliated_events from a reply of page 0x14.
std::optional<std::array<uint64_t, 4>> unaffiliated_from_reply(std::span<const uint8_t> reply);

// The events the daemon subscribes to, of those that matter, that the firmware allows: module,
// temperature and general events. PORT_CHANGE is left out: the verbs async fd already reports
// it (as port_active/port_err and the rest), so it would come twice.
std::vector<uint16_t> events_to_subscribe(const EventCaps& caps);

// "port_module_event,temp_warn_event" for logs and the status reply.
std::string event_names(const std::vector<uint16_t>& events);

// One event entry decoded: the record's kind and its vendor object. kind is vendor_event for
// anything this version does not know; nothing is dropped.
struct DecodedEvent {
  EventKind kind = EventKind::kVendorEvent;
  VendorEvent vendor;
};

// `eqe` is the 64 bytes after the cookie; fewer bytes are read as zeros past the end.
DecodedEvent decode_event(std::span<const uint8_t> eqe);

// The port a module serves. No event carries it (the PMLP register does, which the daemon does
// not read): mlx5 adapters number one module per port from 0, so module m is port m + 1 when
// the device has that port; 0 (unknown) otherwise.
uint32_t port_of_module(uint32_t module, uint32_t num_ports);

// The record for a decoded event, unstamped: device-scoped, or port-scoped with the port's
// last known state when the event names a module whose port is known.
Record vendor_record(const DeviceView& view, const DecodedEvent& event);

// After EOVERFLOW: vendor_events_lost for the device, then a port_state record for each port
// whose attributes differ from the view's (the view follows). Ports whose query fails keep
// their last known state and are listed in *failures.
std::vector<Record> events_lost_records(DeviceView& view, DeviceQueries& queries,
                                        std::vector<QueryFailure>* failures);

}  // namespace rdma_eventd::daemon::devx
