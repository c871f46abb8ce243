// The README's main job: scripts/demo.sh runs the daemon on the simulated fabric and shows
// records flowing: through rdma-eventctl monitor, as JSON on the socket, and in the journal.
#include <gtest/gtest.h>

#include <algorithm>
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
  std::vector<std::string> expected = {
      "port_health", "port_health",      "port_health",   "port_err",   "port_health",
      "port_active", "port_health",      "lid_change",    "gid_change", "gid_change",
      "pkey_change", "module_unplugged", "module_plugged"};
  std::vector<std::string> expected_monitored = {
      "mlx5_0/1 snapshot",      "mlx5_1/1 snapshot",    "mlx5_1/2 snapshot",
      "mlx5_0/1 port_err",      "mlx5_0/1 port_health", "mlx5_0/1 port_active",
      "mlx5_0/1 port_health",   "mlx5_0/1 lid_change",  "mlx5_1/1 gid_change",
      "mlx5_1/1 gid_change",    "mlx5_0/1 pkey_change", "mlx5_1/1 module_unplugged",
      "mlx5_1/1 module_plugged"};
  // Then mlx5_0's fw_fatal report and mlx5's recovery, which unregisters the RDMA device and
  // registers it again before the recovery is notified: the device's records (netlink) and the
  // reporter's (devlink) come on two sockets in no order between them, so this part is checked
  // for what it holds: both devlink records, all of mlx5_0, ending healthy. mlx5_1's fw report
  // then degrades both its ports.
  ASSERT_GE(events.size(), expected.size() + 3) << r.out;
  ASSERT_GE(monitored.size(), expected_monitored.size() + 3) << r.out;
  const std::vector<std::string> tail = {"devlink_health", "port_health", "port_health"};
  const std::vector<std::string> tail_monitored = {"mlx5_1 devlink_health", "mlx5_1/1 port_health",
                                                   "mlx5_1/2 port_health"};
  EXPECT_EQ(std::vector<std::string>(events.begin(), events.begin() + expected.size()), expected);
  EXPECT_EQ(std::vector<std::string>(events.end() - 3, events.end()), tail) << r.out;
  EXPECT_EQ(
      std::vector<std::string>(monitored.begin(), monitored.begin() + expected_monitored.size()),
      expected_monitored);
  EXPECT_EQ(std::vector<std::string>(monitored.end() - 3, monitored.end()), tail_monitored)
      << r.out;
  const std::vector<std::string> recovery(monitored.begin() + expected_monitored.size(),
                                          monitored.end() - 3);
  EXPECT_EQ(std::count(recovery.begin(), recovery.end(), "mlx5_0 devlink_health"), 2) << r.out;
  for (const std::string& m : recovery)
    EXPECT_TRUE(m.starts_with("mlx5_0")) << m;
  EXPECT_EQ(recovery.back(), "mlx5_0/1 port_health") << r.out;
  const size_t last_verdict = r.out.rfind("mlx5_0 port 1: health ");
  ASSERT_NE(last_verdict, std::string::npos) << r.out;
  EXPECT_TRUE(std::string_view(r.out)
                  .substr(last_verdict)
                  .starts_with("mlx5_0 port 1: health healthy (was "))
      << r.out.substr(last_verdict, 80);
  for (const char* line :
       {"mlx5_0: devlink health fw_fatal (pci/0000:00:02.0): reported an error (errors 1, "
        "recoveries 0)",
        "mlx5_0: devlink health fw_fatal (pci/0000:00:02.0): recovered (errors 1, recoveries 1)",
        "mlx5_0 port 1: health fatal (was healthy): device_fatal",
        "mlx5_1/2  port_health       health degraded (was healthy): firmware_errors"}) {
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
  }
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
