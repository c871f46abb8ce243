// Records as text for people: the journal's MESSAGE (describe) and the pieces rdma-eventctl
// builds its lines from, in one place so that both say the same thing the same way. The
// journal's MESSAGE is matched by regular expressions (node-problem-detector, saved queries): its
// wording does not change. Pure: formats, never prints.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "rdma_eventd/record.h"

namespace rdma_eventd {

std::string_view port_state_display(PortState s);  // "ACTIVE", "DOWN", ...
std::string_view link_speed_display(LinkSpeed s);  // "HDR"
std::string_view gid_type_display(GidType t);      // "IB", "RoCE v1", "RoCE v2"

// How a port state reads in a sentence: port_state_display, or the caller's decoration of it
// (rdma-eventctl's colours).
using StateText = std::string (*)(PortState);
std::string plain_state_text(PortState s);

std::string gbps_text(double gbps);         // "200", "2.5"
std::string rate_text(const PortInfo& p);   // "200 Gb/s 4X HDR", or "unknown rate"
std::string gid_text(const GidEntry& g);    // "fe80::1 (RoCE v2, ens1f1) at index 3"
std::string pkey_text(const PkeyEntry& p);  // "0x8001 at index 1"
std::string duration_text(uint64_t ms);     // "850 ms", "12.5 s", "3 min 20 s"
// "port 1 ACTIVE 200 Gb/s 4X HDR, port 2 DOWN", or "no ports".
std::string last_known_text(const std::vector<PortInfo>& ports, StateText state = plain_state_text);

// A port-block field that differs between two views, as people read it: "lid", "7", "0".
struct FieldChange {
  std::string_view name;  // the wire name
  std::string before;
  std::string after;
  friend bool operator==(const FieldChange&, const FieldChange&) = default;
};
// Every field changed_fields() names, in wire order.
std::vector<FieldChange> field_changes(const PortInfo& before, const PortInfo& after);

// Records about a device as a whole (device_fatal, device_added, device_removed,
// device_renamed, device_recovered), whatever their "port" says.
bool is_device_record(EventKind kind);

// What happened, without saying to what: "link down (ACTIVE -> DOWN), was 200 Gb/s 4X HDR",
// "device removed, last known: port 1 ACTIVE 100 Gb/s 4X EDR".
std::string event_text(const Record& r, StateText state = plain_state_text);
// What it happened to: "mlx5_0 port 1" for a port record, else the device ("mlx5_0"); for a
// rename the old name (the event text names the new one).
std::string subject_text(const Record& r);
// The journal's MESSAGE: "mlx5_0 port 1: link down (ACTIVE -> DOWN), was 200 Gb/s 4X HDR".
std::string describe(const Record& r);
// Appends describe(r) to `s`: the journal writer writes it straight into its datagram.
void append_description(std::string& s, const Record& r);

}  // namespace rdma_eventd
