// The daemon's configuration: a JSON file (config/rdma-eventd.json is the documented default,
// docs/configuration.md lists every key). Parsing is pure and strict: an unknown key, a wrong
// type or a bad value is an error that names the file, the key and the reason.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/devlink_config.h"
#include "core/journal_budget.h"
#include "core/link_quality.h"
#include "core/port_health_types.h"
#include "core/stamper.h"
#include "rdma_eventd/protocol.h"

namespace rdma_eventd::daemon {

// Which devices the daemon opens. The patterns are the protocol's device patterns (a subscribe
// filter's "devices"): a node GUID when written as "248a:0703:00a1:b2c0" or
// "0x248a070300a1b2c0", otherwise a shell glob on the device name.
class DeviceFilter {
 public:
  DeviceFilter();  // every device
  DeviceFilter(std::vector<DevicePattern> include, std::vector<DevicePattern> exclude)
      : include_(std::move(include)), exclude_(std::move(exclude)) {}

  // Included by some include pattern (an empty include list includes everything) and by no
  // exclude pattern.
  bool selects(std::string_view name, uint64_t node_guid) const;

  const std::vector<DevicePattern>& include() const { return include_; }
  const std::vector<DevicePattern>& exclude() const { return exclude_; }
  friend bool operator==(const DeviceFilter&, const DeviceFilter&) = default;

 private:
  std::vector<DevicePattern> include_;
  std::vector<DevicePattern> exclude_;
};

// The subscriber socket (docs/protocol.md) and the limits on what its clients can grow.
struct SocketConfig {
  bool enabled = true;
  std::string path = "/run/rdma-eventd/events.sock";
  uint32_t mode = 0660;
  std::string group;  // "" keeps the daemon's own group
  uint32_t max_subscribers = 1024;
  uint64_t max_queued_bytes = 1 << 20;  // per subscriber
  uint32_t max_request_bytes = 4096;
  uint32_t ring_records = 4096;  // records kept for "since"; 0 keeps none
  // Who may connect, beyond the socket file's mode and group: both empty lets in anyone who can
  // open the socket; otherwise root, the listed users and members of the listed groups.
  // Names are resolved when the file is read.
  std::vector<uint32_t> allow_users;        // uids
  std::vector<uint32_t> allow_groups;       // gids
  uint32_t max_subscribers_per_user = 128;  // connections one non-root uid may hold at once
  uint32_t max_filters = 256;               // entries of one subscribe's filter lists
  uint32_t max_requests_per_second = 100;   // per connection; also the burst

  friend bool operator==(const SocketConfig&, const SocketConfig&) = default;
};

// Who may report application events (the "report" request, docs/security.md), how often, and
// how many connections the report socket holds (docs/protocol.md, "The report socket").
struct ReportsConfig {
  // Both empty: whoever may connect to the socket. Otherwise root, the listed users and
  // members of the listed groups. Names are resolved when the file is read.
  std::vector<uint32_t> allow_users;   // uids
  std::vector<uint32_t> allow_groups;  // gids
  uint32_t max_per_second = 10;        // per uid, over all its connections; also the burst
  // Reporters are not subscribers: they have limits of their own, larger, since a job may
  // open one per rank, and a reporter costs the daemon no work per record.
  uint32_t max_reporters = 4096;
  uint32_t max_reporters_per_user = 1024;  // connections one non-root uid may hold at once
  friend bool operator==(const ReportsConfig&, const ReportsConfig&) = default;
};

struct Config {
  std::string log_level = "info";  // trace, debug, info, warning, error, critical, off
  DeviceFilter devices;
  SeverityMap severities = default_severities();
  bool journal_enabled = true;
  std::string journal_identifier = "rdma-eventd";
  SocketConfig socket;
  HealthConfig health;                 // "health" (docs/health.md)
  JournalBudgetConfig journal_budget;  // "journal.budget"
  ReportsConfig reports;               // "reports"
  LinkQualityConfig link_health;       // "link_health" (docs/health.md, "Link quality")
  DevlinkConfig devlink_health;        // "devlink_health" (docs/health.md, "devlink health")

  friend bool operator==(const Config&, const Config&) = default;
};

struct ConfigError {
  std::string file;
  std::string key;  // "devices.include[1]", or "" for the file as a whole
  std::string reason;

  // "FILE: KEY: REASON", the one line the daemon prints before exiting 78.
  std::string message() const;
};

using ConfigResult = std::variant<Config, ConfigError>;

// `file` only labels errors.
ConfigResult parse_config(std::string_view text, std::string_view file);
ConfigResult load_config(const std::string& path);

inline constexpr int kExitConfig = 78;  // EX_CONFIG, sysexits.h

}  // namespace rdma_eventd::daemon
