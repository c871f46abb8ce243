// The status reply's body, typed: what the daemon reports about itself (docs/protocol.md,
// "status"). Each block has one owner that fills it: the daemon its identity and the counters of
// its devices, hot-plug source and journal; the hub its ring and subscribers. The hub writes the
// reply; rdma-eventctl reads it back, every key required, so a renamed key is an error rather
// than a silent 0.
//
// Internal: the reply grows with the daemon, so it is no part of the client library's ABI;
// clients read it as JSON (Message::text()).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rdma_eventd/protocol.h"
#include "schema/json_writer.h"

namespace rdma_eventd {

struct StatusReply {
  struct Daemon {
    std::string version;
    int64_t protocol = kProtocolVersion;
    std::string stream;
    std::string host;
    int64_t pid = 0;
    int64_t started_us = 0;  // wall clock, written as RFC 3339
    uint64_t uptime_s = 0;   // measured on the monotonic clock
    friend bool operator==(const Daemon&, const Daemon&) = default;
  };
  struct Counters {
    uint64_t events_read = 0;
    uint64_t events_acked = 0;
    uint64_t records = 0;
    uint64_t batches = 0;  // device reads that produced records
    uint64_t query_failures = 0;
    uint64_t resyncs = 0;          // comparisons of the device list with the watched devices
    uint64_t devices_waiting = 0;  // listed but not openable yet: retried with backoff
    friend bool operator==(const Counters&, const Counters&) = default;
  };
  struct Hotplug {
    // What tells the daemon of hot-plug: "udev"; where udev does not run, "rdma_netlink" (the
    // kernel's RDMA netlink monitor, with periodic rescans) or "rescan" (those alone).
    std::string source = "rescan";
    uint64_t udev_events = 0;
    uint64_t udev_overflows = 0;  // the udev monitor lost events (each one led to a resync)
    // From daemons that know the RDMA netlink monitor; 0 from older ones.
    uint64_t netlink_events = 0;    // RDMA netlink monitor messages
    uint64_t netlink_overruns = 0;  // its socket lost events (each one led to a resync)
    // Whether the rescan runs: always where udev does not run and the kernel has no monitor;
    // beside the monitor, only while a device is open whose removal the kernel does not
    // announce, named in rescan_for. From older daemons: every source but udev, no names.
    bool rescanning = false;
    std::vector<std::string> rescan_for;
    friend bool operator==(const Hotplug&, const Hotplug&) = default;
  };
  struct Journal {
    bool enabled = false;
    uint64_t written = 0;
    uint64_t failed = 0;
    uint64_t dropped = 0;
    uint64_t queued = 0;
    uint64_t waits = 0;   // times device reading paused for the journal to catch up
    uint64_t stalls = 0;  // times journald stopped taking entries and was not waited for
    // The journal budget (journal.budget): on or off, the records it kept out of the journal,
    // and the summaries written in their place.
    bool budget = false;
    uint64_t not_journaled = 0;
    uint64_t summaries = 0;
    friend bool operator==(const Journal&, const Journal&) = default;
  };
  struct Ring {
    uint64_t capacity = 0;
    uint64_t records = 0;
    uint64_t first_seq = 0;
    uint64_t last_seq = 0;
    friend bool operator==(const Ring&, const Ring&) = default;
  };
  struct Subscriber {
    uint64_t id = 0;
    bool self = false;  // the connection that asked
    int64_t pid = 0;
    uint64_t uid = 0;
    int64_t connected_us = 0;
    uint64_t requests = 0;
    uint64_t rate_limited = 0;
    uint64_t records_sent = 0;
    uint64_t records_lost = 0;
    uint64_t lost_notices = 0;
    uint64_t bytes_queued = 0;
    uint64_t bytes_sent = 0;
    bool replaying = false;
    Filter filter;
    friend bool operator==(const Subscriber&, const Subscriber&) = default;
  };
  struct Subscribers {
    uint64_t count = 0;  // connected now
    uint64_t max = 0;
    uint64_t accepted = 0;
    uint64_t refused = 0;
    uint64_t refused_max_subscribers = 0;  // "refused_by": {"max_subscribers", ...}
    uint64_t refused_max_subscribers_per_user = 0;
    uint64_t refused_access = 0;
    uint64_t rate_limited = 0;
    uint64_t records_sent = 0;
    uint64_t records_lost = 0;
    uint64_t lost_notices = 0;
    uint64_t bytes_queued = 0;
    uint64_t request_errors = 0;
    uint64_t max_queued_bytes = 0;
    uint64_t max_request_bytes = 0;
    uint64_t max_subscribers_per_user = 0;
    uint64_t max_filters = 0;
    uint64_t max_requests_per_second = 0;
    std::vector<Subscriber> list;
    friend bool operator==(const Subscribers&, const Subscribers&) = default;
  };
  // Application reports (docs/protocol.md, "report"), written after "devices".
  struct Reports {
    uint64_t accepted = 0;      // published as app_report records
    uint64_t denied = 0;        // the peer is not in reports.allow_users / allow_groups
    uint64_t rate_limited = 0;  // over reports.max_per_second for the peer's uid
    uint64_t invalid = 0;       // malformed, or naming no watched device
    uint64_t max_per_second = 0;
    friend bool operator==(const Reports&, const Reports&) = default;
  };
  // A connection of the report socket (docs/protocol.md, "The report socket").
  struct Reporter {
    uint64_t id = 0;
    int64_t pid = 0;
    uint64_t uid = 0;
    int64_t connected_us = 0;
    uint64_t requests = 0;
    uint64_t rate_limited = 0;
    uint64_t bytes_queued = 0;
    uint64_t bytes_sent = 0;  // the hello, replies and errors: a reporter gets no records
    friend bool operator==(const Reporter&, const Reporter&) = default;
  };
  // The report socket's connections, written after "event_counts".
  struct Reporters {
    std::string socket;         // its path; "" when the daemon has none
    uint64_t count = 0;         // connected now
    uint64_t max = 0;           // reports.max_reporters
    uint64_t max_per_user = 0;  // reports.max_reporters_per_user
    uint64_t accepted = 0;
    uint64_t refused = 0;
    uint64_t refused_max_reporters = 0;  // "refused_by": {"max_reporters", ...}
    uint64_t refused_max_reporters_per_user = 0;
    uint64_t refused_access = 0;
    uint64_t rate_limited = 0;    // requests over socket.max_requests_per_second
    uint64_t request_errors = 0;  // error lines sent for requests
    std::vector<Reporter> list;
    friend bool operator==(const Reporters&, const Reporters&) = default;
  };
  struct Port {
    PortInfo info;  // info.port is the port number
    uint64_t gids = 0;
    uint64_t pkeys = 0;
    friend bool operator==(const Port&, const Port&) = default;
  };
  // DEVX vendor events of the device (docs/operations.md, "DEVX status").
  struct Devx {
    std::string state;   // active, not_mlx5, refused, no_event_cap, no_events, failed, closed
    std::string events;  // the events subscribed, by name, comma-separated ("" when none)
    std::string reason;  // why DEVX is not active ("" when it is)
    uint64_t events_read = 0;
    uint64_t events_lost = 0;  // EOVERFLOW reads (each one is at least one event lost)
    friend bool operator==(const Devx&, const Devx&) = default;
  };
  struct Device {
    std::string device;
    std::string node_guid;
    std::vector<Port> ports;
    Devx devx;
    friend bool operator==(const Device&, const Device&) = default;
  };
  // Records published, counted by device, port and event (docs/protocol.md, "event_counts"),
  // written after "reports". Port 0: records about a whole device (device_fatal, ...). Events
  // are named as records name them, so a kind added to the schema is counted with no change
  // here; only kinds counted at least once are listed.
  struct EventCount {
    std::string device;
    uint32_t port = 0;
    std::vector<std::pair<std::string, uint64_t>> events;  // by name
    uint64_t down_transitions = 0;  // the port's state left active (or active_defer)
    friend bool operator==(const EventCount&, const EventCount&) = default;
  };
  struct EventCounts {
    std::vector<EventCount> ports;  // by device name, then port
    uint64_t untracked = 0;         // records not counted: the table of ports was full
    friend bool operator==(const EventCounts&, const EventCounts&) = default;
  };

  // Link quality from the ports' error counters (docs/health.md, "Link quality"), written
  // after "reporters"; a reply without it (an older daemon) reads as counter health off.
  struct LinkPort {
    std::string device;
    uint32_t port = 0;
    bool bad = false;
    std::string faults;  // "bit_errors,link_recoveries"; "" when clean
    // symbol_error growth per bit over the longest window; none where it is not known (null).
    std::optional<double> ber_estimate;
    std::string pegged;  // counters at their maximum, comma-separated
    std::vector<std::pair<std::string, uint64_t>> counters;  // the last values read, by name
    // "clean" (read and judged clean), "bad", or "unknown" (not judged: `unknown` says why);
    // "" from daemons that did not say.
    std::string quality;
    std::string unknown;   // "baseline", "link_down", "pegged", "rate_unknown", ...
    int64_t since_us = 0;  // the quality since when (wall clock)
    friend bool operator==(const LinkPort&, const LinkPort&) = default;
  };
  struct LinkHealth {
    bool enabled = false;
    uint64_t interval_s = 0;
    uint64_t samples = 0;
    uint64_t counter_reads = 0;
    uint64_t read_failures = 0;  // devices given up on until they are opened again
    // Reads that failed in a way that may pass, each retried after a backoff; 0 from daemons
    // that gave up on those too.
    uint64_t read_retries = 0;
    // Reads of a device's counters that had not returned by their deadline, and those still
    // out now (each device waits for its own: docs/health.md).
    uint64_t reads_hung = 0;
    uint64_t reads_in_flight = 0;
    std::vector<LinkPort> ports;
    friend bool operator==(const LinkHealth&, const LinkHealth&) = default;
  };
  // devlink health (docs/health.md, "devlink health"): the reporters the daemon follows.
  struct DevlinkReporter {
    std::string handle;  // "pci/0000:08:00.0"
    int64_t port_index = -1;
    std::string reporter;
    std::string state;  // "healthy", "error", "unknown"
    uint64_t error_count = 0;
    uint64_t recover_count = 0;
    int64_t since_us = 0;            // its last change the daemon saw (or its first reading)
    std::vector<std::string> ports;  // "mlx5_0" (the device) or "rxe0/1"; empty: none
    friend bool operator==(const DevlinkReporter&, const DevlinkReporter&) = default;
  };
  // A devlink port and the netdev it carries, as the kernel said (a port reporter's port).
  struct DevlinkPort {
    std::string handle;  // "auxiliary/mlx5_core.eth.0"
    int64_t index = 0;   // 65535
    std::string netdev;  // "" for none
    friend bool operator==(const DevlinkPort&, const DevlinkPort&) = default;
  };
  struct Devlink {
    bool enabled = false;
    bool available = false;
    std::string unavailable;  // why not, when enabled and not available
    uint64_t notifications = 0;
    uint64_t dumps = 0;
    uint64_t overruns = 0;
    uint64_t malformed = 0;
    uint64_t records = 0;
    std::vector<DevlinkReporter> reporters;
    std::vector<DevlinkPort> devlink_ports;
    friend bool operator==(const Devlink&, const Devlink&) = default;
  };

  Daemon daemon;
  Counters counters;
  Hotplug hotplug;
  Journal journal;
  Ring ring;
  Subscribers subscribers;
  std::vector<Device> devices;
  Reports reports;
  EventCounts event_counts;
  Reporters reporters;
  LinkHealth link_health;
  Devlink devlink;
  friend bool operator==(const StatusReply&, const StatusReply&) = default;
};

// Writes the blocks ("daemon" ... "reporters") into the reply object being written, in the
// documented order.
void write_status(JsonWriter& w, const StatusReply& status);

// Reads the blocks of a status reply line. nullopt, and *error naming the key ("counters.records:
// missing"), when one is missing or of the wrong type.
std::optional<StatusReply> status_from_json(std::string_view reply_line, std::string* error);

}  // namespace rdma_eventd
