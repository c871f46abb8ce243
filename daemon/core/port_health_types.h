// The vocabulary of port health (docs/health.md): the verdicts, the reasons, the thresholds,
// the state kept per port (which is also what survives a restart), and what the model tells
// its caller: transitions, the verdict of each port, the host's worst verdict.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/device_state.h"
#include "rdma_eventd/protocol.h"
#include "rdma_eventd/types.h"

namespace rdma_eventd::daemon {

// In order of badness: each is worse than the one before. The host's verdict is the worst of
// its ports'.
enum class PortHealth : uint8_t {
  kHealthy,   // link up at the rate expected of it, nothing counted against it
  kDegraded,  // link up, but slower than expected or than when it was last healthy, or errors
  kDown,      // link not up
  kFlapping,  // went down too often; healthy again only after a quiet period with the link up
  kGone,      // its device was removed (or is missing since the daemon restarted)
  kFatal,     // its device reported a fatal error and has not recovered
};
inline constexpr int kPortHealthCount = static_cast<int>(PortHealth::kFatal) + 1;
std::string_view health_name(PortHealth h);  // "healthy", "degraded", ...
std::optional<PortHealth> health_from_name(std::string_view name);

// Why a port has its verdict. Stable lowercase identifiers on the wire.
enum class HealthReason : uint8_t {
  // Why a port is not healthy.
  kNeverUp,               // down, and never seen up: not in service (not counted for the host)
  kLinkDown,              // down, after having been up (or expected up by configuration)
  kFlapsInWindow,         // flapping: flap_downs downs within flap_window_s
  kRateBelowExpected,     // degraded: below a configured expected width or speed
  kRateBelowLastHealthy,  // degraded: below the rate it had when it was last healthy
  kApplicationErrors,     // degraded: errors reported by applications over their threshold
  kModuleErrors,          // degraded: vendor module errors over their threshold
  kDeviceFatal,           // fatal
  kDeviceRemoved,         // gone: device_removed
  kDeviceMissing,         // gone: known before a restart, absent after it
  // Why a port became healthy.
  kFirstSeen,           // the first verdict the daemon has for the port
  kLinkUp,              // was down
  kQuietPeriodElapsed,  // was flapping, or degraded by errors, and stayed quiet long enough
  kRateRestored,        // was degraded by its rate
  kDeviceRecovered,     // was fatal
  kDeviceAdded,         // was gone
  kConfigChanged,       // a reload changed what is expected of it
  // Link quality from the error counters (core/link_quality.h); last, after the reasons above,
  // whose numbers never change.
  kBitErrors,           // degraded: symbol_error grew faster than its rate allows
  kLinkRecoveries,      // degraded: link_error_recovery grew over its threshold
  kTransportErrors,     // degraded: a transport counter (hw_counters/) over its rule
  kCleanPeriodElapsed,  // healthy: was degraded by its counters, none grew for the clean period
  // devlink health reporters (docs/health.md, "devlink health").
  kFirmwareErrors,    // degraded: a firmware reporter in error, or its errors over their threshold
  kQueueErrors,       // degraded: a queue reporter (tx, rx) in error, or over its threshold
  kDevlinkRecovered,  // healthy: was fatal or degraded by a reporter, which recovered
  kDevlinkReporterGone,  // healthy: was held by a reporter, gone with its devlink instance
  kRecoveryRefused,      // fatal: a fatal reporter's recovery was refused within its grace
                         // period (mlx5 then unloads the driver: the device is gone)
};
std::string_view reason_name(HealthReason r);  // "flaps_in_window", ...
std::optional<HealthReason> reason_from_name(std::string_view name);

// Errors counted against a port by something other than its link: applications reporting
// errors on their queue pairs, a vendor's module (cable, transceiver) events. Each source has
// its own reason and thresholds.
enum class ErrorSource : uint8_t { kApplication, kModule, kFirmware, kQueue };
inline constexpr size_t kErrorSourceCount = 4;

// What a devlink health reporter's errors mean for port health (health.devlink_reporters):
// fatal makes the device fatal until the reporter recovers (fw_fatal); firmware and queue
// count errors (ErrorSource) and hold the port degraded while the reporter stays in error;
// none records them only.
enum class DevlinkRole : uint8_t { kNone, kFatal, kFirmware, kQueue };
std::string_view devlink_role_name(DevlinkRole r);
std::optional<DevlinkRole> devlink_role_from_name(std::string_view name);
HealthReason error_reason(ErrorSource s);

struct ErrorThreshold {
  bool counted = true;     // false: errors of this source never make a port degraded
  uint32_t errors = 1;     // this many errors...
  uint32_t window_s = 60;  // ...within this window make the port degraded,
  uint32_t quiet_s = 600;  // until this long passes without another
  friend bool operator==(const ErrorThreshold&, const ErrorThreshold&) = default;
};

// What a port is expected to run at: ports of the devices `devices` matches (a name, a shell
// glob on the name, or a node GUID, as devices.include reads them) are degraded below it, and
// counted as down when they never came up.
struct PortExpectation {
  DevicePattern devices;
  std::vector<uint32_t> ports;            // empty: every port
  uint32_t lanes = 0;                     // 0: any width
  LinkSpeed speed = LinkSpeed::kUnknown;  // unknown: any speed
  friend bool operator==(const PortExpectation&, const PortExpectation&) = default;
};

// The thresholds (the configuration's "health" section; docs/health.md says why these
// defaults).
struct HealthConfig {
  // Whether the daemon feeds the model, publishes port_health records and keeps the state
  // file. Read at start only.
  bool enabled = true;
  uint32_t flap_downs = 3;
  uint32_t flap_window_s = 3600;
  uint32_t flap_quiet_s = 600;
  bool degraded_below_last_healthy = true;
  std::vector<PortExpectation> expected;  // the first that matches a port applies
  // health.expected_adapters: node GUIDs as records write them ("0c42:a103:00f6:5e44"), each an
  // adapter that must be there whether or not the inventory has it yet; sorted, unique.
  std::vector<std::string> expected_adapters;
  uint32_t forget_gone_after_s = 3600;
  // health.application_errors in the configuration; the module source (module_error records)
  // has no key yet.
  std::array<ErrorThreshold, kErrorSourceCount> errors = {
      ErrorThreshold{true, 10, 60, 600},    // application
      ErrorThreshold{true, 1, 3600, 3600},  // module
      ErrorThreshold{true, 1, 3600, 3600},  // firmware: health.firmware_errors
      ErrorThreshold{true, 3, 600, 600},    // queue: health.queue_errors
  };
  // health.devlink_reporters: by reporter name; a name not listed is kNone.
  std::map<std::string, DevlinkRole, std::less<>> devlink_roles = {
      {"fw_fatal", DevlinkRole::kFatal},
      {"fw", DevlinkRole::kFirmware},
      {"tx", DevlinkRole::kQueue},
      {"rx", DevlinkRole::kQueue}};
  friend bool operator==(const HealthConfig&, const HealthConfig&) = default;
};

inline constexpr uint32_t kMaxFlapDowns = 100;  // bounds the timestamps kept per port
// Bounds an error threshold, and so the error timestamps kept per port and source.
inline constexpr uint32_t kMaxErrorsCounted = 1000;

// A link's width and speed; its rate is their product.
struct LinkRate {
  uint32_t lanes = 0;
  LinkSpeed speed = LinkSpeed::kUnknown;
  double gbps() const { return lanes * lane_gbps(speed); }
  bool known() const { return gbps() > 0; }
  friend bool operator==(const LinkRate&, const LinkRate&) = default;
};

struct ErrorWindowState {
  std::vector<int64_t> times_mono_us;  // the newest ErrorThreshold::errors, oldest first
  bool over = false;                   // the threshold was reached; cleared after quiet_s
  int64_t quiet_since_mono_us = 0;     // the last error (or the restart: nothing was counted)
  friend bool operator==(const ErrorWindowState&, const ErrorWindowState&) = default;
};

// Everything the model knows of a port: also what a restart keeps (core/health_state_file).
struct PortHealthState {
  uint32_t port = 0;
  PortHealth health = PortHealth::kDown;
  HealthReason reason = HealthReason::kNeverUp;
  Instant since;  // when the port got its current verdict
  bool ever_up = false;
  bool link_up = false;
  LinkRate rate;                       // as last seen
  LinkRate last_healthy;               // the rate when it was last healthy with the link up
  std::vector<int64_t> downs_mono_us;  // the newest flap_downs downs, oldest first
  bool flapping = false;
  int64_t quiet_since_mono_us = 0;  // up without a down since then (while flapping)
  bool fatal = false;
  bool gone = false;
  HealthReason gone_reason = HealthReason::kDeviceRemoved;
  int64_t gone_since_mono_us = 0;
  std::array<ErrorWindowState, kErrorSourceCount> errors;
  // The link-quality faults its counters show now (a bit per LinkFault: bit errors, link
  // recoveries, transport errors), as core/link_quality judges them. Not in this state's
  // document: link quality keeps its own (core/link_quality_state) and hands its faults back
  // at a restart, before the ports are observed.
  uint8_t link_faults = 0;
  uint32_t hidden_downs = 0;  // link_downed steps without a port_err, counted as downs
  // The devlink reporters in error now that hold this port (a bit per DevlinkRole: fatal,
  // firmware, queue). Not in the state document: the reporters' dump at start finds them again.
  uint8_t devlink_errors = 0;
  // The fatal reporter holding it had its recovery refused (devlink_health_report: a report
  // within the grace period of its last recovery): cleared with its hold.
  bool recovery_refused = false;
  friend bool operator==(const PortHealthState&, const PortHealthState&) = default;
};

using DeviceHealthState = DeviceState<PortHealthState>;

// Whether a node GUID names a device ("" and all zeros name none): what identity rests on.
bool known_guid(std::string_view guid);

// A port's verdict changed: the stuff of one port_health record.
struct HealthTransition {
  std::string device;
  std::string node_guid;
  uint32_t port = 0;
  PortHealth health = PortHealth::kHealthy;
  std::optional<PortHealth> previous;  // none: the first verdict for this port
  HealthReason reason = HealthReason::kFirstSeen;
  Instant time;
  uint64_t cause_seq = 0;        // the record that caused it; 0 when time or a reload did
  uint32_t downs_in_window = 0;  // at most flap_downs: the model keeps no more
  uint32_t window_s = 0;         // flap_window_s
  uint32_t quiet_s = 0;          // flap_quiet_s
  bool link_up = false;
  LinkRate rate;
  LinkRate last_healthy;
  LinkRate expected;              // {0, unknown} when nothing is configured for the port
  uint32_t errors_in_window = 0;  // of the source the reason names, else 0
  friend bool operator==(const HealthTransition&, const HealthTransition&) = default;
};

// A port's current verdict, for the `health` request.
struct PortVerdict {
  std::string device;
  std::string node_guid;
  uint32_t port = 0;
  PortHealth health = PortHealth::kHealthy;
  HealthReason reason = HealthReason::kFirstSeen;
  Instant since;
  bool link_up = false;
  LinkRate rate;
  LinkRate last_healthy;
  uint32_t downs_in_window = 0;
  bool counted = true;  // false for ports down that never came up (not in service)
  friend bool operator==(const PortVerdict&, const PortVerdict&) = default;
};

struct HostVerdict {
  std::optional<PortHealth> worst;                      // none when no port counts
  std::array<uint32_t, kPortHealthCount> counted = {};  // ports per verdict, counted ones
  uint32_t not_counted = 0;                             // ports never up: not in service
  friend bool operator==(const HostVerdict&, const HostVerdict&) = default;
};

}  // namespace rdma_eventd::daemon
