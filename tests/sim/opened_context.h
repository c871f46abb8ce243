// One context opened by a verbs_shell, for the tests of what control commands change and queue.
#pragma once

#include <string>
#include <vector>

#include "sim_test.h"

namespace simtest {

struct Opened {
  VerbsShell sh;
  std::string ctx;
  Opened(const SimFabric& sim, const std::string& device) : sh(sim) {
    sh("list");
    const json c = sh("open L1:" + device);
    if (c["null"]) throw rdmatest::HarnessError("open failed: " + c.dump());
    ctx = c["ctx"];
  }
  json operator()(const std::string& command) { return sh(command + " " + ctx); }
  json with(const std::string& command, const std::string& args) {
    return sh(command + " " + ctx + " " + args);
  }
};

// Starts a blocking ibv_get_async_event, runs the command, and returns the event; the state
// queries that follow then observe what the reader would right after the event.
inline json event_after(Opened& o, const SimFabric& sim, const std::vector<std::string>& command) {
  o.sh.send("get_event " + o.ctx);
  ctl_ok(sim, command);
  return o.sh.receive();
}

}  // namespace simtest
