// The README's main job: scripts/demo.sh runs the daemon on the simulated fabric and shows
// records flowing: through rdma-eventctl monitor, as JSON on the socket, and in the journal.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "paths.h"
#include "process.h"

namespace rdma_eventd::test {
namespace {

using namespace std::chrono_literals;

TEST(Demo, ShowsTheInjectedEventsAsRecordsAndJournalEntries) {
  const std::string build = rdmatest::bin_dir() + "/..";
  rdmatest::CommandResult r = rdmatest::run_command(
      {rdmatest::source_dir() + "/scripts/demo.sh", build, "--once"}, {}, 120s);
  ASSERT_EQ(r.exit_code(), 0) << r.out << r.err;

  // The JSON record lines socat read from the socket, and the events rdma-eventctl monitor
  // printed, both in the order the demo injected the events.
  std::vector<std::string> events;
  std::vector<std::string> monitored;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("{\"schema\":1,", 0) == 0)
      events.push_back(nlohmann::json::parse(line)["event"]);
    std::istringstream words(line);
    std::string time, severity, port, event;
    if (line.starts_with("20") && words >> time >> severity >> port >> event)
      monitored.push_back(port + " " + event);
  }
  // Port health's verdicts: each port's first at start, then down and healthy again right
  // after the link records that caused them.
  EXPECT_EQ(events, (std::vector<std::string>{
                        "port_health", "port_health", "port_health", "port_err", "port_health",
                        "port_active", "port_health", "lid_change", "gid_change", "gid_change",
                        "pkey_change", "module_unplugged", "module_plugged"}));
  EXPECT_EQ(monitored,
            (std::vector<std::string>{
                "mlx5_0/1 snapshot", "mlx5_1/1 snapshot", "mlx5_1/2 snapshot", "mlx5_0/1 port_err",
                "mlx5_0/1 port_health", "mlx5_0/1 port_active", "mlx5_0/1 port_health",
                "mlx5_0/1 lid_change", "mlx5_1/1 gid_change", "mlx5_1/1 gid_change",
                "mlx5_0/1 pkey_change", "mlx5_1/1 module_unplugged", "mlx5_1/1 module_plugged"}))
      << r.out;
  EXPECT_NE(r.out.find("mlx5_0 port 1: health down (was healthy): link_down, 1 down in 3600 s"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("rdma-eventd["), std::string::npos);
  EXPECT_NE(r.out.find("mlx5_0 port 1: link down (ACTIVE -> DOWN), was 200 Gb/s 4X HDR"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("    RDMA_EVENT=port_err"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace rdma_eventd::test
