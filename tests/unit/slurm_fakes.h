// A fake Slurm for rdma-eventd-slurm's tests (scontrol and sinfo as the follower runs them), the
// daemon's port verdicts they feed it, and a state directory of the test's own.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "schema/health_reply.h"
#include "scontrol.h"

namespace slurm_fakes {

using rdma_eventd::HealthReply;
using rdma_eventd_slurm::CommandResult;
using rdma_eventd_slurm::CommandRunner;

// slurmctld as scontrol and sinfo see it: this node and `others` of its partition, up or away;
// counts the runs.
class FakeSlurm final : public CommandRunner {
 public:
  CommandResult run(const std::string& program, const std::vector<std::string>& args,
                    std::chrono::milliseconds) override {
    CommandResult r;
    r.kind = CommandResult::kExited;
    if (program == "sinfo") return list_nodes(args);
    if (!up) {
      r.exit_code = 1;
      r.output = "slurm_load_node error: Unable to contact slurm controller (connect failure)\n";
      ++failed_runs;
      return r;
    }
    r.exit_code = 0;
    if (args.at(0) == "show") {
      ++shows;
      r.output = "NodeName=testnode Arch=x86_64 NodeHostName=" + host_name + " State=" + state +
                 " Partitions=debug" +
                 (reason.empty() ? "" : " Reason=" + reason + " [root@2026-11-28T10:26:43]") +
                 comment + "\n";
      // What an admin does between two of our calls.
      if (after_show) std::exchange(after_show, nullptr)(*this);
      return r;
    }
    ++updates;
    if (args.at(2) == "state=resume") {
      state = "IDLE";
      reason.clear();
    } else {
      drain(args.at(3).substr(7));
    }
    return r;
  }
  // sinfo --noheader --Node --format=%N|%E --partition=debug
  CommandResult list_nodes(const std::vector<std::string>& args) {
    ++sinfos;
    last_sinfo = args;
    CommandResult r;
    r.kind = CommandResult::kExited;
    r.exit_code = up && sinfo_up ? 0 : 1;
    if (r.exit_code != 0) {
      r.output = "slurm_load_partitions: Unable to contact slurm controller (connect failure)\n";
      return r;
    }
    r.output = "testnode|" + (reason.empty() ? std::string("none") : reason) + "\n";
    for (const auto& [node, why] : others)
      r.output += node + "|" + why + "\n";
    return r;
  }
  // What `scontrol update state=drain reason=WHY` does, by the test's hand.
  void drain(std::string why) {
    state = "IDLE+DRAIN";
    reason = std::move(why);
  }
  bool up = true;
  std::string state = "IDLE";
  std::string reason;
  std::string comment;
  std::string host_name = "testnode";  // NodeHostName=
  std::function<void(FakeSlurm&)> after_show;
  std::map<std::string, std::string> others;  // the partition's other nodes and their reasons
  bool sinfo_up = true;
  std::vector<std::string> last_sinfo;
  int sinfos = 0;
  int shows = 0;
  int updates = 0;
  int failed_runs = 0;
};

// A port verdict of the daemon's: port 1 of `device`.
inline HealthReply::Port port(const char* device, const char* health, bool counted = true) {
  HealthReply::Port p;
  p.device = device;
  p.port = 1;
  p.health = health;
  p.reason = "x";
  p.counted = counted;
  if (p.health == "flapping") {
    p.downs_in_window = 3;
    p.window_s = 3600;
  }
  return p;
}

// The follower's state directory (its drain record), made for one test and removed after it.
struct StateDir {
  StateDir() {
    char name[] = "/tmp/rdma-slurm-state-XXXXXX";
    if (::mkdtemp(name)) path = name;
  }
  ~StateDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
  StateDir(const StateDir&) = delete;
  StateDir& operator=(const StateDir&) = delete;
  std::string path;
};

}  // namespace slurm_fakes
