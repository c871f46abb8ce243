#include "faults.h"

#include <algorithm>

namespace rdma_eventd_fleet {
namespace {

constexpr std::string_view kPortErr = "port_err";
constexpr std::string_view kPortHealth = "port_health";
constexpr std::string_view kLinkQuality = "link_quality";
constexpr std::string_view kDeviceFatal = "device_fatal";
constexpr std::string_view kDeviceRemoved = "device_removed";
constexpr std::string_view kSmChange = "sm_change";
constexpr std::string_view kLidChange = "lid_change";
constexpr std::string_view kClientReregister = "client_reregister";
constexpr std::string_view kModuleError = "module_error";
constexpr std::string_view kModuleDisabled = "module_disabled";
constexpr std::string_view kAppReport = "app_report";
constexpr std::string_view kDevlinkHealth = "devlink_health";

}  // namespace

const std::vector<std::string_view>& fault_events() {
  static const std::vector<std::string_view> events = {
      kPortErr,   kPortHealth,       kLinkQuality, kDeviceFatal,    kDeviceRemoved, kSmChange,
      kLidChange, kClientReregister, kModuleError, kModuleDisabled, kAppReport,     kDevlinkHealth};
  return events;
}

bool is_fault(std::string_view event, std::string_view health, std::string_view link_change) {
  if (event == kPortHealth) return !health.empty() && health != "healthy";
  // clean, pegged (errors unknown from then on, not errors seen) and reset are not faults.
  if (event == kLinkQuality) return link_change == "bad" || link_change == "hidden_down";
  // An adapter's reporter in error; a recovery is not a fault.
  if (event == kDevlinkHealth) {
    return link_change == "error" || link_change == "error_again" ||
           link_change == "found_in_error";
  }
  const auto& events = fault_events();
  return std::find(events.begin(), events.end(), event) != events.end();
}

uint32_t port_of(std::string_view field) {
  if (field.empty() || field.size() > 10) return 0;
  uint64_t n = 0;
  for (const char c : field) {
    if (c < '0' || c > '9') return 0;
    n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  return n <= UINT32_MAX ? static_cast<uint32_t>(n) : 0;
}

bool is_link_loss(std::string_view event) {
  return event == kPortErr;
}

bool is_sm_notice(std::string_view event) {
  return event == kSmChange || event == kLidChange || event == kClientReregister;
}

Subject subject_of(std::string_view event) {
  if (is_sm_notice(event)) return Subject::kSmNotice;
  if (event == kDeviceFatal || event == kDeviceRemoved || event == kDevlinkHealth)
    return Subject::kDevice;
  if (event == kAppReport) return Subject::kApplication;
  return Subject::kPort;
}

bool is_port_fault(std::string_view event, uint32_t port) {
  return port != 0 && subject_of(event) == Subject::kPort;
}

std::string counted_name(std::string_view event, std::string_view health,
                         std::string_view link_change) {
  if (event == kPortHealth) return std::string(kPortHealth) + " " + std::string(health);
  if (event == kLinkQuality || event == kDevlinkHealth)
    return std::string(event) + " " + std::string(link_change);
  return std::string(event);
}

}  // namespace rdma_eventd_fleet
