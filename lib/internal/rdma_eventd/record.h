// Record schema v1: one JSON object per event, shared by the daemon and every client.
//
// A record always has the common keys (schema, seq, stream, time, host, event, event_type,
// severity, device, node_guid, port). Port-scoped records add the port block (link_layer,
// state, phys_state, lid, sm_lid, sm_sl, lmc, active_mtu, width, speed, rate_gbps) and
// "changes"; gid_change adds gids_added/gids_removed; pkey_change adds pkeys_added/pkeys_removed;
// device_fatal and device_removed add "ports", the last known state of every port;
// device_renamed adds "old_name"; device_recovered adds "down_since", "downtime_ms" and
// "fatal_seq"; app_report adds "reported_event", "object", "object_id", "detail" and
// "reporter". port_state is port-scoped. The vendor records (module_plugged ...
// vendor_event) add "vendor"; those about a module are port-scoped when its port is known.
// A key never changes type with its content: arrays stay arrays (possibly empty), objects stay
// objects. docs/records.md is the reference, with an example of every event.
//
// The structs here are the C++ form of schema v1 inside the project (the daemon, rdma-eventctl,
// the tests), linked statically: no part of librdma-eventd.so's ABI, so they may grow freely.
// Other programs read records through the C API (client.h) or its C++ wrapper (client.hpp).
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "rdma_eventd/types.h"

namespace rdma_eventd {

inline constexpr int kSchemaVersion = 1;

// The port block: a port's attributes as the daemon last queried them, decoded.
// The four one-byte fields together, so that the struct has no padding and two are compared as
// their bytes (a port block is compared with the last one rendered for every port record).
struct PortInfo {
  uint32_t port = 0;
  LinkLayer link_layer = LinkLayer::kUnspecified;
  PortState state = PortState::kUnknown;
  PhysState phys_state = PhysState::kUnknown;
  LinkSpeed speed = LinkSpeed::kUnknown;
  uint32_t lid = 0;
  uint32_t sm_lid = 0;
  uint32_t sm_sl = 0;
  uint32_t lmc = 0;
  uint32_t active_mtu = 0;  // bytes
  uint32_t lanes = 0;       // active width as a lane count

  double rate_gbps() const { return lanes * lane_gbps(speed); }
  friend bool operator==(const PortInfo& a, const PortInfo& b) {
    return std::memcmp(&a, &b, sizeof(PortInfo)) == 0;
  }
};
static_assert(std::has_unique_object_representations_v<PortInfo>,
              "PortInfo has padding: its == compares its bytes");

struct GidEntry {
  uint32_t index = 0;
  std::string gid;  // RFC 5952 text, e.g. "fe80::248a:703:a1:b2c0" or "::ffff:192.168.1.5"
  GidType type = GidType::kIb;
  std::string netdev;  // "" when the entry has no network device (InfiniBand)
  friend bool operator==(const GidEntry&, const GidEntry&) = default;
};

struct PkeyEntry {
  uint32_t index = 0;
  uint16_t pkey = 0;
  friend bool operator==(const PkeyEntry&, const PkeyEntry&) = default;
};

// app_report: who reported, as the kernel and /proc say (docs/records.md).
struct Reporter {
  int64_t pid = 0;
  int64_t uid = -1;
  int64_t gid = -1;
  std::string comm;    // /proc/PID/comm; "" when it could not be read
  std::string unit;    // the systemd unit of its cgroup ("job.service"); "" when none
  std::string cgroup;  // the cgroup v2 path from /proc/PID/cgroup; "" when unreadable
  friend bool operator==(const Reporter&, const Reporter&) = default;
};

// A vendor event as an mlx5 device's DEVX event channel delivered it (the records
// module_plugged ... vendor_event; docs/records.md, "Vendor events"): the event entry's type,
// subtype and data bytes, and what the daemon read from them.
struct VendorEvent {
  uint32_t type = 0;        // the event entry's type (0x16 PORT_MODULE_EVENT, 0x17, 0x22...)
  uint32_t subtype = 0;     // the entry's subtype byte (GENERAL_EVENT's kind)
  std::string data;         // the entry's 28 data bytes (bytes 32 to 59), lowercase hex
  uint32_t module = 0;      // module_*: the module (cage) number firmware gave
  std::string error_type;   // module_error: the error by name ("bad_cable"); "unknown" otherwise
  uint32_t error_code = 0;  // module_error: the error type number
  std::vector<uint32_t> sensors;  // temperature_warning: the sensors over threshold, ascending
  friend bool operator==(const VendorEvent&, const VendorEvent&) = default;
};

// link_quality: what a port's error counters say (docs/records.md): a verdict reached or
// cleared, a counter pegged or reset, downs too brief for an event.
struct LinkQualityEvent {
  // "bad", "clean", "pegged", "reset", "hidden_down"; "unknown" (its errors cannot be known:
  // `reason`) and "judged" (read again after "unknown")
  std::string change;
  std::string fault;      // "bit_errors", "link_recoveries", "transport_errors"; "" for the others
  std::string counter;    // "symbol_error", "hw_counters/link_downed", ...
  uint64_t value = 0;     // the counter as read
  uint64_t count = 0;     // bad: its growth within the window; hidden_down: the downs unseen
  uint64_t allowed = 0;   // bad: the growth the rule allows within the window
  uint32_t window_s = 0;  // bad: the rule's window
  double rate_gbps = 0;   // the port's rate the rule used
  double ber = 0;         // bad of bit_errors: the estimated bit error rate in the window
  std::vector<std::string> pegged;  // the port's counters at their maximum now
  // unknown: why ("read_failing", "unreadable", "read_hung"); judged: the reason it ends
  std::string reason;
  int64_t since_us = 0;  // unknown: since when (wall clock); 0 for the other changes
  friend bool operator==(const LinkQualityEvent&, const LinkQualityEvent&) = default;
};

// device_speed_change: one port's effective speed (docs/records.md, "device_speed_change"), as
// ibv_query_port_speed() (rdma-core 62) answers it: what a port in link aggregation or multi-port
// E-Switch really carries, which ibv_query_port does not say.
struct EffectiveSpeed {
  uint32_t port = 0;
  // In Gb/s (the call answers in 100 Mb/s); absent when not known, and `unknown` says why:
  // "not_in_libibverbs" (the installed libibverbs has no ibv_query_port_speed: rdma-core before
  // 62, Debian 12's 44), "not_supported" (the driver does not answer it), "query_failed".
  std::optional<double> gbps;
  std::string unknown;
  friend bool operator==(const EffectiveSpeed&, const EffectiveSpeed&) = default;
};

// devlink_health: a devlink health reporter's report or recovery, as the kernel's devlink
// family told it (docs/records.md, "devlink_health"), and what changed since the daemon last
// knew the reporter.
struct DevlinkHealthEvent {
  std::string handle;       // the devlink instance: "pci/0000:08:00.0", "auxiliary/mlx5_core.eth.0"
  int64_t port_index = -1;  // a port reporter's devlink port; -1 for a device's reporter
  std::string reporter;     // "fw", "fw_fatal", "tx", "rx", ...
  // "healthy", "error"; "removed" (gone with its instance); "unknown" for a state this version
  // does not know
  std::string state;
  std::string previous_state;  // "" when the daemon did not know the reporter before
  // "error", "error_again", "recovered", "found_in_error", "recovery_refused", "removed"
  // (docs/records.md)
  std::string change;
  uint64_t error_count = 0;  // the kernel's counts since the reporter was created
  uint64_t recover_count = 0;
  uint64_t new_errors = 0;      // error_count's growth since the daemon last knew it
  uint64_t new_recoveries = 0;  // recover_count's
  uint64_t grace_period_ms = 0;
  bool auto_recover = false;
  friend bool operator==(const DevlinkHealthEvent&, const DevlinkHealthEvent&) = default;
};

struct Record {
  uint64_t seq = 0;
  std::string stream;
  int64_t time_us = 0;  // microseconds since the Unix epoch, UTC
  std::string host;
  EventKind event = EventKind::kUnknown;
  int event_type = -1;  // the raw ibv_event_type number; -1 for the daemon's own records
  Severity severity = Severity::kInfo;
  std::string device;
  std::string node_guid;  // "248a:0703:00a1:b2c0", as sysfs and ibv_devinfo print it
  // The wire's "port", with two meanings (docs/records.md): for a port-scoped record (port_info
  // set) the port it is about; otherwise the async event's raw element as a number, such as
  // device_fatal's (0, or a value the driver chose), and 0 for affiliated events (QP, CQ, SRQ,
  // WQ: the element is a pointer) and for the daemon's own device records.
  uint32_t port = 0;

  // Port-scoped records: the port now, and as the daemon knew it before this record
  // ("changes" on the wire is the field-by-field difference between the two).
  std::optional<PortInfo> port_info;
  std::optional<PortInfo> previous;

  std::vector<GidEntry> gids_added;  // gid_change
  std::vector<GidEntry> gids_removed;
  std::vector<PkeyEntry> pkeys_added;  // pkey_change
  std::vector<PkeyEntry> pkeys_removed;
  std::vector<PortInfo> ports;  // device_fatal, device_removed: last known state of every port

  // device_speed_change: every port's effective speed, port 1 first ("effective_speed").
  std::vector<EffectiveSpeed> effective_speed;

  std::string old_name;       // device_renamed: the device's name before
  int64_t down_since_us = 0;  // device_recovered: the time of its device_fatal record
  uint64_t downtime_ms = 0;   // device_recovered: from that record to the reopening
  uint64_t fatal_seq = 0;     // device_recovered: the seq of that record (same stream)

  // app_report: event_type is the reported type and "port" the reported port (0: none).
  std::string object;      // "qp", "cq", "srq", "wq": the object the reported event is about
  int64_t object_id = -1;  // the number the reporter gave; -1 when it gave none
  std::string detail;      // the reporter's text ("" when none)
  Reporter reporter;
  // port_health: the port's verdict and why (docs/health.md). Names, not enums: the verdicts and
  // reasons are the daemon's vocabulary, and a client shows what it does not know as it is.
  std::string health;           // "healthy", "degraded", "down", "flapping", "gone", "fatal"
  std::string previous_health;  // "" for the first verdict the daemon has for the port
  std::string reason;           // "flaps_in_window", "quiet_period_elapsed", ...
  int64_t since_us = 0;         // when the port got this verdict
  uint32_t downs_in_window = 0;
  uint32_t errors_in_window = 0;  // of the error source the reason names; 0 for other reasons
  uint32_t window_s = 0;          // the flap window
  uint32_t quiet_s = 0;           // the quiet period that ends flapping
  uint64_t cause_seq = 0;         // the record that caused it; 0 when time or a reload did

  // Vendor events (DEVX): the "vendor" object; set for the records module_plugged ...
  // vendor_event, absent for the others (vendor_events_lost included).
  std::optional<VendorEvent> vendor;

  // link_quality: the "link" object; absent for the other records.
  std::optional<LinkQualityEvent> link;

  // devlink_health: the "devlink" object; absent for the other records. devlink_events_lost
  // has "handle" only (""), in that object's place: nothing (docs/records.md).
  std::optional<DevlinkHealthEvent> devlink;

  friend bool operator==(const Record&, const Record&) = default;
};

// Parses one record line (a line of the subscriber socket, the journal's RDMA_RECORD). Returns
// nullopt and sets *error (naming the key and the problem) when the text is not a valid v1
// record.
std::optional<Record> record_from_json(std::string_view text, std::string* error);

// "2026-11-22T10:15:30.123456Z"
std::string format_rfc3339_us(int64_t time_us);
std::optional<int64_t> parse_rfc3339_us(std::string_view text);

// 0x248a070300a1b2c0 (host order) → "248a:0703:00a1:b2c0"
std::string format_guid(uint64_t guid);
// Accepts exactly three forms, with hex digits in either case: "248a:0703:00a1:b2c0" (four
// groups of four digits), "0x248a070300a1b2c0" (0x or 0X, then 16 digits) and
// "248a070300a1b2c0" (16 digits). Nothing before, between or after.
std::optional<uint64_t> parse_guid(std::string_view text);

// "0x8001": 0x and four lowercase hex digits.
std::string format_pkey(uint16_t pkey);
// Accepts exactly "0x" and 1 to 4 hex digits in either case ("0x8001", "0xFFFF", "0x1"): no
// sign, no space, nothing after.
std::optional<uint16_t> parse_pkey(std::string_view text);

// A snapshot record: the state of one port as the daemon knows it, sent to a subscriber that
// asked for a snapshot (docs/protocol.md). On the wire it has the common keys of a record with
// "event": "snapshot", "event_type": -1 and "severity": "info", then the port block, an empty
// "changes", and the whole GID table ("gids") and the non-empty P_Key entries ("pkeys"). Its
// seq is not a new number: it is the seq of the last record published before the snapshot, so
// the state shown includes every record up to that seq and the live stream goes on at seq + 1.
struct PortSnapshot {
  uint64_t seq = 0;
  std::string stream;
  int64_t time_us = 0;
  std::string host;
  std::string device;
  std::string node_guid;
  PortInfo port;  // port.port is the port number
  std::vector<GidEntry> gids;
  std::vector<PkeyEntry> pkeys;
  friend bool operator==(const PortSnapshot&, const PortSnapshot&) = default;
};

inline constexpr std::string_view kSnapshotEvent = "snapshot";

std::optional<PortSnapshot> snapshot_from_json(std::string_view text, std::string* error);

// The names of the port-block fields that differ between two views, in wire order.
std::vector<std::string_view> changed_fields(const PortInfo& before, const PortInfo& after);

}  // namespace rdma_eventd
