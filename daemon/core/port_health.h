// The health of every port, judged from the records the daemon makes (docs/health.md). Pure:
// the caller passes each record and the time, and arms one timer at next_deadline() for what
// must happen without a record (a flapping port whose link stays up becomes healthy after the
// quiet period; a gone device is forgotten). Nothing here reads a clock or polls.
//
// Ports are known by device name and port number; a device_renamed record moves a device's
// ports to the new name, and a device added again with the node GUID of a gone one takes its
// history back (a device with another GUID under a known name is new hardware: a fresh start).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/devlink_map.h"
#include "core/port_health_types.h"
#include "rdma_eventd/record.h"

namespace rdma_eventd::daemon {

class PortHealthModel {
 public:
  using Transitions = std::vector<HealthTransition>;

  explicit PortHealthModel(HealthConfig config);

  // Judges one record (any kind: those that say nothing about health change nothing) and
  // appends the transitions it causes to `out`.
  void on_record(const Record& r, Instant now, Transitions& out);

  // A port's state learnt without a record: the devices open when the daemon starts.
  void observe_port(std::string_view device, std::string_view node_guid, const PortInfo& info,
                    Instant now, Transitions& out);

  // `errors` more errors of `source` counted against a port the model knows. Returns false
  // (and counts nothing) for a port it does not know.
  bool count_errors(std::string_view device, uint32_t port, ErrorSource source, uint32_t errors,
                    Instant now, Transitions& out, uint64_t cause_seq = 0);

  // The link-quality faults a port's counters show now (a bit per LinkFault, core/link_quality):
  // any makes a port that is up and otherwise healthy degraded, with the first one's reason;
  // none left makes it healthy again (clean_period_elapsed). Returns false for a port it does
  // not know.
  bool set_link_faults(std::string_view device, uint32_t port, uint8_t faults, Instant now,
                       Transitions& out, std::optional<HealthReason> healthy_reason = std::nullopt);
  // devlink health is no longer followed (a reload turned it off): what its reporters held
  // (a fatal reporter, one stuck in error) and the firmware and queue errors they counted are
  // forgotten, and a port they judged is judged again (healthy for config_changed).
  void forget_devlink(Instant now, Transitions& out);
  // A complete read of the devlink reporters found `in_error` in error: a hold that no reporter
  // of its role confirms (its reporter recovered or went while nobody could hear it, or now
  // concerns another port) is released (devlink_recovered). Nothing is held anew here.
  void confirm_devlink(const std::vector<DevlinkInError>& in_error, Instant now, Transitions& out);
  // `downs` downs too brief for an event (link_downed grew without a port_err): counted as
  // downs of the flap rule.
  bool count_hidden_downs(std::string_view device, uint32_t port, uint32_t downs, Instant now,
                          Transitions& out);

  // What time alone does, up to `now`: the timer's callback.
  void advance(Instant now, Transitions& out);

  // When advance() next has something to do (CLOCK_MONOTONIC µs), or none: then the caller
  // arms no timer at all. May be in the past: the caller then calls advance() at once.
  std::optional<int64_t> next_deadline() const;

  // A reload: new thresholds and expectations, every port judged again.
  void set_config(HealthConfig config, Instant now, Transitions& out);
  const HealthConfig& config() const { return config_; }

  // After a restart, once the devices that are present have been observed: the devices the
  // restored state knows and `present` does not name are gone (device_missing).
  void mark_missing(const std::vector<std::string>& present, Instant now, Transitions& out);

  // The inventory's ports (node GUID, port number; core/inventory): one of them that has not
  // come up since the boot is down (link_down) and counted, not never_up; and one that is gone
  // is kept until it comes back or leaves the inventory (retired), whatever forget_gone_after_s
  // says. Ports whose standing changes are judged again.
  using InventoryPorts = std::set<std::pair<std::string, uint32_t>, std::less<>>;
  void set_inventory(InventoryPorts ports, Instant now, Transitions& out);
  // An adapter of the inventory that is absent and unknown to the model (after a reboot): its
  // ports gone (device_missing) since `since_wall_us`, under `name`, the name it last had, or
  // under its node GUID when a device of the model has that name now.
  void add_missing(std::string_view name, std::string_view node_guid,
                   const std::vector<uint32_t>& ports, int64_t since_wall_us, Instant now,
                   Transitions& out);
  // The device with this node GUID is forgotten if every port of it is gone (an adapter
  // retired from the inventory). Returns the name it was known by, or "".
  std::string forget_gone_device(std::string_view node_guid);

  // Every port, by device name then port number; and one port's.
  std::vector<PortVerdict> verdicts(Instant now) const;
  std::optional<PortVerdict> verdict(std::string_view device, uint32_t port, Instant now) const;
  // The worst verdict of the ports in service (those down that never came up do not count).
  HostVerdict host_verdict() const;

  // What a restart keeps, and taking it back (core/health_state_file checks the document).
  std::vector<DeviceHealthState> export_state() const;
  void restore(std::vector<DeviceHealthState> devices, Instant now);

  // Gone ports kept at most, whatever forget_gone_after_s says: the oldest go first.
  static constexpr size_t kMaxGonePorts = 256;

 private:
  struct Port {
    PortHealthState s;
    bool judged = false;       // has had a verdict (the first one has no previous)
    int expectation = -1;      // index in config_.expected, -1 for none
    bool inventoried = false;  // in inventory_
  };
  struct Device {
    std::string node_guid;
    std::map<uint32_t, Port> ports;
  };
  using DeviceMap = std::map<std::string, Device, std::less<>>;

  static int64_t us(uint32_t seconds) { return int64_t{seconds} * kMicrosPerSecond; }
  static void keep_newest(std::vector<int64_t>& times, size_t n);
  static void remember_healthy_rate(PortHealthState& s);
  struct Condition {
    PortHealth health;
    HealthReason reason;
  };

  // The port, made when new, and its device's entry.
  std::pair<DeviceMap::iterator, Port*> port_of(std::string_view device, std::string_view node_guid,
                                                uint32_t port);
  void observe(std::string_view device, std::string_view node_guid, const PortInfo& info,
               bool port_err, uint64_t seq, Instant now, Transitions& out);
  void on_device_record(const Record& r, Instant now, Transitions& out);
  void on_device_added(const Record& r);
  void on_device_renamed(const Record& r);
  void on_app_report(const Record& r, Instant now, Transitions& out);
  void on_module_error(const Record& r, Instant now, Transitions& out);
  void on_devlink(const Record& r, Instant now, Transitions& out);
  void record_down(PortHealthState& s, int64_t now_us) const;
  Port* known_port(std::string_view device, uint32_t port, DeviceMap::iterator& it);
  void settle(const std::string& device, Device& d, Port& p, Instant now, Transitions& out);
  void judge(const std::string& device, const Device& d, Port& p, Instant now, uint64_t seq,
             std::optional<HealthReason> healthy_reason, Transitions& out);
  Condition condition_of(const Port& p) const;
  HealthTransition transition_of(const std::string& device, const Device& d, const Port& p,
                                 Instant now) const;
  uint32_t downs_in_window(const PortHealthState& s, int64_t now_us) const;
  void match_expectation(const std::string& device, const Device& d, uint32_t port_number,
                         Port& p) const;
  const PortExpectation* expectation_of(const Port& p) const;
  void forget_gone(int64_t now_us);

  HealthConfig config_;
  DeviceMap devices_;
  InventoryPorts inventory_;
};

}  // namespace rdma_eventd::daemon
