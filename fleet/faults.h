// The records that say something went wrong (faults), and what each is evidence of: the first
// step of `rdma-eventctl history --incidents`. Pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rdma_eventd_fleet {

// What the grouping needs of one journal entry (its RDMA_* fields, _HOSTNAME and its time). The
// strings are any bytes the uploading host sent.
struct FaultInput {
  int64_t time_us = 0;     // __REALTIME_TIMESTAMP
  std::string_view host;   // _HOSTNAME
  std::string_view event;  // RDMA_EVENT
  std::string_view device;
  uint32_t port = 0;
  std::string_view health;  // RDMA_HEALTH (port_health)
  // RDMA_LINK_CHANGE (link_quality), RDMA_DEVLINK_CHANGE (devlink_health)
  std::string_view link_change;
  std::string_view stream;
  uint64_t seq = 0;  // 0: none (never a copy)
};

// Whether a record is a fault: port_err, port_health with a verdict other than healthy,
// link_quality with change bad or hidden_down (a link that loses bits or retrains, downs too
// brief for an event; not clean, pegged or reset), device_fatal, device_removed, sm_change,
// lid_change, client_reregister, module_error, module_disabled, app_report.
bool is_fault(std::string_view event, std::string_view health, std::string_view link_change);

// The journal's RDMA_EVENT values a fault can have (for a journal match).
const std::vector<std::string_view>& fault_events();

// The port number of an entry's RDMA_PORT: its decimal digits, or 0 (device-wide) for anything
// else or beyond 32 bits.
uint32_t port_of(std::string_view field);

// What a fault is about, each the subject of episodes of its own (incident_grouper.h).
enum class Subject : char {
  kPort = 'p',         // the port's link and verdicts: port_err, port_health, link_quality,
                       // module_*
  kDevice = 'd',       // the adapter as a whole: device_fatal, device_removed
  kSmNotice = 's',     // the subnet manager's view of a port: sm_change, lid_change,
                       // client_reregister (the port kept its link)
  kApplication = 'a',  // app_report: an application's claim, not the daemon's own sight
};
Subject subject_of(std::string_view event);

// A link lost: what makes a fabric incident when enough hosts have one at once. A link_quality
// hidden_down is not one: it is stamped when the counters were read (up to a minute after the
// down), so it cannot be set against other hosts' downs within a fabric window.
bool is_link_loss(std::string_view event);
// An SM, LID or re-registration notice.
bool is_sm_notice(std::string_view event);
// Whether the record names a port whose link or verdict it is about (not an SM notice, not a
// device-wide record, not an application's claim).
bool is_port_fault(std::string_view event, uint32_t port);

// The name an incident counts a fault under: the event, "port_health VERDICT" or
// "link_quality CHANGE".
std::string counted_name(std::string_view event, std::string_view health,
                         std::string_view link_change);

}  // namespace rdma_eventd_fleet
