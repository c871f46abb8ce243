// Link quality on the loop (docs/health.md, "Link quality"): reads the error counters of every
// port in service (counters/sysfs_counters) when one of its link events is published and on
// one coarse timer, judges them (core/link_quality) and hands what changed to the port health
// model.
//
// Time: one timer, every link_health.interval_s, armed only while counter health is enabled
// and some port it reads is up. Disabled, or every port down: no timer, and the idle daemon
// never wakes.
//
// Reads: off the loop (app/counter_read_worker), one read of a device's ports at a time; a
// sample asked for while its device is being read waits for that read to return. A read that has
// not returned by link_health.read_deadline_s is reported once (read_hung) and the device is not
// read again until it returns.
//
// Unknown is a state, never a verdict: each port watched says whether its last read judged it
// (LinkQualityView::unknown, or the device's reads failing or hung, or its link down), and since
// when; a fault stays until a read shows it clean.
//
// Faults that will happen: a device whose counter file fails to read in a way that may pass (a
// failed firmware command: EIO, ETIMEDOUT, EBUSY, EINVAL, ...) is read again after a backoff,
// one interval_s then twice as long each time up to 2^kMaxReadBackoffDoublings intervals, logged
// once until a read succeeds and counted each time; one whose file cannot be read for good (EACCES,
// garbage, gone) is logged once, counted, and not read again until it is opened again (a
// device_added or device_recovered record); a device without counters/ (rxe) is read through
// hw_counters/link_downed only; devices that link_health.exclude names are never read at all. The
// reads of a device's counters are in link_health_reads.cc.
//
// Across a restart on the same boot: every port's state (core/link_quality's, counters'
// baselines, windows, faults) is kept in $STATE_DIRECTORY/link-quality.json, written at stop,
// at once when a port's faults change (before their records go out, as port health writes a
// verdict), and otherwise after a timer tick when something changed, so at most once per
// interval_s. A write that fails is counted and logged once until one succeeds; never fatal.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "app/counter_read_worker.h"
#include "core/clock.h"
#include "core/device_view.h"
#include "core/link_quality.h"
#include "core/link_quality_state.h"
#include "loop/event_loop.h"
#include "rdma_eventd/record.h"
#include "schema/status_reply.h"

namespace rdma_eventd::daemon {

// A device whose counters fail to read in a way that may pass is read again after one
// interval_s, then twice as long each time, up to 2^kMaxReadBackoffDoublings intervals (32 min
// at the default 60 s).
inline constexpr uint32_t kMaxReadBackoffDoublings = 5;

class LinkHealthMonitor {
 public:
  // What one port's sample changed: the health model takes `faults` (a bit per LinkFault) and
  // `hidden_downs`; the changes are logged and counted.
  struct PortChanges {
    std::string device;
    std::string node_guid;
    uint32_t port = 0;
    std::vector<LinkQualityChange> changes;
    uint8_t faults = 0;
    uint32_t hidden_downs = 0;
    LinkRate rate;                    // the port's rate at the sample
    std::vector<std::string> pegged;  // its counters at their maximum now
    // A reload stopped judging the port (link health off, its device excluded): its faults
    // drop, and port health says why (config_changed).
    bool released = false;
  };
  // An open device by its name: its sysfs directory ("" when it is not open), and the driver
  // of its parent (DeviceEntry::parent_driver), whose hw_counters/ widths it has.
  struct DeviceDir {
    std::string path;
    std::string parent_driver;
  };
  using DevicePath = std::function<DeviceDir(std::string_view device)>;
  // A port's link layer and, for an Ethernet (RoCE) port, its netdev ("" when unknown).
  struct PortLink {
    bool ethernet = false;
    std::string netdev;
  };
  using PortLinkOf = std::function<PortLink(std::string_view device, uint32_t port)>;
  // The timer's findings: the daemon applies them to port health and publishes the verdicts.
  using Deliver = std::function<void(std::vector<PortChanges>&, Instant now)>;

  struct Stats {
    uint64_t samples = 0;               // port samples taken
    uint64_t counter_reads = 0;         // counter files read
    uint64_t read_failures = 0;         // devices given up on until they are opened again
    uint64_t read_retries = 0;          // reads that failed in a way that may pass: retried
    uint64_t state_write_failures = 0;  // writes of the state file that failed
    uint64_t reads_hung = 0;            // reads not returned by read_deadline_s
  };
  // A port's link quality as status and the health reply say it.
  struct Quality {
    std::string quality;  // "clean", "bad", "unknown"
    std::string unknown;  // why unknown ("" when judged); a bad port may say it too
    int64_t since_wall_us = 0;
  };

  // `ethtool_stand_in`: rdma-sim's generic netlink stand-in for RoCE ports' PHY counters ("" for
  // the kernel's).
  LinkHealthMonitor(EventLoop& loop, const Clock& clock, LinkQualityConfig config,
                    DevicePath device_path, Deliver deliver, std::string state_path,
                    PortLinkOf port_link = {}, std::string ethtool_stand_in = {});
  LinkHealthMonitor(const LinkHealthMonitor&) = delete;
  LinkHealthMonitor& operator=(const LinkHealthMonitor&) = delete;

  // At start, once the devices present are open and before observe_devices(): takes back the
  // state a previous run saved on this boot, for the devices of the same name and node GUID,
  // and delivers the faults of the ports that are bad (no change: no record) so that port
  // health, restored too, keeps them degraded.
  void restore(const std::vector<const DeviceView*>& views, Instant now);
  // The devices open at start (they get no record): their ports' state, and a first sample of
  // each port that is up (a baseline, or the first read across the restart).
  void observe_devices(const std::vector<const DeviceView*>& views, Instant now);
  void stop();  // the daemon stops: saves the state
  // One published record: a port's link event samples the port; device records start a
  // device afresh or forget it. Appends what changed (publish applies it before its verdicts).
  void on_record(const Record& r, Instant now, std::vector<PortChanges>& out);

  // A reload. Returns the ports that had faults and are no longer judged (faults 0, released):
  // the caller clears them from port health.
  std::vector<PortChanges> set_config(LinkQualityConfig config);
  const LinkQualityConfig& config() const { return config_; }
  const Stats& stats() const { return stats_; }
  // A port's link quality, for status (none when it is not read).
  std::optional<LinkQualityView> view(std::string_view device, uint32_t port) const;
  // A port's quality, for status and the health reply (none when it is not watched).
  std::optional<Quality> quality(std::string_view device, uint32_t port) const;
  size_t reads_in_flight() const { return worker_.in_flight(); }

 private:
  struct Port {
    PortLinkQuality quality;
    bool link_up = false;
    LinkRate rate;
    uint32_t downs_seen = 0;  // port_err records since the last sample
    // port_err records read (a count that wraps), and that count when the port's last read was
    // asked for: a port_err read while the read was out means its values may be from before
    // the down, so the sample after it is also the link's first since it came back up.
    uint32_t port_errs = 0;
    uint32_t port_errs_at_read = 0;
    // When the last one was read: its batch's time, taken after the batch was read from the
    // device, so never before the read; set against CounterReadJob::Port::read_mono_us, a
    // port_err read from the device before a read began may count as read after it (carried,
    // at worst one hidden down too few), never the other way round.
    int64_t last_port_err_mono_us = INT64_MIN;
    bool down_before_next = false;  // a port_err came while the last sample's read was out
    // Downs seen that the last sample's link_downed did not show yet: they may show in the
    // next sample (the counter and the event are not one atomic step, and the values are read
    // beside the loop while it reads more events), and no later, unless that sample's read
    // began within kCounterLagUs of this one (core/link_quality.h, downs_to_carry).
    uint32_t downs_carried = 0;
    int64_t carried_at_mono_us = 0;  // the sample that carried them: their events were read
    // The other way round: link_downed grew by more than the port_errs read so far, but the
    // events of those downs may still wait in the device's queue (a burst of flaps is read in
    // batches, and a driver may count before or after it queues the event). Port_errs read
    // later explain them; what is left kHiddenGrace after is a down no event told of.
    uint64_t unexplained = 0;
    int64_t unexplained_since_mono_us = 0;
    LinkQualityChange unexplained_change;  // the kHiddenDown that found them (counter, value)
    int64_t last_sample_mono_us = INT64_MIN;
    bool pending = false;  // a sample asked for while its device was being read
    int phy_error = 0;     // the last read of its PHY counters failed so: logged once
    // Why its link is not judged now ("" when it is), since when; told: the reason of the
    // unknown record that went out for it ("" when none), which the judged record that follows
    // the next judging read names, whatever it was unknown for in between (a baseline).
    std::string_view unknown = "not_read";  // a literal
    int64_t unknown_since_wall_us = 0;
    std::string_view unknown_told;  // a literal
  };
  struct Device {
    std::string node_guid;
    bool excluded = false;
    bool failed = false;        // a counter could not be read: left alone until opened again
    uint32_t failed_reads = 0;  // reads in a row that failed in a way that may pass
    int64_t retry_mono_us = INT64_MIN;  // after such a failure: not read before this
    std::optional<bool> pma;            // has counters/ (probed at the first sample)
    bool nothing_to_read = false;       // neither counters/ nor a counter a rule reads
    std::map<uint32_t, Port> ports;
    uint64_t generation = 0;  // new when opened again: a read of the old one is dropped
    std::shared_ptr<CounterReadJob> reading;  // the read out now
    bool hung = false;                        // it passed read_deadline_s (reported)
    std::string failed_counter;               // the file of the last read that failed or hung
  };

  Device& device_of(const std::string& name, std::string_view node_guid);
  // Asks for a read of these ports of the device (none while one is out: they wait for it).
  void request_read(const std::string& name, Device& d, const std::vector<uint32_t>& ports,
                    Instant now);
  std::vector<std::string> counters_to_read(const std::string& path, uint32_t port, Device& d,
                                            bool ethernet);
  void note_phy_read(const std::string& name, uint32_t number, Port& p,
                     const CounterReadJob::Port& read);
  void on_read_done(const std::shared_ptr<CounterReadJob>& job);
  // A port's values read: judged.
  void sample(const std::string& name, Device& d, uint32_t number, Port& p,
              CounterReadJob::Port& read, int64_t read_started_mono_us, Instant now,
              std::vector<PortChanges>& out);
  // A read that failed: logged and counted, and the device read again after a backoff or, for
  // good, not at all.
  void read_failed(const std::string& name, Device& d, uint32_t port, const CounterReadError& error,
                   Instant now);
  void on_deadline();  // reads out past read_deadline_s
  void arm_deadline();
  // A port's unknown state from its device, link and last sample; an unknown record (or a
  // judged one after it) when the reads themselves changed it.
  void update_unknown(const std::string& name, const Device& d, uint32_t number, Port& p,
                      Instant now, std::vector<PortChanges>& out,
                      std::optional<int64_t> since_wall_us = std::nullopt);
  void update_unknown_all(const std::string& name, Device& d, Instant now,
                          std::vector<PortChanges>& out);
  static PortChanges changes_of(const std::string& name, const Device& d, uint32_t number,
                                const Port& p, std::vector<LinkQualityChange> changes);
  void on_timer();
  void device_reopened_or_gone(const Record& r);
  // The downs still unexplained kHiddenGrace after they were found: a kHiddenDown change.
  void confirm_hidden_downs(const std::string& name, const Device& d, uint32_t number, Port& p,
                            Instant now, std::vector<PortChanges>& out);
  void arm();
  bool wanted() const;  // a port up that is read, or downs waiting on time
  bool excluded(std::string_view name, std::string_view node_guid) const;
  // Whether a device's counters are read (not excluded, not failed, something to read).
  static bool readable(const Device& d);
  bool set_link_up(const Device& d, Port& p, bool up);  // true when it changed
  void recount();  // readable_up_ from scratch, after a device's flags or the set changed
  std::vector<DeviceLinkQualityState> export_state() const;
  void save();  // the state file, whole or not at all; with counter health off, none

  const Clock& clock_;
  LinkQualityConfig config_;
  DevicePath device_path_;
  PortLinkOf port_link_;
  Deliver deliver_;
  std::string state_path_;
  std::string boot_id_;
  bool state_dirty_ = false;     // changed since the last write
  bool faults_changed_ = false;  // a port's faults changed: written before its records go out
  bool save_failing_ = false;    // logged once until a write succeeds
  // By name; hashed: a storm over many devices looks one up per record.
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, Device, NameHash, std::equal_to<>> devices_;
  Timer timer_;
  Timer deadline_timer_;  // armed only while a read is out
  CounterReadWorker worker_;
  uint64_t next_generation_ = 1;
  Stats stats_;
  int64_t readable_up_ = 0;  // ports up on devices that are read: the timer's reason
  bool timer_armed_ = false;
  int64_t sweep_started_mono_us_ = 0;
  // The device of the last record (recount() forgets it: a device erased or renamed).
  std::string last_device_name_;
  Device* last_device_ = nullptr;
};

// Where the state file lives: link-quality.json beside port health's (app/state_files).
std::string link_quality_state_path();

// The status reply's "link_health" block: the monitor's counts and each watched port's view.
StatusReply::LinkHealth link_health_status(const LinkHealthMonitor& links,
                                           const std::vector<const DeviceView*>& views);

}  // namespace rdma_eventd::daemon
