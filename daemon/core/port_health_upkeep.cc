// PortHealthModel's upkeep: what time alone does (deadlines, forgetting gone ports), reloads,
// restarts, and the answers it gives (verdicts, the host's worst, the state to keep).
#include <algorithm>

#include "core/port_health.h"

namespace rdma_eventd::daemon {
namespace {

void earliest(std::optional<int64_t>& deadline, int64_t t) {
  if (!deadline || t < *deadline) deadline = t;
}

}  // namespace

void PortHealthModel::advance(Instant now, Transitions& out) {
  for (auto& [name, d] : devices_) {
    for (auto& [number, p] : d.ports)
      settle(name, d, p, now, out);
  }
  forget_gone(now.mono_us);
}

std::optional<int64_t> PortHealthModel::next_deadline() const {
  std::optional<int64_t> deadline;
  for (const auto& [name, d] : devices_) {
    for (const auto& [number, p] : d.ports) {
      const PortHealthState& s = p.s;
      if (s.flapping && s.link_up)
        earliest(deadline, s.quiet_since_mono_us + us(config_.flap_quiet_s));
      for (size_t i = 0; i < kErrorSourceCount; ++i) {
        if (s.errors[i].over) {
          earliest(deadline, s.errors[i].quiet_since_mono_us + us(config_.errors[i].quiet_s));
        }
      }
      if (s.gone && !p.inventoried)
        earliest(deadline, s.gone_since_mono_us + us(config_.forget_gone_after_s));
    }
  }
  return deadline;
}

void PortHealthModel::forget_gone(int64_t now_us) {
  struct GonePort {
    int64_t since;
    DeviceMap::iterator device;
    uint32_t port;
  };
  std::vector<GonePort> gone;
  for (auto d = devices_.begin(); d != devices_.end(); ++d) {
    auto& ports = d->second.ports;
    std::erase_if(ports, [&](const auto& e) {
      const PortHealthState& s = e.second.s;
      return s.gone && !e.second.inventoried &&
             now_us >= s.gone_since_mono_us + us(config_.forget_gone_after_s);
    });
    for (const auto& [number, p] : ports) {
      if (p.s.gone && !p.inventoried) gone.push_back({p.s.gone_since_mono_us, d, number});
    }
  }
  if (gone.size() > kMaxGonePorts) {
    const auto excess = static_cast<ptrdiff_t>(gone.size() - kMaxGonePorts);
    std::nth_element(gone.begin(), gone.begin() + excess, gone.end(),
                     [](const GonePort& a, const GonePort& b) { return a.since < b.since; });
    for (auto g = gone.begin(); g != gone.begin() + excess; ++g)
      g->device->second.ports.erase(g->port);
  }
  std::erase_if(devices_, [](const auto& e) { return e.second.ports.empty(); });
}

void PortHealthModel::set_config(HealthConfig config, Instant now, Transitions& out) {
  config_ = std::move(config);
  for (auto& [name, d] : devices_) {
    for (auto& [number, p] : d.ports) {
      keep_newest(p.s.downs_mono_us, config_.flap_downs);
      for (size_t i = 0; i < kErrorSourceCount; ++i)
        keep_newest(p.s.errors[i].times_mono_us, config_.errors[i].errors);
      match_expectation(name, d, number, p);
      settle(name, d, p, now, out);
      judge(name, d, p, now, 0, HealthReason::kConfigChanged, out);
    }
  }
}

void PortHealthModel::forget_devlink(Instant now, Transitions& out) {
  const auto firmware = static_cast<size_t>(ErrorSource::kFirmware);
  const auto queue = static_cast<size_t>(ErrorSource::kQueue);
  for (auto& [name, d] : devices_) {
    for (auto& [number, p] : d.ports) {
      PortHealthState& s = p.s;
      if (s.devlink_errors == 0 && s.errors[firmware].times_mono_us.empty() &&
          !s.errors[firmware].over && s.errors[queue].times_mono_us.empty() &&
          !s.errors[queue].over) {
        continue;
      }
      settle(name, d, p, now, out);
      s.devlink_errors = 0;
      s.recovery_refused = false;
      s.errors[firmware] = {};
      s.errors[queue] = {};
      judge(name, d, p, now, 0, HealthReason::kConfigChanged, out);
    }
  }
}

void PortHealthModel::mark_missing(const std::vector<std::string>& present, Instant now,
                                   Transitions& out) {
  for (auto& [name, d] : devices_) {
    if (std::find(present.begin(), present.end(), name) != present.end()) continue;
    for (auto& [number, p] : d.ports) {
      if (p.s.gone) continue;
      p.s.gone = true;
      p.s.gone_reason = HealthReason::kDeviceMissing;
      p.s.gone_since_mono_us = now.mono_us;
      p.s.link_up = false;
      judge(name, d, p, now, 0, std::nullopt, out);
    }
  }
  forget_gone(now.mono_us);
}

void PortHealthModel::set_inventory(InventoryPorts ports, Instant now, Transitions& out) {
  inventory_ = std::move(ports);
  for (auto& [name, d] : devices_) {
    for (auto& [number, p] : d.ports) {
      const bool was = p.inventoried;
      match_expectation(name, d, number, p);
      if (p.inventoried != was && p.judged) judge(name, d, p, now, 0, std::nullopt, out);
    }
  }
  forget_gone(now.mono_us);
}

void PortHealthModel::add_missing(std::string_view name, std::string_view node_guid,
                                  const std::vector<uint32_t>& ports, int64_t since_wall_us,
                                  Instant now, Transitions& out) {
  for (const auto& [known, d] : devices_) {
    if (d.node_guid == node_guid) return;  // the model has it already (mark_missing's)
  }
  const std::string key(devices_.count(name) ? node_guid : name);
  auto it = devices_.emplace(key, Device{std::string(node_guid), {}}).first;
  for (uint32_t number : ports) {
    Port& p = it->second.ports[number];
    p.s.port = number;
    p.s.gone = true;
    p.s.gone_reason = HealthReason::kDeviceMissing;
    p.s.gone_since_mono_us = now.mono_us;
    match_expectation(key, it->second, number, p);
    // Its verdict dates from when the adapter was found missing, maybe at an earlier start.
    judge(key, it->second, p, Instant{.wall_us = since_wall_us, .mono_us = now.mono_us}, 0,
          std::nullopt, out);
  }
}

std::string PortHealthModel::forget_gone_device(std::string_view node_guid) {
  for (auto it = devices_.begin(); it != devices_.end(); ++it) {
    const auto& ports = it->second.ports;
    if (it->second.node_guid != node_guid ||
        !std::all_of(ports.begin(), ports.end(), [](const auto& e) { return e.second.s.gone; }))
      continue;
    std::string name = it->first;
    devices_.erase(it);
    return name;
  }
  return "";
}

std::vector<PortVerdict> PortHealthModel::verdicts(Instant now) const {
  std::vector<PortVerdict> all;
  for (const auto& [name, d] : devices_) {
    for (const auto& [number, p] : d.ports) {
      if (auto v = verdict(name, number, now)) all.push_back(std::move(*v));
    }
  }
  return all;
}

std::optional<PortVerdict> PortHealthModel::verdict(std::string_view device, uint32_t port,
                                                    Instant now) const {
  auto it = devices_.find(device);
  if (it == devices_.end()) return std::nullopt;
  auto pit = it->second.ports.find(port);
  if (pit == it->second.ports.end() || !pit->second.judged) return std::nullopt;
  const PortHealthState& s = pit->second.s;
  return PortVerdict{it->first,
                     it->second.node_guid,
                     port,
                     s.health,
                     s.reason,
                     s.since,
                     s.link_up,
                     s.rate,
                     s.last_healthy,
                     downs_in_window(s, now.mono_us),
                     s.reason != HealthReason::kNeverUp};
}

HostVerdict PortHealthModel::host_verdict() const {
  HostVerdict host;
  for (const auto& [name, d] : devices_) {
    for (const auto& [number, p] : d.ports) {
      if (!p.judged) continue;
      if (p.s.reason == HealthReason::kNeverUp) {
        ++host.not_counted;
        continue;
      }
      ++host.counted[static_cast<size_t>(p.s.health)];
      if (!host.worst || p.s.health > *host.worst) host.worst = p.s.health;
    }
  }
  return host;
}

std::vector<DeviceHealthState> PortHealthModel::export_state() const {
  std::vector<DeviceHealthState> devices;
  for (const auto& [name, d] : devices_) {
    DeviceHealthState state{name, d.node_guid, {}};
    for (const auto& [number, p] : d.ports) {
      if (p.judged) state.ports.push_back(p.s);
    }
    if (!state.ports.empty()) devices.push_back(std::move(state));
  }
  return devices;
}

void PortHealthModel::restore(std::vector<DeviceHealthState> devices, Instant now) {
  devices_.clear();
  for (DeviceHealthState& state : devices) {
    Device& d = devices_[state.device];
    d.node_guid = std::move(state.node_guid);
    for (PortHealthState& s : state.ports) {
      Port& p = d.ports[s.port];
      p.s = std::move(s);
      p.judged = true;
      keep_newest(p.s.downs_mono_us, config_.flap_downs);
      // Nobody watched the link while the daemon was not running: a quiet period (of the link,
      // of errors) counts only from now.
      if (p.s.flapping && p.s.link_up) p.s.quiet_since_mono_us = now.mono_us;
      for (size_t i = 0; i < kErrorSourceCount; ++i) {
        ErrorWindowState& w = p.s.errors[i];
        keep_newest(w.times_mono_us, config_.errors[i].errors);
        if (w.over) w.quiet_since_mono_us = now.mono_us;
      }
      match_expectation(state.device, d, p.s.port, p);
    }
  }
}

std::pair<PortHealthModel::DeviceMap::iterator, PortHealthModel::Port*> PortHealthModel::port_of(
    std::string_view device, std::string_view node_guid, uint32_t port) {
  auto it = devices_.find(device);
  if (it == devices_.end()) it = devices_.emplace(std::string(device), Device{}).first;
  Device& d = it->second;
  if (!node_guid.empty() && d.node_guid != node_guid) {
    d.node_guid = std::string(node_guid);
    for (auto& [number, p] : d.ports)  // an expectation may name the device by its GUID
      match_expectation(it->first, d, number, p);
  }
  auto [pit, added] = d.ports.try_emplace(port);
  if (added) {
    pit->second.s.port = port;
    match_expectation(it->first, d, port, pit->second);
  }
  return {it, &pit->second};
}

void PortHealthModel::match_expectation(const std::string& device, const Device& d,
                                        uint32_t port_number, Port& p) const {
  p.inventoried = inventory_.count(std::pair(d.node_guid, port_number)) != 0;
  p.expectation = -1;
  for (size_t i = 0; i < config_.expected.size(); ++i) {
    const PortExpectation& e = config_.expected[i];
    const bool port_matches =
        e.ports.empty() || std::find(e.ports.begin(), e.ports.end(), port_number) != e.ports.end();
    if (port_matches && e.devices.matches(device, d.node_guid)) {
      p.expectation = static_cast<int>(i);
      return;
    }
  }
}

const PortExpectation* PortHealthModel::expectation_of(const Port& p) const {
  return p.expectation < 0 ? nullptr : &config_.expected[static_cast<size_t>(p.expectation)];
}

void PortHealthModel::confirm_devlink(const std::vector<DevlinkInError>& in_error, Instant now,
                                      Transitions& out) {
  for (auto& [name, d] : devices_) {
    for (auto& [number, p] : d.ports) {
      PortHealthState& s = p.s;
      if (s.devlink_errors == 0) continue;
      uint8_t confirmed = 0;
      for (const DevlinkInError& e : in_error) {
        if (e.device != name || (e.port != 0 && e.port != number)) continue;
        const auto role = config_.devlink_roles.find(e.reporter);
        if (role == config_.devlink_roles.end() || role->second == DevlinkRole::kNone) continue;
        // A firmware or queue reporter holds only while it can recover (on_devlink).
        if (role->second != DevlinkRole::kFatal && !e.auto_recover) continue;
        confirmed |= static_cast<uint8_t>(1u << static_cast<unsigned>(role->second));
      }
      if ((s.devlink_errors & confirmed) == s.devlink_errors) continue;
      settle(name, d, p, now, out);
      s.devlink_errors &= confirmed;
      if (!(s.devlink_errors & (1u << static_cast<unsigned>(DevlinkRole::kFatal))))
        s.recovery_refused = false;
      judge(name, d, p, now, 0, HealthReason::kDevlinkRecovered, out);
    }
  }
}

}  // namespace rdma_eventd::daemon
