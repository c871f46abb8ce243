#include "app/port_health_monitor.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <set>
#include <utility>

#include "app/state_files.h"
#include "core/health_state_file.h"
#include "rdma_eventd/internal/enum_names.h"
#include "rdma_eventd/internal/small_file.h"

namespace rdma_eventd::daemon {
namespace {

// What changes no verdict (a down or an error counted within its window) is written at most
// once a second; a verdict that changes is written at once (docs/health.md, "When the state is
// written").
constexpr auto kSaveDelay = std::chrono::seconds(1);

// Whether a record can change what the model knows (port_health records are its own).
bool may_change_health(const Record& r) {
  return r.event != EventKind::kPortHealth;
}

PortHealthModel::InventoryPorts inventory_ports(const Inventory& inventory) {
  PortHealthModel::InventoryPorts ports;
  for (const InventoryAdapter& a : inventory.adapters()) {
    for (const InventoryPort& p : a.ports)
      ports.emplace(a.node_guid, p.port);
  }
  return ports;
}

InventoryReply::Adapter inventory_reply_adapter(const InventoryAdapter& a) {
  InventoryReply::Adapter out{a.node_guid, a.name,         a.missing() ? "missing" : "present",
                              a.joined_us, a.last_seen_us, a.missing_since_us,
                              {}};
  for (const InventoryPort& p : a.ports) {
    out.ports.push_back(
        {p.port, p.rate.lanes, std::string(link_speed_name(p.rate.speed)), p.rate.gbps()});
  }
  return out;
}

}  // namespace

std::string health_state_path() {
  return state_file_path("port-health.json");
}

std::string inventory_path() {
  return state_file_path("inventory.json");
}

Severity health_severity(PortHealth h) {
  // Indexed by PortHealth: healthy, degraded, down, flapping, gone, fatal.
  static constexpr std::array<Severity, kPortHealthCount> kSeverities = {
      Severity::kNotice, Severity::kWarning, Severity::kWarning,
      Severity::kError,  Severity::kWarning, Severity::kCritical};
  return internal::enum_name(kSeverities, h, Severity::kWarning);
}

PortHealthMonitor::PortHealthMonitor(EventLoop& loop, const Clock& clock, RecordStamper& stamper,
                                     HealthConfig config, std::string state_path, Publish publish,
                                     std::string inventory_path)
    : enabled_(config.enabled),
      model_(std::move(config)),
      clock_(clock),
      stamper_(stamper),
      state_path_(std::move(state_path)),
      boot_id_(read_boot_id()),
      publish_(std::move(publish)),
      deadline_timer_(loop, [this] { on_deadline(); }),
      save_timer_(loop,
                  [this] {
                    save_armed_ = false;
                    save();
                  }),
      inventory_path_(std::move(inventory_path)) {}

void PortHealthMonitor::restore(Instant now) {
  if (!enabled_) return;
  restore_inventory(now);
  const internal::SmallFile file = internal::read_small_file(state_path_, kMaxStateBytes);
  if (file.error == ENOENT) return;
  if (file.too_large) {
    spdlog::warn("port health: ignoring {}: larger than {} bytes; starting fresh", state_path_,
                 kMaxStateBytes);
    return;
  }
  if (!file.ok()) {
    spdlog::warn("port health: cannot read {}: {}; starting fresh", state_path_,
                 std::strerror(file.error));
    return;
  }
  HealthStateResult result = kHealthStateFile.from_json(file.text, boot_id_, now);
  if (auto* rejected = std::get_if<HealthStateRejected>(&result)) {
    spdlog::warn("port health: ignoring {}: {}; starting fresh", state_path_, rejected->reason);
    return;
  }
  auto& devices = std::get<std::vector<DeviceHealthState>>(result);
  spdlog::info("port health: restored {} device{} from {}", devices.size(),
               devices.size() == 1 ? "" : "s", state_path_);
  model_.restore(std::move(devices), now);
}

void PortHealthMonitor::observe_devices(const std::vector<const DeviceView*>& views, Instant now) {
  if (!enabled_) return;
  std::vector<std::string> present;
  for (const DeviceView* d : views) {
    present.push_back(d->name);
    for (uint32_t p = 1; p <= d->num_ports(); ++p) {
      PortInfo info = d->ports[p - 1].info;
      info.port = p;
      model_.observe_port(d->name, format_guid(d->node_guid), info, now, pending_);
    }
  }
  model_.mark_missing(present, now, pending_);
  // The inventory: what is here, what is up in service, and what is missing by node GUID.
  bool changed = false;
  std::set<std::string, std::less<>> present_guids;
  for (const DeviceView* d : views) {
    const std::string guid = format_guid(d->node_guid);
    changed = inventory_.present(guid, d->name, now.wall_us) || changed;
    present_guids.insert(guid);
  }
  for (const PortVerdict& v : model_.verdicts(now)) {
    if (v.link_up) {
      changed =
          inventory_.in_service(v.device, v.node_guid, v.port, v.rate, now.wall_us) || changed;
    }
  }
  for (const InventoryAdapter& a : inventory_.adapters()) {
    if (present_guids.count(a.node_guid)) continue;
    changed = inventory_.absent(a.node_guid, now.wall_us) || changed;
  }
  for (const InventoryAdapter& a : inventory_.adapters()) {
    if (!a.missing()) continue;
    std::vector<uint32_t> ports;
    for (const InventoryPort& p : a.ports)
      ports.push_back(p.port);
    model_.add_missing(a.name, a.node_guid, ports, a.missing_since_us, now, pending_);
  }
  present_guids_ = std::move(present_guids);
  pin_adapters(now);  // and the model's held ports with them
  if (changed) save_inventory();
  dirty_ = true;
  publish_pending(now);
}

void PortHealthMonitor::judge(const Record& r, Instant now) {
  if (!enabled_ || !may_change_health(r)) return;
  model_.on_record(r, now, pending_);
  dirty_ = true;
}

void PortHealthMonitor::judge_link(std::string_view device, uint32_t port, uint8_t faults,
                                   uint32_t hidden_downs, Instant now, bool released) {
  if (!enabled_) return;
  if (hidden_downs > 0) model_.count_hidden_downs(device, port, hidden_downs, now, pending_);
  model_.set_link_faults(device, port, faults, now, pending_,
                         released ? std::optional(HealthReason::kConfigChanged) : std::nullopt);
  dirty_ = true;
}

void PortHealthMonitor::forget_devlink(Instant now) {
  if (!enabled_) return;
  model_.forget_devlink(now, pending_);
  dirty_ = true;
}

void PortHealthMonitor::confirm_devlink(const std::vector<DevlinkInError>& in_error, Instant now) {
  if (!enabled_) return;
  model_.confirm_devlink(in_error, now, pending_);
  dirty_ = true;
}

std::vector<Record> PortHealthMonitor::take_records(Instant now) {
  std::vector<Record> out;
  if (!enabled_) return out;
  update_inventory(0, now);
  out.reserve(pending_.size());
  for (const HealthTransition& t : pending_)
    out.push_back(record_of(t));
  pending_.clear();
  // A verdict changed: saved before its record goes out, so that a subscriber never sees a
  // verdict that a restart would lose. One write for the batch, however many verdicts it changed.
  if (!out.empty()) save_now();
  after_change(now);
  return out;
}

void PortHealthMonitor::set_config(HealthConfig config) {
  if (config.enabled != enabled_)
    spdlog::warn("health.enabled changes at restart only: health stays {}",
                 enabled_ ? "on" : "off");
  config.enabled = enabled_;
  if (!enabled_ || config == model_.config()) return;
  const Instant now = clock_.now();
  const bool pins_changed = config.expected_adapters != model_.config().expected_adapters;
  model_.set_config(config, now, pending_);
  if (pins_changed) pin_adapters(now);
  dirty_ = true;
  publish_pending(now);
}

PortHealthModel::InventoryPorts PortHealthMonitor::held_ports() const {
  PortHealthModel::InventoryPorts ports = inventory_ports(inventory_);
  for (const std::string& guid : model_.config().expected_adapters) {
    if (!present_guids_.count(guid)) ports.emplace(guid, 1);
  }
  return ports;
}

// health.expected_adapters: a listed adapter that is absent and that the inventory does not
// hold (never in service here) is missing all the same: its first port, under its node GUID
// (its ports are not known), gone for device_missing until it is seen. An adapter no longer
// listed (a reload) that the inventory does not hold and that is absent is forgotten.
void PortHealthMonitor::pin_adapters(Instant now) {
  const std::vector<std::string>& pinned = model_.config().expected_adapters;
  for (const std::string& guid : pinned) {
    if (present_guids_.count(guid) || inventory_.by_guid(guid)) continue;
    const int64_t since = pinned_since_.try_emplace(guid, now.wall_us).first->second;
    model_.add_missing(guid, guid, {1}, since, now, pending_);
  }
  for (auto it = pinned_since_.begin(); it != pinned_since_.end();) {
    if (std::binary_search(pinned.begin(), pinned.end(), it->first)) {
      ++it;
      continue;
    }
    if (!present_guids_.count(it->first) && !inventory_.by_guid(it->first))
      model_.forget_gone_device(it->first);
    it = pinned_since_.erase(it);
  }
  model_.set_inventory(held_ports(), now, pending_);
}

void PortHealthMonitor::stop() {
  if (!enabled_) return;
  dirty_ = true;  // at a clean exit, always: the restart reads it back
  save_now();
  inventory_.seen_until(clock_.now().wall_us);
  save_inventory();
}

HealthReply PortHealthMonitor::reply(Instant now) const {
  HealthReply h;
  h.enabled = enabled_;
  if (!enabled_) return h;
  for (const PortVerdict& v : model_.verdicts(now)) {
    h.ports.push_back(
        HealthReply::Port{v.device, v.node_guid, v.port, std::string(health_name(v.health)),
                          std::string(reason_name(v.reason)), v.since.wall_us, v.link_up,
                          v.downs_in_window, model_.config().flap_window_s, v.counted});
  }
  const HostVerdict host = model_.host_verdict();
  if (host.worst) h.host = health_name(*host.worst);
  h.not_counted = host.not_counted;
  h.state_write_failures = save_failures_;
  return h;
}

InventoryReply PortHealthMonitor::inventory_reply() const {
  InventoryReply reply;
  reply.enabled = enabled_;
  for (const InventoryAdapter& a : inventory_.adapters())
    reply.adapters.push_back(inventory_reply_adapter(a));
  return reply;
}

std::string PortHealthMonitor::retire(std::string_view what, uint32_t uid,
                                      InventoryReply::Adapter& retired) {
  if (!enabled_) return "port health is off (health.enabled): there is no inventory";
  std::string error;
  const std::string guid = inventory_.find(what, &error);
  const auto& pinned = model_.config().expected_adapters;
  const std::string_view pinned_guid = guid.empty() ? what : std::string_view(guid);
  if (std::binary_search(pinned.begin(), pinned.end(), pinned_guid)) {
    return std::string(pinned_guid) +
           " is expected by the configuration (health.expected_adapters): remove it there "
           "first, then reload";
  }
  if (guid.empty()) return error;
  retired = inventory_reply_adapter(*inventory_.by_guid(guid));
  inventory_.retire(guid);
  const Instant now = clock_.now();
  const std::string forgotten = model_.forget_gone_device(guid);
  model_.set_inventory(held_ports(), now, pending_);
  spdlog::info("inventory: adapter {} (node GUID {}, {} port{}) retired by uid {}: {}",
               retired.name, guid, retired.ports.size(), retired.ports.size() == 1 ? "" : "s", uid,
               forgotten.empty() ? "it is present, and joins again when a port of it comes up"
                                 : "its ports are forgotten");
  save_inventory();
  dirty_ = true;
  publish_pending(now);
  return "";
}

void PortHealthMonitor::restore_inventory(Instant now) {
  if (inventory_path_.empty()) return;
  const internal::SmallFile file = internal::read_small_file(inventory_path_, kMaxStateBytes);
  if (file.error == ENOENT) return;
  std::string why;
  if (file.too_large) {
    why = "larger than " + std::to_string(kMaxStateBytes) + " bytes";
  } else if (!file.ok()) {
    why = std::strerror(file.error);
  } else {
    auto result = inventory_from_json(file.text);
    if (auto* rejected = std::get_if<StateRejected>(&result)) {
      why = rejected->reason;
    } else {
      inventory_ = std::move(std::get<Inventory>(result));
      spdlog::info("inventory: {} adapter{} known from {}", inventory_.adapters().size(),
                   inventory_.adapters().size() == 1 ? "" : "s", inventory_path_);
      model_.set_inventory(held_ports(), now, pending_);
      return;
    }
  }
  // Kept aside, not overwritten: the operator can read what it said (and restore it).
  const std::string aside = inventory_path_ + ".rejected";
  const bool moved = ::rename(inventory_path_.c_str(), aside.c_str()) == 0;
  spdlog::error("inventory: ignoring {}: {}; {}; starting with an empty inventory", inventory_path_,
                why, moved ? "moved to " + aside : "it could not be moved aside");
}

void PortHealthMonitor::update_inventory(size_t first, Instant now) {
  bool changed = false;       // the inventory
  bool held_changed = false;  // the adapters present, which the pinned ones' ports depend on
  for (size_t i = first; i < pending_.size(); ++i) {
    const HealthTransition& t = pending_[i];
    const bool in_service =
        t.link_up && (t.health == PortHealth::kHealthy || t.health == PortHealth::kDegraded ||
                      t.health == PortHealth::kFlapping);
    if (in_service) {
      changed =
          inventory_.in_service(t.device, t.node_guid, t.port, t.rate, t.time.wall_us) || changed;
    } else if (t.health == PortHealth::kGone && t.reason == HealthReason::kDeviceRemoved) {
      changed = inventory_.absent(t.node_guid, t.time.wall_us) || changed;
      held_changed = present_guids_.erase(t.node_guid) != 0 || held_changed;
    } else if (t.health != PortHealth::kGone && t.previous == PortHealth::kGone) {
      changed = inventory_.present(t.node_guid, t.device, t.time.wall_us) || changed;
      held_changed = present_guids_.insert(t.node_guid).second || held_changed;
    }
  }
  if (!changed && !held_changed) return;
  if (changed) save_inventory();
  // A port that joined is now counted even while down: judged again (more transitions).
  const size_t before = pending_.size();
  model_.set_inventory(held_ports(), now, pending_);
  if (pending_.size() > before) update_inventory(before, now);
}

// Whole or not at all, as the state file; a failure is counted with its failures.
void PortHealthMonitor::save_inventory() {
  if (inventory_path_.empty()) return;
  const int err =
      write_state_file(inventory_path_, inventory_json(inventory_, clock_.now().wall_us) + "\n");
  if (err != 0) ++save_failures_;
  if (err != 0 && !inventory_failing_) {
    spdlog::warn("inventory: cannot write {}: {} (a change to it will not survive a restart)",
                 inventory_path_, std::strerror(err));
  }
  inventory_failing_ = err != 0;
}

void PortHealthMonitor::on_deadline() {
  const Instant now = clock_.now();
  model_.advance(now, pending_);
  dirty_ = true;
  publish_pending(now);
}

void PortHealthMonitor::publish_pending(Instant now) {
  std::vector<Record> records = take_records(now);
  if (!records.empty()) publish_(records);
}

Record PortHealthMonitor::record_of(const HealthTransition& t) {
  Record r;
  r.event = EventKind::kPortHealth;
  r.event_type = -1;
  r.device = t.device;
  r.node_guid = t.node_guid;
  r.port = t.port;
  r.health = health_name(t.health);
  r.previous_health = t.previous ? health_name(*t.previous) : "";
  r.reason = reason_name(t.reason);
  r.since_us = t.time.wall_us;
  r.downs_in_window = t.downs_in_window;
  r.errors_in_window = t.errors_in_window;
  r.window_s = t.window_s;
  r.quiet_s = t.quiet_s;
  r.cause_seq = t.cause_seq;
  stamper_.stamp(r, t.time.wall_us);
  r.severity = health_severity(t.health);
  return r;
}

void PortHealthMonitor::after_change(Instant now) {
  arm_deadline(now);
  if (dirty_ && !save_armed_) {
    save_timer_.arm(kSaveDelay);
    save_armed_ = true;
  }
}

// Armed at the model's earliest deadline, only while it has one.
void PortHealthMonitor::arm_deadline(Instant now) {
  deadline_timer_.arm_at(model_.next_deadline(), now.mono_us);
}

void PortHealthMonitor::save_now() {
  if (save_armed_) save_timer_.cancel();  // what it would have written is in this write
  save_armed_ = false;
  save();
}

// Whole or not at all (a temporary file beside it, fsync, rename). A failure is counted, and
// logged once until a write succeeds again: the daemon goes on without it.
void PortHealthMonitor::save() {
  if (!dirty_) return;
  dirty_ = false;
  const std::string text =
      kHealthStateFile.to_json(model_.export_state(), boot_id_, clock_.now()) + "\n";
  const int err = write_state_file(state_path_, text);
  if (err != 0) ++save_failures_;
  if (err != 0 && !save_failing_) {
    spdlog::warn("port health: cannot write {}: {} (the state will not survive a restart)",
                 state_path_, std::strerror(err));
  }
  save_failing_ = err != 0;
}

}  // namespace rdma_eventd::daemon
