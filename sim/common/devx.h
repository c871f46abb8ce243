// mlx5 DEVX as the simulator models it, shared by rdma-sim and the stand-in libmlx5.so.1 (see
// docs/simulator.md, "DEVX"). Plain constants and header-only functions with no allocation: the
// stand-in libraries use no C++ runtime.
//
// Sources: event numbers and EQE layouts from the kernel's include/linux/mlx5/device.h; command
// opcodes, statuses and the HCA capability layout from rdma-core v44 providers/mlx5/mlx5_ifc.h
// and tests/mlx5_prm_structs.py (the PRM's big-endian bit numbering: bit 0 is the most significant
// bit of the first byte).
#pragma once

#include <endian.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "common/shm_layout.h"

namespace rdmasim::devx {

// The kernel driver behind a device. Only mlx5 has DEVX.
enum class Provider : uint32_t {
  kMlx5 = 0,
  kMlx4,
  kRxe,
  kSiw,
  kBnxtRe,
  kIrdma,
  kEfa,
  kHns,
  kMana,
  kQedr,
  kCxgb4,
  kErdma,
  kOcrdma,
  kVmwPvrdma,
};

// EQE types (device.h).
inline constexpr uint8_t kEventPortChange = 0x09;
inline constexpr uint8_t kEventCmd = 0x0a;          // never delivered to DEVX (devx_event_notifier)
inline constexpr uint8_t kEventPageRequest = 0x0b;  // never delivered to DEVX either
inline constexpr uint8_t kEventPortModule = 0x16;
inline constexpr uint8_t kEventTempWarn = 0x17;
inline constexpr uint8_t kEventGeneral = 0x22;

// The subscription limits of devx.c: MAX_NUM_EVENTS and MAX_SUPP_EVENT_NUM.
inline constexpr size_t kMaxEventsPerSubscribe = 16;
inline constexpr uint16_t kMaxEventNumber = 255;

// One event as a DEVX channel returns it: the subscription's cookie, then the 64-byte EQE (type at
// byte 1, subtype at byte 3, data from byte 32). With OMIT_EV_DATA only the cookie is returned.
inline constexpr size_t kEqeSize = 64;
inline constexpr size_t kEqeDataOffset = 32;
inline constexpr size_t kEqeDataSize = 28;
inline constexpr size_t kRecordSize = 8 + kEqeSize;
inline constexpr size_t kOmitRecordSize = 8;
inline constexpr uint32_t kChannelOmitData =
    1;  // MLX5DV_DEVX_CREATE_EVENT_CHANNEL_FLAGS_OMIT_EV_DATA

// Firmware commands (mlx5_ifc.h) and the statuses a failed one reports in its output.
inline constexpr uint16_t kOpQueryHcaCap = 0x100;
inline constexpr uint8_t kStatusBadOp = 0x02;
inline constexpr uint8_t kStatusBadParam = 0x03;
inline constexpr uint8_t kStatusBadOutputLength = 0x51;
inline constexpr size_t kCmdHeaderSize = 16;              // general_obj_{in,out}_cmd_hdr
inline constexpr size_t kQueryHcaCapOutSize = 16 + 4096;  // header + the capability page
inline constexpr uint16_t kCapGeneral = 0x0;
inline constexpr uint16_t kCapDeviceEvent = 0x14;  // MLX5_CAP_DEV_EVENT

// Bit offsets in the general capability page (cmd_hca_cap): field, offset, width.
struct CapField {
  unsigned offset;
  unsigned bits;
};
inline constexpr CapField kCapEventCap{0x90, 1};
inline constexpr CapField kCapPortModuleEvent{0x1b0, 1};
inline constexpr CapField kCapPortType{0x1b6, 2};
inline constexpr CapField kCapNumPorts{0x1b8, 8};
inline constexpr CapField kCapTempWarnEvent{0x1d0, 1};
inline constexpr CapField kCapGeneralNotificationEvent{0x1d2, 1};
inline constexpr CapField kCapLogMaxUctx{0x463, 5};
// Byte offsets in the device event page (device_event_cap): two arrays of four big-endian 64-bit
// words.
inline constexpr size_t kUserAffiliatedEvents = 0;
inline constexpr size_t kUserUnaffiliatedEvents = 32;

// Sets a PRM field: `bits` wide at bit `offset`, big-endian, as mlx5dv.h's DEVX_SET does.
inline void prm_set(uint8_t* base, CapField f, uint32_t value) {
  for (unsigned i = 0; i < f.bits; ++i) {
    const unsigned bit = f.offset + f.bits - 1 - i;  // i-th least significant bit of the value
    uint8_t& byte = base[bit / 8];
    const uint8_t mask = static_cast<uint8_t>(0x80u >> (bit % 8));
    byte =
        (value >> i) & 1u ? static_cast<uint8_t>(byte | mask) : static_cast<uint8_t>(byte & ~mask);
  }
}

inline uint16_t get_be16(const uint8_t* p) {
  return static_cast<uint16_t>(p[0] << 8 | p[1]);
}

inline bool mask_has(const uint64_t (&mask)[4], uint16_t event) {
  return event <= kMaxEventNumber && (mask[event / 64] >> (event % 64)) & 1u;
}

// The kernel's is_unaffiliated_event(): which events a subscription without an object may name.
inline bool is_unaffiliated_event(const ShmDevx& d, uint16_t event) {
  if (!d.event_cap) return event == kEventPortChange;  // legacy firmware
  return mask_has(d.user_unaffiliated_events, event);
}

// Writes the capability page `cap_type` of the device into `page` (4096 bytes, zeroed by the
// caller). False if the simulated firmware has no such page.
inline bool encode_hca_cap(const ShmDevx& d, uint32_t num_ports, uint16_t cap_type, uint8_t* page) {
  if (cap_type == kCapGeneral) {
    prm_set(page, kCapEventCap, d.event_cap);
    prm_set(page, kCapPortModuleEvent, d.port_module_event);
    prm_set(page, kCapPortType, d.port_type);
    prm_set(page, kCapNumPorts, num_ports);
    prm_set(page, kCapTempWarnEvent, d.temp_warn_event);
    prm_set(page, kCapGeneralNotificationEvent, d.general_notification_event);
    prm_set(page, kCapLogMaxUctx, d.log_max_uctx);
    return true;
  }
  if (cap_type == kCapDeviceEvent && d.event_cap) {
    for (int w = 0; w < 4; ++w) {
      const uint64_t aff = htobe64(d.user_affiliated_events[w]);
      const uint64_t unaff = htobe64(d.user_unaffiliated_events[w]);
      std::memcpy(page + kUserAffiliatedEvents + 8 * w, &aff, 8);
      std::memcpy(page + kUserUnaffiliatedEvents + 8 * w, &unaff, 8);
    }
    return true;
  }
  return false;
}

}  // namespace rdmasim::devx
