// Port health (core/port_health.h) on the loop: judges every published record, publishes a
// port_health record for each verdict that changes, and keeps the model's state in a file that
// survives a restart of the daemon (docs/health.md).
//
// Time: the model's deadlines (a flapping port that stays up becomes healthy after the quiet
// period; a gone device is forgotten) are met by one one-shot timer armed at next_deadline(),
// only while there is one. The state file is written when a verdict changes, before its record
// is published (once per batch of records); a change that is no verdict's (a down counted in
// its window) at most once a second, from a second one-shot timer armed on the first change;
// and at stop.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/device_view.h"
#include "core/inventory.h"
#include "core/port_health.h"
#include "core/stamper.h"
#include "loop/deadline_timer.h"
#include "loop/event_loop.h"
#include "rdma_eventd/record.h"
#include "schema/health_reply.h"
#include "schema/inventory_reply.h"

namespace rdma_eventd::daemon {

// Where the state file lives: $STATE_DIRECTORY (systemd's StateDirectory=), else
// /var/lib/rdma-eventd. The inventory (core/inventory), which outlives boots, beside it.
std::string health_state_path();
std::string inventory_path();

// The severity of a port_health record: its verdict's (docs/health.md).
Severity health_severity(PortHealth h);

class PortHealthMonitor {
 public:
  // Publishes records stamped by the monitor (the timer's transitions).
  using Publish = std::function<void(std::vector<Record>&)>;

  PortHealthMonitor(EventLoop& loop, const Clock& clock, RecordStamper& stamper,
                    HealthConfig config, std::string state_path, Publish publish,
                    std::string inventory_path = "");
  PortHealthMonitor(const PortHealthMonitor&) = delete;
  PortHealthMonitor& operator=(const PortHealthMonitor&) = delete;

  // Before the first record: takes back the inventory (from any boot) and the state a previous
  // run saved (on this boot).
  void restore(Instant now);
  // After the devices present at start are open: their ports (which get no record), the
  // devices the restored state knows that are not present any more, and the adapters of the
  // inventory that are not (missing, whatever their name now).
  void observe_devices(const std::vector<const DeviceView*>& views, Instant now);

  // One published record, judged; take_records() then gives the port_health records it caused.
  void judge(const Record& r, Instant now);
  // The port_health records of what judge() caused, stamped; arms the timers.
  std::vector<Record> take_records(Instant now);

  // What a port's error counters say (app/link_health_monitor): its link faults now (a bit per
  // LinkFault) and downs too brief for an event. take_records() then gives the verdicts.
  // `released`: a reload stopped judging the port's counters (healthy for config_changed).
  void judge_link(std::string_view device, uint32_t port, uint8_t faults, uint32_t hidden_downs,
                  Instant now, bool released = false);

  // A reload turned devlink health off: what its reporters held goes (PortHealthModel::
  // forget_devlink). take_records() then gives the verdicts.
  void forget_devlink(Instant now);
  // A complete read of the devlink reporters (PortHealthModel::confirm_devlink).
  void confirm_devlink(const std::vector<DevlinkInError>& in_error, Instant now);
  void set_config(HealthConfig config);  // a reload: publishes what changed
  void stop();                           // the daemon stops: saves the state

  bool enabled() const { return enabled_; }
  // The health request's answer: every port's verdict and the host's.
  HealthReply reply(Instant now) const;
  // The inventory request's answer.
  InventoryReply inventory_reply() const;
  // An operator's retire request: the adapter `what` (a node GUID or the name it last had)
  // leaves the inventory; its ports, if gone, are forgotten. Logged (to the journal) with
  // `uid`. The error, or "" and `retired` filled.
  std::string retire(std::string_view what, uint32_t uid, InventoryReply::Adapter& retired);
  const PortHealthModel& model() const { return model_; }
  // Writes of the state file and of the inventory that failed (each file's failure logged once
  // until one of its writes succeeds again).
  uint64_t state_write_failures() const { return save_failures_; }

 private:
  void on_deadline();
  void after_change(Instant now);
  void arm_deadline(Instant now);
  Record record_of(const HealthTransition& t);
  void publish_pending(Instant now);
  void save_now();  // and the delayed write is not needed any more
  void save();
  // What a batch of transitions tells the inventory (ports in service, adapters removed or
  // back); the ports' standing is updated and the inventory written when it changed.
  void update_inventory(size_t first, Instant now);
  void restore_inventory(Instant now);
  void save_inventory();
  // The ports the model holds in service whatever their state: the inventory's, and the first
  // port of each absent adapter of health.expected_adapters.
  PortHealthModel::InventoryPorts held_ports() const;
  void pin_adapters(Instant now);

  const bool enabled_;  // health.enabled, read at start
  PortHealthModel model_;
  const Clock& clock_;
  RecordStamper& stamper_;
  std::string state_path_;
  std::string boot_id_;
  Publish publish_;
  PortHealthModel::Transitions pending_;
  bool dirty_ = false;
  DeadlineTimer deadline_timer_;
  Timer save_timer_;
  bool save_armed_ = false;
  bool save_failing_ = false;  // logged once until a write succeeds
  uint64_t save_failures_ = 0;
  Inventory inventory_;
  std::set<std::string, std::less<>> present_guids_;  // the present adapters' node GUIDs
  // Each adapter of health.expected_adapters found missing while the inventory does not hold
  // it: since when (wall clock).
  std::map<std::string, int64_t, std::less<>> pinned_since_;
  std::string inventory_path_;  // "": not kept (a test's model)
  bool inventory_failing_ = false;
};

}  // namespace rdma_eventd::daemon
