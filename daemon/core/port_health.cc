#include "core/port_health.h"

#include <algorithm>

namespace rdma_eventd::daemon {
namespace {

bool link_is_up(PortState s) {
  return s == PortState::kActive || s == PortState::kActiveDefer;
}

LinkRate rate_of(const PortInfo& info) {
  return {info.lanes, info.speed};
}

// A GUID that can identify a device again: not missing, not all zeros.
bool below(const LinkRate& r, const PortExpectation& e) {
  return (e.lanes != 0 && r.lanes < e.lanes) ||
         (e.speed != LinkSpeed::kUnknown && lane_gbps(r.speed) < lane_gbps(e.speed));
}

uint32_t count_since(const std::vector<int64_t>& times, int64_t from_us) {
  return static_cast<uint32_t>(
      std::count_if(times.begin(), times.end(), [&](int64_t t) { return t >= from_us; }));
}

bool errors_reason(HealthReason r) {
  return r == HealthReason::kApplicationErrors || r == HealthReason::kModuleErrors ||
         r == HealthReason::kFirmwareErrors || r == HealthReason::kQueueErrors;
}

bool link_reason(HealthReason r) {
  return r == HealthReason::kBitErrors || r == HealthReason::kLinkRecoveries ||
         r == HealthReason::kTransportErrors;
}

// The reason of the first link fault set in `faults` (LinkFault's order).
HealthReason link_fault_reason(uint8_t faults) {
  if (faults & 1u) return HealthReason::kBitErrors;
  if (faults & 2u) return HealthReason::kLinkRecoveries;
  return HealthReason::kTransportErrors;
}

// Why a port that was `previous` is healthy now.
HealthReason healthy_reason_after(const PortHealthState& previous) {
  switch (previous.health) {
    case PortHealth::kFatal:
      return HealthReason::kDeviceRecovered;
    case PortHealth::kGone:
      return HealthReason::kDeviceAdded;
    case PortHealth::kFlapping:
      return HealthReason::kQuietPeriodElapsed;
    case PortHealth::kDown:
      return HealthReason::kLinkUp;
    case PortHealth::kDegraded:
      return errors_reason(previous.reason) ? HealthReason::kQuietPeriodElapsed
             : link_reason(previous.reason) ? HealthReason::kCleanPeriodElapsed
                                            : HealthReason::kRateRestored;
    case PortHealth::kHealthy:
      break;
  }
  return previous.reason;
}

}  // namespace

PortHealthModel::PortHealthModel(HealthConfig config) : config_(std::move(config)) {}

// The rate a healthy port runs at is what a later, slower link is compared with.
void PortHealthModel::remember_healthy_rate(PortHealthState& s) {
  if (s.health == PortHealth::kHealthy && s.link_up && s.rate.known()) s.last_healthy = s.rate;
}

void PortHealthModel::keep_newest(std::vector<int64_t>& times, size_t n) {
  if (times.size() > n) times.erase(times.begin(), times.end() - static_cast<ptrdiff_t>(n));
}

void PortHealthModel::on_record(const Record& r, Instant now, Transitions& out) {
  switch (r.event) {
    case EventKind::kDeviceFatal:
    case EventKind::kDeviceRemoved:
      on_device_record(r, now, out);
      return;
    case EventKind::kDeviceAdded:
      on_device_added(r);
      return;
    case EventKind::kDeviceRenamed:
      on_device_renamed(r);
      return;
    case EventKind::kAppReport:
      on_app_report(r, now, out);
      return;
    case EventKind::kModuleError:
      on_module_error(r, now, out);
      return;
    case EventKind::kDevlinkHealth:
      on_devlink(r, now, out);
      return;
    case EventKind::kModulePlugged:
    case EventKind::kModuleUnplugged:
    case EventKind::kModuleDisabled:
      // Their port block is the state the daemon last knew, not a new observation; a link
      // that goes down with the module has its own port_err.
      return;
    default:
      break;
  }
  // device_recovered says nothing of its ports: the port_state records that follow it do.
  if (!r.port_info || r.port == 0) return;
  PortInfo info = *r.port_info;
  info.port = r.port;
  observe(r.device, r.node_guid, info, r.event == EventKind::kPortErr, r.seq, now, out);
}

void PortHealthModel::observe_port(std::string_view device, std::string_view node_guid,
                                   const PortInfo& info, Instant now, Transitions& out) {
  observe(device, node_guid, info, false, 0, now, out);
}

void PortHealthModel::observe(std::string_view device, std::string_view node_guid,
                              const PortInfo& info, bool port_err, uint64_t seq, Instant now,
                              Transitions& out) {
  auto [it, port] = port_of(device, node_guid, info.port);
  Port& p = *port;
  settle(it->first, it->second, p, now, out);
  PortHealthState& s = p.s;
  // A port record after device_fatal or device_removed means the device is back (recovered,
  // added again): its state is this record's.
  s.fatal = false;
  s.gone = false;
  const bool up = link_is_up(info.state);
  // A PORT_ERR is a down even when the link was back up before the daemon queried it.
  const bool went_down = port_err || (s.link_up && !up);
  if (went_down) record_down(s, now.mono_us);
  if (up && (went_down || !s.link_up)) s.quiet_since_mono_us = now.mono_us;
  s.link_up = up;
  s.ever_up = s.ever_up || up;
  s.rate = rate_of(info);
  judge(it->first, it->second, p, now, seq, std::nullopt, out);
}

void PortHealthModel::on_device_record(const Record& r, Instant now, Transitions& out) {
  const bool fatal = r.event == EventKind::kDeviceFatal;
  // The record lists the device's ports: a port the model has not seen yet is one of them.
  for (const PortInfo& info : r.ports) {
    Port& p = *port_of(r.device, r.node_guid, info.port).second;
    if (!p.judged) p.s.rate = rate_of(info);
  }
  auto it = devices_.find(r.device);
  if (it == devices_.end()) return;
  for (auto& [number, p] : it->second.ports) {
    settle(it->first, it->second, p, now, out);
    p.s.link_up = false;
    if (fatal) {
      p.s.fatal = true;
    } else if (!p.s.gone) {
      p.s.gone = true;
      p.s.gone_reason = HealthReason::kDeviceRemoved;
      p.s.gone_since_mono_us = now.mono_us;
      p.s.fatal = false;
    }
    judge(it->first, it->second, p, now, r.seq, std::nullopt, out);
  }
  if (!fatal) forget_gone(now.mono_us);
}

void PortHealthModel::on_device_added(const Record& r) {
  auto it = devices_.find(r.device);
  if (it != devices_.end()) {
    // Another node GUID under a known name: new hardware, which inherits nothing. A gone
    // adapter of the inventory that had the name is still missing: it moves to its GUID.
    if (known_guid(r.node_guid) && known_guid(it->second.node_guid) &&
        it->second.node_guid != r.node_guid) {
      const auto& ports = it->second.ports;
      const bool held = std::all_of(ports.begin(), ports.end(), [](const auto& e) {
        return e.second.s.gone && e.second.inventoried;
      });
      auto node = devices_.extract(it);
      if (held && !ports.empty() && !devices_.count(node.mapped().node_guid)) {
        node.key() = node.mapped().node_guid;
        devices_.insert(std::move(node));
      }
    }
    return;  // otherwise the port_state records that follow bring its ports back
  }
  if (!known_guid(r.node_guid)) return;
  // The same device under a new name (a driver reset re-registers it with another index):
  // its history comes with it.
  for (auto o = devices_.begin(); o != devices_.end(); ++o) {
    const auto& ports = o->second.ports;
    const bool all_gone =
        std::all_of(ports.begin(), ports.end(), [](const auto& e) { return e.second.s.gone; });
    if (o->second.node_guid != r.node_guid || !all_gone) continue;
    auto node = devices_.extract(o);
    node.key() = r.device;
    auto moved = devices_.insert(std::move(node)).position;
    for (auto& [number, p] : moved->second.ports)
      match_expectation(moved->first, moved->second, number, p);
    return;
  }
}

void PortHealthModel::on_device_renamed(const Record& r) {
  auto it = devices_.find(r.old_name);
  if (it == devices_.end() || r.old_name == r.device) return;
  auto node = devices_.extract(it);
  node.key() = r.device;
  devices_.erase(r.device);  // whatever was left under the new name is another, older device
  auto moved = devices_.insert(std::move(node)).position;
  for (auto& [number, p] : moved->second.ports)
    match_expectation(moved->first, moved->second, number, p);
}

// An application's report of a failed QP, CQ, SRQ or WQ counts as one application error of the
// port it names. One that names no port counts against the device's port when it has only
// one; on a device with several, nobody knows which port the object used, and it counts for
// none rather than for a guess.
void PortHealthModel::on_app_report(const Record& r, Instant now, Transitions& out) {
  if (!config_.errors[static_cast<size_t>(ErrorSource::kApplication)].counted) return;
  uint32_t port = r.port;
  if (port == 0) {
    auto it = devices_.find(r.device);
    if (it == devices_.end() || it->second.ports.size() != 1) return;
    port = it->second.ports.begin()->first;
  }
  count_errors(r.device, port, ErrorSource::kApplication, 1, now, out, r.seq);
}

// A vendor module error (module_error) counts as one module error of the port its module
// serves; one whose port the daemon could not name counts for none.
void PortHealthModel::on_module_error(const Record& r, Instant now, Transitions& out) {
  if (!config_.errors[static_cast<size_t>(ErrorSource::kModule)].counted || r.port == 0) return;
  count_errors(r.device, r.port, ErrorSource::kModule, 1, now, out, r.seq);
}

// A devlink health reporter's report or recovery, for the device (port 0: every port) or the
// port its devlink instance concerns, by the reporter's role (health.devlink_reporters):
// - fatal: the ports are fatal while it is in error;
// - firmware, queue: each report counts as errors of its source, against their threshold; a
//   reporter that can recover (auto_recover) and is found stuck (another report while the
//   last was not recovered, or in error when first read) holds the ports degraded until it
//   recovers. One that cannot (mlx5's fw has no recovery: it stays in error after its first
//   report) is judged by its threshold only.
// A recovery lets the normal rules judge again.
void PortHealthModel::on_devlink(const Record& r, Instant now, Transitions& out) {
  if (!r.devlink || r.device.empty()) return;
  const auto role_it = config_.devlink_roles.find(r.devlink->reporter);
  if (role_it == config_.devlink_roles.end() || role_it->second == DevlinkRole::kNone) return;
  const DevlinkRole role = role_it->second;
  auto it = devices_.find(r.device);
  if (it == devices_.end()) return;
  const auto bit = static_cast<uint8_t>(1u << static_cast<unsigned>(role));
  const std::string& change = r.devlink->change;
  const bool in_error = r.devlink->state == "error";
  // The kernel refuses to recover a report that comes while the reporter is in error or within
  // the grace period of its last recovery (devlink_health_report: -ECANCELED); mlx5's fw_fatal
  // then unloads the driver.
  const bool refused =
      change == "recovery_refused" ||
      (role == DevlinkRole::kFatal && change == "error_again" && r.devlink->auto_recover);
  // A reporter first read in error counts no error: when it happened is unknown. A recovery
  // whose error count grew is a report and its recovery both lost in an overrun: the errors
  // count all the same.
  const bool report = change == "error" || change == "error_again" || refused ||
                      (change == "recovered" && r.devlink->new_errors > 0);
  const bool stuck = change == "error_again" || change == "found_in_error" || refused;
  std::vector<uint32_t> ports;
  for (const auto& [number, p] : it->second.ports) {
    if (r.port == 0 || r.port == number) ports.push_back(number);
  }
  for (const uint32_t number : ports) {
    Port& p = it->second.ports.at(number);
    settle(it->first, it->second, p, now, out);
    const uint8_t before = p.s.devlink_errors;
    const bool hold = role == DevlinkRole::kFatal
                          ? in_error
                          : in_error && r.devlink->auto_recover && (stuck || (before & bit));
    p.s.devlink_errors = hold ? (before | bit) : (before & ~bit);
    if (role == DevlinkRole::kFatal)
      p.s.recovery_refused = hold && (refused || p.s.recovery_refused);
    const ErrorSource source =
        role == DevlinkRole::kFirmware ? ErrorSource::kFirmware : ErrorSource::kQueue;
    const uint64_t errors = std::max<uint64_t>(r.devlink->new_errors, 1);
    if (report && role != DevlinkRole::kFatal &&
        config_.errors[static_cast<size_t>(source)].counted) {
      count_errors(r.device, number, source,
                   static_cast<uint32_t>(std::min<uint64_t>(errors, kMaxErrorsCounted)), now, out,
                   r.seq);
      continue;  // judged there
    }
    const std::optional<HealthReason> healthy =
        !(before & bit) || in_error ? std::nullopt
        : change == "removed"       ? std::optional(HealthReason::kDevlinkReporterGone)
                                    : std::optional(HealthReason::kDevlinkRecovered);
    judge(it->first, it->second, p, now, r.seq, healthy, out);
  }
}

bool PortHealthModel::count_errors(std::string_view device, uint32_t port, ErrorSource source,
                                   uint32_t errors, Instant now, Transitions& out,
                                   uint64_t cause_seq) {
  auto it = devices_.find(device);
  if (it == devices_.end()) return false;
  auto pit = it->second.ports.find(port);
  if (pit == it->second.ports.end() || errors == 0) return pit != it->second.ports.end();
  Port& p = pit->second;
  settle(it->first, it->second, p, now, out);
  const ErrorThreshold& t = config_.errors[static_cast<size_t>(source)];
  ErrorWindowState& w = p.s.errors[static_cast<size_t>(source)];
  // All `errors` happened now; the window needs only the newest t.errors of them.
  w.times_mono_us.insert(w.times_mono_us.end(), std::min(errors, t.errors), now.mono_us);
  keep_newest(w.times_mono_us, t.errors);
  if (count_since(w.times_mono_us, now.mono_us - us(t.window_s)) >= t.errors) w.over = true;
  w.quiet_since_mono_us = now.mono_us;
  judge(it->first, it->second, p, now, cause_seq, std::nullopt, out);
  return true;
}

PortHealthModel::Port* PortHealthModel::known_port(std::string_view device, uint32_t port,
                                                   DeviceMap::iterator& it) {
  it = devices_.find(device);
  if (it == devices_.end()) return nullptr;
  auto pit = it->second.ports.find(port);
  return pit == it->second.ports.end() ? nullptr : &pit->second;
}

bool PortHealthModel::set_link_faults(std::string_view device, uint32_t port, uint8_t faults,
                                      Instant now, Transitions& out,
                                      std::optional<HealthReason> healthy_reason) {
  DeviceMap::iterator it;
  Port* p = known_port(device, port, it);
  if (!p) return false;
  settle(it->first, it->second, *p, now, out);
  p->s.link_faults = faults;
  judge(it->first, it->second, *p, now, 0, healthy_reason, out);
  return true;
}

bool PortHealthModel::count_hidden_downs(std::string_view device, uint32_t port, uint32_t downs,
                                         Instant now, Transitions& out) {
  DeviceMap::iterator it;
  Port* p = known_port(device, port, it);
  if (!p) return false;
  settle(it->first, it->second, *p, now, out);
  for (uint32_t i = 0; i < std::min(downs, config_.flap_downs); ++i)
    record_down(p->s, now.mono_us);
  p->s.hidden_downs += downs;
  // The link is up again (it was too brief for an event): the quiet period starts now.
  if (p->s.link_up && downs > 0) p->s.quiet_since_mono_us = now.mono_us;
  judge(it->first, it->second, *p, now, 0, std::nullopt, out);
  return true;
}

void PortHealthModel::record_down(PortHealthState& s, int64_t now_us) const {
  s.downs_mono_us.push_back(now_us);
  keep_newest(s.downs_mono_us, config_.flap_downs);
  if (downs_in_window(s, now_us) >= config_.flap_downs) s.flapping = true;
}

uint32_t PortHealthModel::downs_in_window(const PortHealthState& s, int64_t now_us) const {
  return count_since(s.downs_mono_us, now_us - us(config_.flap_window_s));
}

void PortHealthModel::settle(const std::string& device, Device& d, Port& p, Instant now,
                             Transitions& out) {
  PortHealthState& s = p.s;
  bool quiet = false;
  if (s.flapping && s.link_up && now.mono_us >= s.quiet_since_mono_us + us(config_.flap_quiet_s)) {
    s.flapping = false;
    quiet = true;
  }
  for (size_t i = 0; i < kErrorSourceCount; ++i) {
    ErrorWindowState& w = s.errors[i];
    if (w.over && now.mono_us >= w.quiet_since_mono_us + us(config_.errors[i].quiet_s)) {
      w.over = false;
      quiet = true;
    }
  }
  if (quiet) judge(device, d, p, now, 0, std::nullopt, out);
}

PortHealthModel::Condition PortHealthModel::condition_of(const Port& p) const {
  const PortHealthState& s = p.s;
  constexpr auto kBit = [](DevlinkRole role) {
    return static_cast<uint8_t>(1u << static_cast<unsigned>(role));
  };
  // A device whose recovery was refused within the grace period is gone because its driver
  // unloaded it: that, not a hot-unplug, is the verdict.
  const bool fatal_held = (s.devlink_errors & kBit(DevlinkRole::kFatal)) != 0;
  if (fatal_held && s.recovery_refused) return {PortHealth::kFatal, HealthReason::kRecoveryRefused};
  if (s.gone) return {PortHealth::kGone, s.gone_reason};
  // One verdict whichever comes first: DEVICE_FATAL or the fatal reporter's report.
  if (s.fatal || fatal_held) return {PortHealth::kFatal, HealthReason::kDeviceFatal};
  if (s.flapping) return {PortHealth::kFlapping, HealthReason::kFlapsInWindow};
  const PortExpectation* e = expectation_of(p);
  // A port expected by the configuration, or one the inventory has had in service on an
  // earlier boot, is in service even before it first comes up.
  if (!s.link_up) {
    return {PortHealth::kDown,
            s.ever_up || e || p.inventoried ? HealthReason::kLinkDown : HealthReason::kNeverUp};
  }
  if (s.rate.known()) {
    // An expectation is the operator's word on what the port should run at: it replaces the
    // comparison with the last healthy rate (so a slower link can be accepted on purpose).
    if (e && below(s.rate, *e)) return {PortHealth::kDegraded, HealthReason::kRateBelowExpected};
    if (!e && config_.degraded_below_last_healthy && s.last_healthy.known() &&
        s.rate.gbps() < s.last_healthy.gbps()) {
      return {PortHealth::kDegraded, HealthReason::kRateBelowLastHealthy};
    }
  }
  // A reporter still in error holds the port, whatever its error window says.
  if (s.devlink_errors & kBit(DevlinkRole::kFirmware))
    return {PortHealth::kDegraded, HealthReason::kFirmwareErrors};
  if (s.devlink_errors & kBit(DevlinkRole::kQueue))
    return {PortHealth::kDegraded, HealthReason::kQueueErrors};
  for (size_t i = 0; i < kErrorSourceCount; ++i) {
    if (s.errors[i].over) {
      return {PortHealth::kDegraded, error_reason(static_cast<ErrorSource>(i))};
    }
  }
  if (s.link_faults != 0) return {PortHealth::kDegraded, link_fault_reason(s.link_faults)};
  return {PortHealth::kHealthy, HealthReason::kFirstSeen};  // the reason is set by judge()
}

void PortHealthModel::judge(const std::string& device, const Device& d, Port& p, Instant now,
                            uint64_t seq, std::optional<HealthReason> healthy_reason,
                            Transitions& out) {
  PortHealthState& s = p.s;
  Condition c = condition_of(p);
  const bool first = !p.judged;
  if (c.health == PortHealth::kHealthy) {
    c.reason = first                              ? HealthReason::kFirstSeen
               : s.health == PortHealth::kHealthy ? s.reason
               : healthy_reason                   ? *healthy_reason
                                                  : healthy_reason_after(s);
  }
  if (first || c.health != s.health) {
    const std::optional<PortHealth> previous =
        first ? std::nullopt : std::optional<PortHealth>(s.health);
    s.health = c.health;
    s.reason = c.reason;
    s.since = now;
    p.judged = true;
    remember_healthy_rate(s);
    HealthTransition t = transition_of(device, d, p, now);
    t.previous = previous;
    t.cause_seq = seq;
    out.push_back(std::move(t));
  } else {
    s.reason = c.reason;  // the same verdict for another reason keeps its since
    remember_healthy_rate(s);
  }
}

HealthTransition PortHealthModel::transition_of(const std::string& device, const Device& d,
                                                const Port& p, Instant now) const {
  const PortHealthState& s = p.s;
  HealthTransition t;
  t.device = device;
  t.node_guid = d.node_guid;
  t.port = s.port;
  t.health = s.health;
  t.reason = s.reason;
  t.time = now;
  t.downs_in_window = downs_in_window(s, now.mono_us);
  t.window_s = config_.flap_window_s;
  t.quiet_s = config_.flap_quiet_s;
  t.link_up = s.link_up;
  t.rate = s.rate;
  t.last_healthy = s.last_healthy;
  if (const PortExpectation* e = expectation_of(p)) t.expected = {e->lanes, e->speed};
  if (errors_reason(s.reason)) {
    size_t i = 0;
    while (i + 1 < kErrorSourceCount && error_reason(static_cast<ErrorSource>(i)) != s.reason)
      ++i;
    t.errors_in_window =
        count_since(s.errors[i].times_mono_us, now.mono_us - us(config_.errors[i].window_s));
  }
  return t;
}

}  // namespace rdma_eventd::daemon
