#include "rdma_eventd/types.h"

#include <array>
#include <string>
#include <string_view>

#include "rdma_eventd/internal/enum_names.h"
#include "schema/raw_values.h"
#include "schema/record_text.h"

namespace rdma_eventd {
namespace {

using internal::enum_from_name;

constexpr std::array<std::string_view, kEventKindCount> kEventNames = {
    "port_active",
    "port_err",
    "lid_change",
    "pkey_change",
    "sm_change",
    "client_reregister",
    "gid_change",
    "device_fatal",
    "unknown",
    "device_added",
    "device_removed",
    "device_renamed",
    "device_recovered",
    "port_state",
    "app_report",
    "port_health",
    "module_plugged",
    "module_unplugged",
    "module_disabled",
    "module_error",
    "temperature_warning",
    "pci_power_change",
    "firmware_event",
    "vendor_event",
    "vendor_events_lost",
    "link_quality",
    "device_speed_change",
    "devlink_health",
    "devlink_events_lost",
};

constexpr std::array<std::string_view, 6> kSeverityNames = {"debug",   "info",  "notice",
                                                            "warning", "error", "critical"};

constexpr std::array<std::string_view, 7> kPortStateNames = {
    "nop", "down", "init", "armed", "active", "active_defer", "unknown"};
constexpr std::array<std::string_view, 7> kPortStateDisplay = {
    "NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER", "UNKNOWN"};

constexpr std::array<std::string_view, 8> kPhysStateNames = {
    "unknown", "sleep", "polling", "disabled", "training", "link_up", "link_error_recovery",
    "phy_test"};

constexpr std::array<std::string_view, 3> kLinkLayerNames = {"unspecified", "infiniband",
                                                             "ethernet"};

constexpr std::array<std::string_view, 10> kSpeedNames = {"unknown", "sdr", "ddr", "qdr", "fdr10",
                                                          "fdr",     "edr", "hdr", "ndr", "xdr"};
constexpr std::array<std::string_view, 10> kSpeedDisplay = {"unknown", "SDR", "DDR", "QDR", "FDR10",
                                                            "FDR",     "EDR", "HDR", "NDR", "XDR"};
constexpr std::array<double, 10> kLaneGbps = {0, 2.5, 5, 10, 10, 14, 25, 50, 100, 200};

constexpr std::array<std::string_view, 4> kGidTypeNames = {"ib", "roce_v1", "roce_v2", "unknown"};
constexpr std::array<std::string_view, 4> kGidTypeDisplay = {"IB", "RoCE v1", "RoCE v2", "unknown"};

}  // namespace

std::string_view event_name(EventKind kind) {
  return kEventNames[static_cast<size_t>(kind)];
}
std::optional<EventKind> event_from_name(std::string_view name) {
  return enum_from_name<EventKind>(kEventNames, name);
}

std::string_view severity_name(Severity s) {
  return kSeverityNames[static_cast<size_t>(s)];
}
std::optional<Severity> severity_from_name(std::string_view name) {
  return enum_from_name<Severity>(kSeverityNames, name);
}
int syslog_priority(Severity s) {
  switch (s) {
    case Severity::kDebug:
      return 7;
    case Severity::kInfo:
      return 6;
    case Severity::kNotice:
      return 5;
    case Severity::kWarning:
      return 4;
    case Severity::kError:
      return 3;
    case Severity::kCritical:
      return 2;
  }
  return 6;
}

PortState port_state_from_raw(uint32_t raw) {
  return raw <= 5 ? static_cast<PortState>(raw) : PortState::kUnknown;
}
std::string_view port_state_name(PortState s) {
  return kPortStateNames[static_cast<size_t>(s)];
}
std::string_view port_state_display(PortState s) {
  return kPortStateDisplay[static_cast<size_t>(s)];
}
std::optional<PortState> port_state_from_name(std::string_view name) {
  return enum_from_name<PortState>(kPortStateNames, name);
}

PhysState phys_state_from_raw(uint32_t raw) {
  return raw >= 1 && raw <= 7 ? static_cast<PhysState>(raw) : PhysState::kUnknown;
}
std::string_view phys_state_name(PhysState s) {
  return kPhysStateNames[static_cast<size_t>(s)];
}
std::optional<PhysState> phys_state_from_name(std::string_view name) {
  return enum_from_name<PhysState>(kPhysStateNames, name);
}

LinkLayer link_layer_from_raw(uint32_t raw) {
  return raw <= 2 ? static_cast<LinkLayer>(raw) : LinkLayer::kUnspecified;
}
std::string_view link_layer_name(LinkLayer l) {
  return kLinkLayerNames[static_cast<size_t>(l)];
}
std::optional<LinkLayer> link_layer_from_name(std::string_view name) {
  return enum_from_name<LinkLayer>(kLinkLayerNames, name);
}

LinkSpeed link_speed_from_raw(uint32_t raw) {
  switch (raw) {
    case 1:
      return LinkSpeed::kSdr;
    case 2:
      return LinkSpeed::kDdr;
    case 4:
      return LinkSpeed::kQdr;
    case 8:
      return LinkSpeed::kFdr10;
    case 16:
      return LinkSpeed::kFdr;
    case 32:
      return LinkSpeed::kEdr;
    case 64:
      return LinkSpeed::kHdr;
    case 128:
      return LinkSpeed::kNdr;
    case 256:  // never in the 8-bit active_speed: from active_speed_ex or sysfs `rate`
      return LinkSpeed::kXdr;
    default:
      return LinkSpeed::kUnknown;
  }
}
std::string_view link_speed_name(LinkSpeed s) {
  return kSpeedNames[static_cast<size_t>(s)];
}
std::string_view link_speed_display(LinkSpeed s) {
  return kSpeedDisplay[static_cast<size_t>(s)];
}
std::optional<LinkSpeed> link_speed_from_name(std::string_view name) {
  return enum_from_name<LinkSpeed>(kSpeedNames, name);
}
double lane_gbps(LinkSpeed s) {
  return kLaneGbps[static_cast<size_t>(s)];
}

uint32_t lanes_from_raw_width(uint32_t raw) {
  switch (raw) {
    case 1:
      return 1;
    case 2:
      return 4;
    case 4:
      return 8;
    case 8:
      return 12;
    case 16:
      return 2;
    default:
      return 0;
  }
}
std::optional<uint32_t> lanes_from_name(std::string_view name) {
  if (name == "unknown") return 0u;
  for (uint32_t lanes : {1u, 2u, 4u, 8u, 12u}) {
    if (name == std::to_string(lanes) + "x") return lanes;
  }
  return std::nullopt;
}

uint32_t mtu_bytes_from_raw(uint32_t raw) {
  return raw >= 1 && raw <= 5 ? 128u << raw : 0;
}

GidType gid_type_from_raw(uint32_t raw) {
  return raw <= 2 ? static_cast<GidType>(raw) : GidType::kUnknown;
}
std::string_view gid_type_name(GidType t) {
  return kGidTypeNames[static_cast<size_t>(t)];
}
std::string_view gid_type_display(GidType t) {
  return kGidTypeDisplay[static_cast<size_t>(t)];
}
std::optional<GidType> gid_type_from_name(std::string_view name) {
  return enum_from_name<GidType>(kGidTypeNames, name);
}

}  // namespace rdma_eventd
