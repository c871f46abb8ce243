#include "faults.h"

#include <algorithm>

#include "rdma_eventd/types.h"

namespace rdma_eventd_fleet {
namespace {

using rdma_eventd::EventKind;

// A record's RDMA_EVENT, from the records' one table of names (rdma_eventd/types.h).
std::string_view name(EventKind kind) {
  return rdma_eventd::event_name(kind);
}

}  // namespace

const std::vector<std::string_view>& fault_events() {
  static const std::vector<std::string_view> events = [] {
    std::vector<std::string_view> names;
    for (const EventKind kind :
         {EventKind::kPortErr, EventKind::kPortHealth, EventKind::kLinkQuality,
          EventKind::kDeviceFatal, EventKind::kDeviceRemoved, EventKind::kSmChange,
          EventKind::kLidChange, EventKind::kClientReregister, EventKind::kModuleError,
          EventKind::kModuleDisabled, EventKind::kAppReport, EventKind::kDevlinkHealth})
      names.push_back(name(kind));
    return names;
  }();
  return events;
}

bool is_fault(std::string_view event, std::string_view health, std::string_view link_change) {
  if (event == name(EventKind::kPortHealth)) return !health.empty() && health != "healthy";
  // clean, pegged (errors unknown from then on, not errors seen) and reset are not faults.
  if (event == name(EventKind::kLinkQuality))
    return link_change == "bad" || link_change == "hidden_down";
  // An adapter's reporter in error; a recovery is not a fault.
  if (event == name(EventKind::kDevlinkHealth)) {
    return link_change == "error" || link_change == "error_again" ||
           link_change == "found_in_error" || link_change == "recovery_refused";
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
  return event == name(EventKind::kPortErr);
}

bool is_sm_notice(std::string_view event) {
  return event == name(EventKind::kSmChange) || event == name(EventKind::kLidChange) ||
         event == name(EventKind::kClientReregister);
}

Subject subject_of(std::string_view event) {
  if (is_sm_notice(event)) return Subject::kSmNotice;
  if (event == name(EventKind::kDeviceFatal) || event == name(EventKind::kDeviceRemoved) ||
      event == name(EventKind::kDevlinkHealth))
    return Subject::kDevice;
  if (event == name(EventKind::kAppReport)) return Subject::kApplication;
  return Subject::kPort;
}

bool is_port_fault(std::string_view event, uint32_t port) {
  return port != 0 && subject_of(event) == Subject::kPort;
}

std::string counted_name(std::string_view event, std::string_view health,
                         std::string_view link_change) {
  if (event == name(EventKind::kPortHealth))
    return std::string(name(EventKind::kPortHealth)) + " " + std::string(health);
  if (event == name(EventKind::kLinkQuality) || event == name(EventKind::kDevlinkHealth))
    return std::string(event) + " " + std::string(link_change);
  return std::string(event);
}

}  // namespace rdma_eventd_fleet
