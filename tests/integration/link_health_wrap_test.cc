// Counter widths end to end (docs/health.md, "Counter widths and wraps"): mlx5's hw_counters/ Q
// counters are 32-bit firmware fields that wrap, and the daemon, knowing the device's driver
// (mlx5_core), counts the growth across a wrap against a transport rule rather than taking the
// drop for a reset.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "daemon_process.h"
#include "link_health_fixture.h"
#include "temp_dir.h"
#include "test_support.h"

namespace rdma_eventd::test {
namespace {

TEST_F(LinkHealth, AnMlx5QCounterThatWrapsPast2To32CountsItsGrowthAndIsNoReset) {
  const std::string seq = "hw_counters/out_of_sequence";
  json link = fast_link_health();
  link["transport"] = json::array({{{"counter", seq}, {"count", 100}, {"window_s", 5}}});
  // 46 below 2^32 when the daemon first reads it: its baseline.
  inject(sim_, {"counter", "set", "mlx5_0/1", "out_of_sequence", "4294967250"});
  DaemonProcess& d = start_judged(link);
  ASSERT_TRUE(judged_clean(d, "mlx5_0", 1));

  // 150 more: past 2^32, the 32-bit field reads 104.
  inject(sim_, {"counter", "add", "mlx5_0/1", "out_of_sequence", "150"});
  EXPECT_EQ(rdmatest::read_file(sim_.dir() + "/sys/class/infiniband/mlx5_0/ports/1/" + seq),
            "104\n");
  // The first link_quality record of any port is the bad one: no reset before it.
  const Record bad = first_link(d, "mlx5_0/1", "bad");
  const LinkQualityEvent want{.change = "bad",
                              .fault = "transport_errors",
                              .counter = seq,
                              .value = 104,
                              .count = 150,
                              .allowed = 99,
                              .window_s = 5,
                              .rate_gbps = 200};
  EXPECT_EQ(*bad.link, want);
  EXPECT_EQ(next_port_verdict(d, "mlx5_0/1", "degraded").reason, "transport_errors");
  // Never pegged on the way: a wrapping counter at its top counts on.
  const json port = link_port(d.status(), "mlx5_0", 1);
  EXPECT_EQ(port["counters"][seq], 104) << port;
  EXPECT_EQ(port["quality"], "bad") << port;
  EXPECT_EQ(port["pegged"], "") << port;
}

}  // namespace
}  // namespace rdma_eventd::test
