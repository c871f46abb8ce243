// The simulator, spoken to directly (sim/common/protocol.h): its control socket for injecting
// events with a precise timestamp, and its shared state file for what each context has read,
// acked and queried (sim/common/shm_layout.h), which costs the simulator nothing to watch.
#pragma once

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/shm_layout.h"
#include "util.h"

namespace rdma_eventd::bench {

class SimControl {
 public:
  explicit SimControl(std::string dir) : dir_(std::move(dir)) {}

  // A control connection made in advance, so that the moment of injection is one send().
  class Request {
   public:
    // Sends the request; returns the time just before the send (CLOCK_MONOTONIC ns).
    int64_t send(const nlohmann::json& req);
    // Sends a request line already made ("{...}\n"), for callers that read the clock themselves.
    void send_line(const std::string& line) { write_all(fd_.get(), line); }
    // The reply; throws when the simulator refused the request.
    nlohmann::json reply(int timeout_ms = 60000);
    int fd() const { return fd_.get(); }

   private:
    friend class SimControl;
    explicit Request(UniqueFd fd) : fd_(std::move(fd)) {}
    UniqueFd fd_;
    std::string carry_;
  };

  Request connect() const;
  nlohmann::json request(const nlohmann::json& req) const;

  // {"cmd":"storm","count":N,"targets":[...]}; an empty `targets` is every port.
  static nlohmann::json storm(uint64_t count, const std::vector<std::string>& targets);
  // {"cmd":"devx_storm","count":N,"devices":[...]}: N vendor events over the DEVX channels of
  // `devices` (an empty list is every live mlx5 device with DEVX).
  static nlohmann::json devx_storm(uint64_t count, const std::vector<std::string>& devices);
  // One raw event of `type` on `target` ("mlx5_0/1"), no state change: one record.
  static nlohmann::json event(const std::string& target, uint32_t type);
  // A devlink health report of `reporter` on `device`'s devlink instance ("rdma-sim devlink
  // report DEV REPORTER"): one notification to the daemon, one devlink_health record, when the
  // reporter does not recover (mlx5's fw).
  static nlohmann::json devlink_report(const std::string& device, const std::string& reporter);

 private:
  std::string dir_;
};

// The fabric's state file, mapped read-only.
class SimState {
 public:
  explicit SimState(const std::string& dir);
  ~SimState();
  SimState(const SimState&) = delete;
  SimState& operator=(const SimState&) = delete;

  // The calls the simulator counts for each context (rdmasim::ShmContext), by name: the events
  // read and acked, and the port, GID and P_Key queries.
  struct CountedCall {
    const char* name;
    uint64_t rdmasim::ShmContext::*count;
  };
  static constexpr CountedCall kCountedCalls[] = {
      {"read", &rdmasim::ShmContext::read},
      {"acked", &rdmasim::ShmContext::acked},
      {"port_queries", &rdmasim::ShmContext::port_queries},
      {"gid_queries", &rdmasim::ShmContext::gid_queries},
      {"pkey_queries", &rdmasim::ShmContext::pkey_queries},
  };
  // Sums over the contexts opened by `pids`: how many, and each counted call, in
  // kCountedCalls' order.
  struct Counters {
    int contexts = 0;
    std::array<uint64_t, std::size(kCountedCalls)> calls{};
    uint64_t acked() const { return calls[1]; }
  };
  Counters of(const std::vector<pid_t>& pids) const { return sum(slots(pids)); }
  // The context slots of `pids`, found once, then summed cheaply as often as needed.
  std::vector<int> slots(const std::vector<pid_t>& pids) const;
  Counters sum(const std::vector<int>& slots) const;
  uint32_t query_latency_us() const;

 private:
  const rdmasim::ShmFabric* fabric_ = nullptr;
  size_t size_ = 0;
};

}  // namespace rdma_eventd::bench
