// The daemon as a whole: the loop, the watched devices and what tells it about devices coming
// and going, the pipeline from their events to records, and the sinks. Signals: SIGHUP
// reloads, SIGUSR1 rescans, SIGTERM/SIGINT stop.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "app/device_set.h"
#include "app/devlink_monitor.h"
#include "app/event_counter.h"
#include "app/hotplug_source.h"
#include "app/journal_backpressure.h"
#include "app/journal_budget_gate.h"
#include "app/link_health_monitor.h"
#include "app/memory_trim.h"
#include "app/options.h"
#include "app/port_health_monitor.h"
#include "config/config.h"
#include "core/clock.h"
#include "core/device_view.h"
#include "core/sink.h"
#include "core/stamper.h"
#include "hub/state_source.h"
#include "loop/event_loop.h"

namespace rdma_eventd::daemon {

class JournalSink;
class ServiceManager;
class SubscriberHub;

// The hub reads the daemon's state through StateSource only (snapshots, status).
class Daemon : private StateSource {
 public:
  Daemon(Options options, Config config);
  ~Daemon() override;
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  // Opens the devices and the sinks. Throws std::runtime_error on a startup failure.
  void start();
  // Runs the loop until SIGTERM/SIGINT. Returns the exit status.
  int run();

 private:
  // Sends each record to every sink. Takes the records: they are moved out of `records`.
  void publish(std::vector<Record>& records);
  void send(const Record& r, Instant now);  // one record to every sink
  // What the counters said, into port health; the timer's findings publish their verdicts.
  void judge_links(std::vector<LinkHealthMonitor::PortChanges>& changes, Instant now);
  // A port's link layer, and a RoCE port's netdev (its first GID's), for link quality.
  LinkHealthMonitor::PortLink port_link(std::string_view device, uint32_t port) const;
  // The open devices' devlink instances (sysfs, read once: devlink_handles_), and the devlink
  // records stamped and published.
  const std::vector<DevlinkHandles>& devlink_handles() const;
  void publish_devlink(std::vector<Record>& records);
  // A complete read of the reporters: what port health holds that it does not confirm goes.
  void confirm_devlink(const std::vector<DevlinkInError>& in_error);
  void reload();
  void apply_config(const Config& next);
  void setup_journal();
  void write_summary(BudgetSummary& summary);  // the journal budget's, as one journal entry
  void setup_hub();
  SocketConfig socket_config() const;  // the configuration's, with --socket/--no-socket

  // The service manager (daemon_service.cc): socket activation, readiness, the status line.
  void setup_service();
  std::string service_status() const;
  void update_service_status();  // after anything that may change service_status()

  // StateSource
  uint64_t last_seq() const override { return stamper_.last_seq(); }
  std::vector<const DeviceView*> device_views() const override { return devices_.views(); }
  StatusReply status() const override;
  HealthReply health() const override;
  InventoryReply inventory() const override { return health_.inventory_reply(); }
  std::string retire(std::string_view what, uint32_t uid,
                     InventoryReply::Adapter& retired) override {
    return health_.retire(what, uid, retired);
  }

  Options options_;
  Config config_;
  EventLoop loop_;
  RecordStamper stamper_;
  DeviceSet devices_;
  HotplugSource hotplug_;
  JournalBackpressure backpressure_;
  MemoryTrim memory_trim_{loop_};
  // Which records the journal gets (journal.budget); only used while the journal is on.
  JournalBudgetGate budget_{loop_, system_clock(), config_.journal_budget,
                            [this](BudgetSummary& s) { write_summary(s); }};
  // Port health (docs/health.md): judges every published record, adds port_health records.
  PortHealthMonitor health_{loop_,
                            system_clock(),
                            stamper_,
                            config_.health,
                            health_state_path(),
                            [this](std::vector<Record>& records) { publish(records); },
                            inventory_path()};
  // Link quality (docs/health.md, "Link quality"): the ports' error counters, judged into
  // port health.
  LinkHealthMonitor links_{
      loop_,
      system_clock(),
      config_.link_health,
      [this](std::string_view name) {
        return LinkHealthMonitor::DeviceDir{devices_.ibdev_path(name),
                                            devices_.parent_driver(name)};
      },
      [this](std::vector<LinkHealthMonitor::PortChanges>& changes, Instant now) {
        judge_links(changes, now);
      },
      link_quality_state_path(),
      [this](std::string_view device, uint32_t port) { return port_link(device, port); },
      options_.devlink_socket};
  std::vector<LinkHealthMonitor::PortChanges> link_changes_;  // of the batch being published
  std::optional<Instant> link_changes_at_;  // when the monitor read them; none: at the batch
  // The open devices' devlink instances, read from sysfs whenever the set of devices changes
  // (devlink health on), or when a devlink record or the status first needs them after a GID
  // changed (a RoCE port's netdev, whose function names the port's instances, is its first
  // GID's), then kept. Reading them walks every device's sysfs: 0.7 ms of CPU with 16 devices,
  // per notification when not kept (docs/benchmarks.md, "devlink health").
  // Closed devices' are kept after them (closed_devlink_, by node GUID, at most
  // kClosedDevlinkKept): mlx5's fw_fatal recovery unregisters the RDMA device and registers it
  // again before its reporter's recovery is notified, and what comes while a device is away
  // still applies to its ports (port health keeps them).
  mutable std::optional<std::vector<DevlinkHandles>> devlink_handles_;
  mutable std::map<std::string, DevlinkHandles> closed_devlink_;
  static constexpr size_t kClosedDevlinkKept = 64;
  void forget_devlink_handles();
  // devlink health (docs/health.md, "devlink health"): the adapters' health reporters, pushed
  // by the kernel; their records are judged by port health like every other.
  DevlinkMonitor devlink_{
      loop_,
      system_clock(),
      config_.devlink_health,
      [this]() -> const std::vector<DevlinkHandles>& { return devlink_handles(); },
      [this](std::vector<Record>& records) { publish_devlink(records); },
      [this](const std::vector<DevlinkInError>& in_error) { confirm_devlink(in_error); },
      options_.devlink_socket};
  std::unique_ptr<JournalSink> journal_;
  // The batch's records that the journal takes, with their lines: their entries are written
  // after the batch has gone to the subscribers.
  std::vector<std::pair<const Record*, std::shared_ptr<const std::string>>> journal_batch_;
  std::unique_ptr<RecordSink> stdout_sink_;
  std::unique_ptr<SubscriberHub> hub_;
  uint64_t records_ = 0;
  EventCounter event_counter_;  // records by device, port and event, for metrics
  // When it started: the wall clock for "started", the monotonic clock to measure uptime.
  const int64_t started_us_ = realtime_us();
  const int64_t started_monotonic_us_ = monotonic_us();
  std::vector<std::unique_ptr<SignalWatch>> signals_;
  std::unique_ptr<ServiceManager> service_;  // its watchdog timer goes before the loop
  // The subscriber socket and the report socket when socket-activated, from setup_service()
  // until the hub adopts them.
  internal::UniqueFd passed_socket_;
  internal::UniqueFd passed_report_socket_;
};

// Entries the journal writer may hold (a record and its JSON line: about 1 KiB for a port
// event). Under a storm the daemon waits for
// the writer long before the queue is full (JournalBackpressure); the capacity is for a
// journald that stalls.
inline constexpr size_t kJournalQueueEntries = 16384;

}  // namespace rdma_eventd::daemon
