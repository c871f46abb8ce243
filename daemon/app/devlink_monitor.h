// devlink health on the loop (docs/health.md, "devlink health"): the kernel's devlink family
// pushes a notification for every report of a health reporter (an adapter's firmware, its
// queues) and for every recovery; the daemon joins that family's "config" group and reads
// them as they come, with no timer. At start, and after an overrun of its socket (a
// devlink_events_lost record), it dumps every reporter's state, so a reporter already in error
// is known. Each change becomes a devlink_health record for each RDMA device (and port) the
// reporter's devlink instance concerns (core/devlink_map), or one with no device.
//
// Faults that will happen: a kernel without devlink (ENOENT from the controller), a socket
// the container's seccomp or namespace refuses: one log line, the status says why, and the
// daemon goes on without it. Bytes that are not what they say (core/devlink_decode) and
// messages not from the kernel are counted and dropped, logged once.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/devlink_config.h"
#include "core/devlink_decode.h"
#include "core/devlink_map.h"
#include "loop/event_loop.h"
#include "netlink/netlink_socket.h"
#include "rdma_eventd/record.h"
#include "schema/status_reply.h"

namespace rdma_eventd::daemon {

class DevlinkMonitor {
 public:
  // Reporters kept at most (each devlink instance has a handful), and devlink ports.
  static constexpr size_t kMaxReporters = 4096;
  static constexpr size_t kMaxPorts = 4096;
  // Datagrams read per readiness callback: the loop's other work goes between.
  static constexpr int kDatagramsPerTurn = 64;

  // The open RDMA devices' devlink instances, asked for when a reporter changes: the daemon's,
  // kept until its devices change (Daemon::devlink_handles_), not read again each time.
  using Handles = std::function<const std::vector<DevlinkHandles>&()>;
  // Unstamped records, in order.
  using Publish = std::function<void(std::vector<Record>&)>;
  // After each complete read of every reporter: those in error, and what they concern.
  using Confirm = std::function<void(const std::vector<DevlinkInError>&)>;

  struct Stats {
    uint64_t notifications = 0;  // reporter messages read from the group
    uint64_t dumps = 0;          // dumps completed
    uint64_t overruns = 0;       // ENOBUFS: notifications the kernel dropped
    uint64_t malformed = 0;      // messages decode refused, or not from the kernel
    uint64_t records = 0;        // devlink_health records made
  };

  // `stand_in`: the path of a socket that stands in for the kernel's generic netlink
  // (netlink/netlink_socket.h); "" for the kernel's own.
  DevlinkMonitor(EventLoop& loop, const Clock& clock, DevlinkConfig config, Handles handles,
                 Publish publish, Confirm confirm, std::string stand_in = {});
  DevlinkMonitor(const DevlinkMonitor&) = delete;
  DevlinkMonitor& operator=(const DevlinkMonitor&) = delete;
  ~DevlinkMonitor();

  // Opens the socket, resolves the family, joins its group and dumps the reporters (their
  // records go out as the dump is read, on the loop). Never throws for what the kernel says.
  void start();
  void set_config(DevlinkConfig config);
  // The RDMA devices changed (one added, recovered, closed or renamed): every reporter and port
  // is read again, so that a reporter whose notification came while its device was away, or
  // that its driver recreated without one, is known as it is now.
  void devices_changed();
  const DevlinkConfig& config() const { return config_; }
  const Stats& stats() const { return stats_; }
  StatusReply::Devlink status() const;

 private:
  struct Known {
    devlink::Reporter reporter;
    int64_t since_us = 0;           // the wall time of its last change
    int64_t recovered_mono_us = 0;  // when the daemon last saw it recover; 0 never
    uint64_t generation = 0;        // the dump generation it was last seen in (dump_generation_)
    // The devices and ports its last record went to: a device that opens later (one in its
    // error state when the daemon started) gets a found_in_error of its own (remap()).
    std::vector<DevlinkTarget> targets;
  };
  enum class DumpStage : uint8_t { kPorts, kReporters };
  void fail(const std::string& why);
  void on_readable();
  void start_dump();
  bool send_dump_request();
  void on_dump_readable();
  void end_dump();
  // The reporter dump read to its end: every reporter it did not list (and no notification
  // named since it began) is gone.
  void forget_unlisted(std::vector<Record>& out);
  // An instance registered or unregistered, a devlink port new or deleted.
  void on_instance(const devlink::Instance& i, std::vector<Record>& out);
  void on_port(const devlink::Port& p);
  // A reporter gone with its instance: forgotten, and a `removed` record for what it held.
  void forget(std::map<std::string, Known>::iterator it, std::vector<Record>& out);
  // The records of one reporter change for every device and port it concerns (or `only` those
  // of them); returns them.
  std::vector<DevlinkTarget> emit(const DevlinkHealthEvent& e, std::vector<Record>& out,
                                  const std::vector<DevlinkTarget>* only = nullptr);
  // After a complete read: a reporter in error that now concerns a device or port its records
  // did not reach (the device opened since) tells them it is in error (found_in_error).
  void remap(std::vector<Record>& out);
  std::string port_netdev(const std::string& handle, int64_t port_index) const;
  std::vector<DevlinkInError> in_error() const;
  // What a reporter of `handle` (on devlink port `port_index`) concerns, as devices are now.
  std::vector<DevlinkTarget> targets_of(const std::string& handle, int64_t port_index) const;
  // One reporter's state from a notification or a dump: its records, if it changed.
  void apply(const devlink::Reporter& r, bool dumped, std::vector<Record>& out);
  void lost(std::vector<Record>& out);
  // A notification from before the last dump (dumped_counts_).
  bool older_than_dump(const devlink::Reporter& r);
  bool drop(const devlink::Message& m, bool from_kernel);  // malformed or foreign: counted

  EventLoop& loop_;
  const Clock& clock_;
  DevlinkConfig config_;
  Handles handles_;
  Publish publish_;
  Confirm confirm_;
  std::string stand_in_;
  netlink::NetlinkSocket socket_;
  std::unique_ptr<IoWatch> watch_;
  devlink::Family family_;
  // A dump in progress: its own socket, so its answers never mix with the notifications.
  netlink::NetlinkSocket dump_socket_;
  std::unique_ptr<IoWatch> dump_watch_;
  uint32_t dump_seq_ = 0;
  DumpStage dump_stage_ = DumpStage::kPorts;
  bool dump_again_ = false;  // an overrun (or a change) during a dump: dump once more after it
  uint64_t dump_generation_ = 0;
  // The counts each reporter had in the last dump, while notifications older than it may still
  // wait in the notification socket (its own socket: no order between the two). A notification
  // with lower counts is from before the dump and is dropped; the first with counts as high or
  // higher ends the reporter's guard (the socket keeps the kernel's order), and all of them
  // end when the dump ends with the socket empty, or else with the first complete read of the
  // socket that began after it (`guards_armed_`).
  std::map<std::string, std::pair<uint64_t, uint64_t>> dumped_counts_;
  bool guards_armed_ = false;
  std::map<std::string, Known> known_;  // by handle, port index and reporter name
  // Each devlink port's netdev name ("" for a port with none), by handle and port index.
  std::map<std::string, std::string> ports_;
  std::string unavailable_;  // why there is no devlink; "" while it works
  bool started_ = false;
  bool logged_malformed_ = false;
  Stats stats_;
  std::vector<uint8_t> buf_;
};

}  // namespace rdma_eventd::daemon
