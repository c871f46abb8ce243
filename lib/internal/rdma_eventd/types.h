// Enumerations of the record schema, with their stable wire names.
//
// These mirror rdma-core's numbering (ibv_port_state, phys_state, link_layer, active_speed,
// active_width, ibv_gid_type) but live here, free of libibverbs, so clients that only read
// records never need RDMA headers. Wire names are lowercase identifiers and never change;
// a value the schema does not know is carried as "unknown", never dropped. Each enumeration
// only grows at its end, so a value keeps its number across versions of this library. (The
// daemon's decoding of rdma-core's raw numbers is not part of this API.)
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace rdma_eventd {

// Record kinds. Verbs async events first, then records the daemon makes itself about the
// devices' life: hot-plug, renames, recovery after a fatal error, and the port states it found
// when it (re)opened a device; then an affiliated event an application reported (app_report),
// the daemon's port health verdicts, the vendor events of mlx5 devices (DEVX), what a port's
// error counters say, and one more verbs async event that came later (device_speed_change).
enum class EventKind : uint8_t {
  kPortActive,
  kPortErr,
  kLidChange,
  kPkeyChange,
  kSmChange,
  kClientReregister,
  kGidChange,
  kDeviceFatal,
  kUnknown,
  kDeviceAdded,
  kDeviceRemoved,
  kDeviceRenamed,
  kDeviceRecovered,
  kPortState,
  kAppReport,
  kPortHealth,  // the daemon's verdict on a port changed (docs/health.md)
  // mlx5 vendor events read from a DEVX event channel (docs/records.md, "Vendor events").
  kModulePlugged,
  kModuleUnplugged,
  kModuleDisabled,
  kModuleError,
  kTemperatureWarning,
  kPciPowerChange,
  kFirmwareEvent,
  kVendorEvent,
  kVendorEventsLost,
  kLinkQuality,  // what a port's error counters say (docs/records.md, "link_quality")
  // DEVICE_SPEED_CHANGE (20, Linux 7.0): a device event, its ports re-read after it.
  kDeviceSpeedChange,
  // An adapter's devlink health reporter reported an error or recovered (docs/records.md,
  // "devlink_health"), and the devlink notifications lost to an overrun.
  kDevlinkHealth,
  kDevlinkEventsLost,
};
std::string_view event_name(EventKind kind);
std::optional<EventKind> event_from_name(std::string_view name);
inline constexpr int kEventKindCount = static_cast<int>(EventKind::kDevlinkEventsLost) + 1;

// Syslog-style severities; PRIORITY= in the journal is syslog_priority().
enum class Severity : uint8_t { kDebug, kInfo, kNotice, kWarning, kError, kCritical };
std::string_view severity_name(Severity s);
std::optional<Severity> severity_from_name(std::string_view name);
int syslog_priority(Severity s);

// ibv_port_state: 0 NOP .. 5 ACTIVE_DEFER.
enum class PortState : uint8_t { kNop, kDown, kInit, kArmed, kActive, kActiveDefer, kUnknown };
std::string_view port_state_name(PortState s);  // "down", "active", ...
std::optional<PortState> port_state_from_name(std::string_view name);

// IB PortInfo PhysicalPortState: 1 Sleep .. 7 PhyTest; 0 is "no state change" and reads as unknown.
enum class PhysState : uint8_t {
  kUnknown,
  kSleep,
  kPolling,
  kDisabled,
  kTraining,
  kLinkUp,
  kLinkErrorRecovery,
  kPhyTest,
};
std::string_view phys_state_name(PhysState s);
std::optional<PhysState> phys_state_from_name(std::string_view name);

enum class LinkLayer : uint8_t { kUnspecified, kInfiniband, kEthernet };
std::string_view link_layer_name(LinkLayer l);
std::optional<LinkLayer> link_layer_from_name(std::string_view name);

// Per-lane signalling rate: the kernel's ib_port_speed (include/rdma/ib_verbs.h), SDR (1) to XDR
// (256). XDR does not fit ibv_port_attr's 8-bit active_speed, where the kernel leaves 0 for it:
// the daemon finds it in sysfs `rate` (docs/health.md, "The port's rate").
enum class LinkSpeed : uint8_t { kUnknown, kSdr, kDdr, kQdr, kFdr10, kFdr, kEdr, kHdr, kNdr, kXdr };
std::string_view link_speed_name(LinkSpeed s);  // "hdr"
std::optional<LinkSpeed> link_speed_from_name(std::string_view name);
double lane_gbps(LinkSpeed s);  // 2.5 for SDR ... 100 for NDR, 200 for XDR; 0 when unknown

// The active width as a lane count: "4x" -> 4, "unknown" -> 0.
std::optional<uint32_t> lanes_from_name(std::string_view name);

enum class GidType : uint8_t { kIb, kRoceV1, kRoceV2, kUnknown };
std::string_view gid_type_name(GidType t);  // "ib", "roce_v1", "roce_v2"
std::optional<GidType> gid_type_from_name(std::string_view name);

}  // namespace rdma_eventd
