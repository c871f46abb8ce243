// A simulated fabric for one test: `rdma-sim start --foreground` in a private directory, with
// helpers to drive it and to run programs against it.
//
//   rdmatest::SimFabric sim(rdmatest::topology("two-adapters"));
//   rdmatest::Process watch = sim.spawn({"ibv_asyncwatch", "-d", "mlx5_0"});
//   watch.require_line(starts_with("mlx5_0: async event FD"), 10s);
//   ASSERT_EQ(sim.ctl({"port", "down", "mlx5_0/1"}).exit_code(), 0);
//   EXPECT_EQ(watch.require_next_line(10s), "  event_type IBV_EVENT_PORT_ERR (10), port 1");
//   nlohmann::json stats = sim.stats();
//
// Every program run through spawn()/run() gets the stand-in libibverbs first in LD_LIBRARY_PATH
// and RDMA_SIM_DIR; env() gives the same settings for callers that build their own SpawnOptions.
// The destructor stops the simulator (`rdma-sim stop`, then SIGTERM/SIGKILL by PID) and removes
// the directory.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "process.h"
#include "temp_dir.h"

namespace rdmatest {

struct SimOptions {
  uint32_t query_latency_us = 0;
  bool no_rdma = false;
  // --udev: udev messages for hot-plug; the test must be in a network namespace of its own
  // (enter_private_network()).
  bool udev = false;
  // --rdma-netlink: the kernel DIR/rdma-netlink.sock stands for ("monitor", "rename-less",
  // "none"); empty: the simulator's default (monitor).
  std::string rdma_netlink;
  std::vector<std::string> extra_args;  // more `rdma-sim start` arguments
  Duration ready_timeout = std::chrono::seconds(30);
};

class SimFabric {
 public:
  // topology_path empty: an empty fabric. Throws HarnessError if the simulator does not come up.
  explicit SimFabric(const std::string& topology_path, const SimOptions& options = {});
  ~SimFabric();
  SimFabric(const SimFabric&) = delete;
  SimFabric& operator=(const SimFabric&) = delete;

  const std::string& dir() const { return dir_; }
  Process& process() { return *sim_; }

  // `rdma-sim --dir DIR ARGS...`: exit code, stdout and stderr.
  CommandResult ctl(const std::vector<std::string>& args,
                    Duration timeout = std::chrono::seconds(60)) const;
  // Same with --json; the parsed object (HarnessError if stdout is not one JSON object).
  nlohmann::json ctl_json(const std::vector<std::string>& args,
                          Duration timeout = std::chrono::seconds(60)) const;
  nlohmann::json stats() const;  // `rdma-sim stats --json`
  nlohmann::json show() const;   // `rdma-sim show --json`
  // Polls stats until pred(stats) holds; returns the last stats, or throws HarnessError.
  nlohmann::json wait_stats(const std::function<bool(const nlohmann::json&)>& pred,
                            Duration timeout = std::chrono::seconds(30),
                            const std::string& what = "the expected accounting") const;

  // The kernel stand-ins' sockets. A daemon uses them when told to (RDMA_EVENTD_DEVLINK_SOCKET,
  // RDMA_EVENTD_RDMA_NETLINK_SOCKET: rdma_netlink_env()); env() leaves them out, so that a
  // test chooses which kernel interface its daemon sees.
  std::string devlink_socket() const { return dir_ + "/devlink.sock"; }
  std::string rdma_netlink_socket() const { return dir_ + "/rdma-netlink.sock"; }
  // With the release of the kernel the stand-in models (RDMA_EVENTD_KERNEL_RELEASE), which
  // says whether its monitor announces renames.
  std::map<std::string, std::string> rdma_netlink_env() const {
    return {{"RDMA_EVENTD_RDMA_NETLINK_SOCKET", rdma_netlink_socket()},
            {"RDMA_EVENTD_KERNEL_RELEASE", kernel_release_}};
  }

  // The environment settings a program needs to see this fabric.
  std::map<std::string, std::string> env() const;
  SpawnOptions spawn_options(SpawnOptions base = {}) const;
  Process spawn(const std::vector<std::string>& argv, SpawnOptions base = {}) const;
  CommandResult run(const std::vector<std::string>& argv, SpawnOptions base = {},
                    Duration timeout = std::chrono::seconds(60)) const;

  // Stops the simulator and waits for it; returns how the simulator process ended.
  ExitStatus stop();

 private:
  std::unique_ptr<TempDir> tmp_;
  std::string dir_;
  std::string kernel_release_;  // of the --rdma-netlink kind
  std::unique_ptr<Process> sim_;
};

// Runs a control command of the simulator (`rdma-sim port down mlx5_0/1`, say) and throws
// HarnessError, with its error output, when the simulator refuses it.
void inject(const SimFabric& sim, const std::vector<std::string>& args);

// Predicates for Process::wait_for_line.
std::function<bool(const std::string&)> starts_with(const std::string& prefix);
std::function<bool(const std::string&)> contains(const std::string& text);

}  // namespace rdmatest
