#include "core/port_health_types.h"

#include "rdma_eventd/internal/enum_names.h"

namespace rdma_eventd::daemon {
namespace {

// In enum order. Never change one: they are on the wire and in people's alert rules.
constexpr std::array<std::string_view, kPortHealthCount> kHealthNames = {
    "healthy", "degraded", "down", "flapping", "gone", "fatal"};

constexpr std::string_view kReasonNames[] = {
    "never_up",
    "link_down",
    "flaps_in_window",
    "rate_below_expected",
    "rate_below_last_healthy",
    "application_errors",
    "module_errors",
    "device_fatal",
    "device_removed",
    "device_missing",
    "first_seen",
    "link_up",
    "quiet_period_elapsed",
    "rate_restored",
    "device_recovered",
    "device_added",
    "config_changed",
    "bit_errors",
    "link_recoveries",
    "transport_errors",
    "clean_period_elapsed",
    "firmware_errors",
    "queue_errors",
    "devlink_recovered",
    "devlink_reporter_gone",
    "recovery_refused",
};
static_assert(std::size(kReasonNames) == static_cast<size_t>(HealthReason::kRecoveryRefused) + 1);

constexpr std::string_view kDevlinkRoleNames[] = {"none", "fatal", "firmware", "queue"};

}  // namespace

std::string_view health_name(PortHealth h) {
  return kHealthNames[static_cast<size_t>(h)];
}

std::optional<PortHealth> health_from_name(std::string_view name) {
  return internal::enum_from_name<PortHealth>(kHealthNames, name);
}

std::string_view reason_name(HealthReason r) {
  return kReasonNames[static_cast<size_t>(r)];
}

std::optional<HealthReason> reason_from_name(std::string_view name) {
  return internal::enum_from_name<HealthReason>(kReasonNames, name);
}

HealthReason error_reason(ErrorSource s) {
  // In ErrorSource's order.
  static constexpr std::array<HealthReason, kErrorSourceCount> kReasons = {
      HealthReason::kApplicationErrors, HealthReason::kModuleErrors, HealthReason::kFirmwareErrors,
      HealthReason::kQueueErrors};
  return internal::enum_name(kReasons, s, HealthReason::kQueueErrors);
}

std::string_view devlink_role_name(DevlinkRole r) {
  return kDevlinkRoleNames[static_cast<size_t>(r)];
}

std::optional<DevlinkRole> devlink_role_from_name(std::string_view name) {
  return internal::enum_from_name<DevlinkRole>(kDevlinkRoleNames, name);
}

bool known_guid(std::string_view guid) {
  return guid.find_first_not_of("0:") != std::string_view::npos;
}

}  // namespace rdma_eventd::daemon
