// The simulator process: owns the fabric directory, the shared state, the sysfs tree, the open
// contexts and the control socket, and runs the single-threaded event loop until `stop`,
// SIGTERM or SIGINT.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "contexts.h"
#include "devlink_health.h"
#include "devlink_standin.h"
#include "devx_channels.h"
#include "event_loop.h"
#include "fabric.h"
#include "hotplug.h"
#include "rdma_netlink_standin.h"
#include "shm_region.h"
#include "sysfs_tree.h"
#include "topology.h"
#include "udev_emitter.h"
#include "unique_fd.h"

namespace rdmasim {

struct SimulatorOptions {
  std::string dir;  // absolute
  uint32_t query_latency_us = 0;
  bool no_rdma = false;
  bool udev = false;  // emit udev netlink messages on hot-plug (udev_emitter.h)
  // The kernel DIR/rdma-netlink.sock answers as (rdma_netlink_standin.h).
  rdma_netlink_wire::Kernel rdma_netlink = rdma_netlink_wire::Kernel::kMonitor;
};

// What mlx5 did around a fw_fatal report (control_mlx5.cc).
struct Mlx5Fatal {
  std::string device;             // the mlx5 device whose fw_fatal a command names; "" none
  std::vector<Delivery> entered;  // mlx5_enter_error_state's DEVICE_FATAL
  std::vector<Delivery> reload;   // the unload's disassociation (recovery or driver unload)
};

class Simulator {
 public:
  // Creates everything in the fabric directory; throws std::exception with a message for the
  // user when it cannot (another simulator runs there, permissions, path too long).
  Simulator(const SimulatorOptions& options, Topology topology);
  ~Simulator();
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  void run();

 private:
  struct Connection;
  struct Waiter {
    uint64_t connection;
    std::string device;
    std::chrono::steady_clock::time_point deadline;
    nlohmann::json reply;
  };

  void accept_connections();
  void on_readable(uint64_t id);
  void on_line(uint64_t id, const std::string& line);
  void open_context(uint64_t id, const std::string& line);
  void send_reply(uint64_t id, const nlohmann::json& reply);
  void flush_connection(uint64_t id);
  void close_connection(uint64_t id);
  void reap_connections();
  void check_waiters();
  void on_context_closed(uint64_t context_id, int32_t device_index);
  int next_timeout_ms() const;
  uint32_t assign_devx_uid(const DeviceEntry& e, int mode, int* err);

  // devx_requests.cc: the DEVX commands of the stand-in libmlx5, on a context's connection.
  ContextReply on_context_request(const ContextView& context, const std::string& line, UniqueFd fd);
  ContextReply create_channel(const ContextView& context, const std::string& line);
  ContextReply subscribe(const ContextView& context, const std::string& line, UniqueFd fd);

  // control.cc: one request, one reply (or a deferred reply for unplug --wait).
  std::optional<nlohmann::json> handle(uint64_t connection, const nlohmann::json& request);
  nlohmann::json handle_storm(const nlohmann::json& request);
  nlohmann::json handle_cycle(const nlohmann::json& request);
  nlohmann::json stats() const;
  // control_devx.cc: module, temp-warn, general-event, devx-event, devx-storm, alloc-fail,
  // devx-destroy.
  std::optional<nlohmann::json> handle_devx(const std::string& cmd, const nlohmann::json& request);
  nlohmann::json handle_devx_storm(const nlohmann::json& request);
  // control_counters.cc: counter add, set, fail and reset.
  nlohmann::json handle_counter(const nlohmann::json& request);
  // control_devlink.cc: devlink show, report, recover, set, dump-clear, add, remove.
  nlohmann::json handle_devlink(const nlohmann::json& request);
  // control_mlx5.cc: what mlx5 does around its fw_fatal reporter, and `reload`.
  Mlx5Fatal mlx5_fatal_of(const DevlinkHealth::Address& address);
  void enter_error_state(Mlx5Fatal& f);
  DevlinkHealth::DriverRecover mlx5_recover(Mlx5Fatal& f);
  void unload_in_error(Mlx5Fatal& f);
  // The function's driver unloads (and, with `load`, loads) it: the device's instances stay.
  std::vector<Delivery> function_reload(const std::string& device, bool load);
  nlohmann::json handle_reload(const nlohmann::json& request);

  std::string dir_;
  KernelVersion kernel_;  // the topology's "kernel"
  UniqueFd dir_lock_;
  EventLoop loop_;
  ShmRegion shm_;
  SysfsTree sysfs_;
  std::unique_ptr<HotplugObserver> hotplug_;
  const UdevEmitter* udev_ = nullptr;               // hotplug_ when --udev
  std::unique_ptr<EthtoolFamily> ethtool_;          // made once the fabric is
  std::unique_ptr<DevlinkStandIn> devlink_socket_;  // made once the fabric is
  // Made once the fabric is; outlives it (the fabric's hot-plug reaches it through the fanout).
  std::unique_ptr<RdmaNetlinkStandIn> rdma_netlink_;
  DevlinkHealth devlink_;
  HotplugFanout hotplug_fanout_;  // hotplug_, devlink_, then rdma_netlink_
  ChannelRegistry channels_;
  ContextRegistry contexts_;
  std::unique_ptr<Fabric> fabric_;
  UniqueFd listen_fd_;
  IoWatch listen_watch_;
  UniqueFd signal_fd_;
  IoWatch signal_watch_;
  std::map<uint64_t, std::unique_ptr<Connection>> connections_;
  std::vector<uint64_t> to_close_;
  std::vector<Waiter> waiters_;
  uint64_t next_connection_ = 1;
  uint32_t next_devx_uid_ = 1;
  bool stopping_ = false;
};

}  // namespace rdmasim
