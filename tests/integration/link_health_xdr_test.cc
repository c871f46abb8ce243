// An XDR port end to end: ConnectX-8 at 4x XDR (800 Gb/s), which the kernel reports as 0 in
// ibv_port_attr's 8-bit active_speed and as "800 Gb/sec (4X XDR)" in sysfs `rate` (the
// simulator does both). The real daemon, on rdma-core 44, takes the speed from sysfs: the port
// is judged at XDR's allowance and degraded by bit_errors once over it, where a daemon that
// knew only active_speed would leave it unjudged.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "daemon_process.h"
#include "link_health_fixture.h"
#include "process.h"
#include "temp_dir.h"
#include "test_support.h"

namespace rdma_eventd::test {
namespace {

constexpr const char* kXdrTopology = R"({"devices": [
    {"name": "mlx5_0", "node_guid": "0c42:a103:00f6:5e80", "link_layer": "infiniband",
     "ports": [{"state": "active", "lid": 9, "sm_lid": 1, "width": "4x", "speed": "xdr"}]}]})";

TEST(LinkHealthXdr, AnXdrPortIsDegradedByBitErrorsAtXdrsAllowance) {
  rdmatest::TempDir dir{"rdma-xdr"};
  SimFabric sim{dir.write("xdr.json", kXdrTopology)};
  rdmatest::TempDir state{"rdma-xdr-state"};
  // 1.2e-12 over 5 s at 800 Gb/s allows 4.8 symbol errors (at NDR's 400 Gb/s it would be 2.4,
  // at an unknown rate none would be judged).
  json link = fast_link_health();
  link["bit_errors"] = json::array({{{"ber", 1.2e-12}, {"window_s", 5}}});
  DaemonProcess d(sim, link_options(sim, state.path(), link));
  EXPECT_EQ(next_port_verdict(d, "mlx5_0/1", "healthy").reason, "first_seen");
  const json port = d.status()["devices"][0]["ports"][0];
  EXPECT_EQ(port["speed"], "xdr") << port;
  EXPECT_EQ(port["rate_gbps"], 800) << port;
  // Judged, not unknown (rate_unknown): a baseline and a read that found it clean.
  ASSERT_TRUE(judged_clean(d, "mlx5_0", 1)) << link_port(d.status(), "mlx5_0", 1);

  // Four errors are within the allowance: read, and still clean.
  inject(sim, {"counter", "add", "mlx5_0/1", "symbol_error", "4"});
  ASSERT_TRUE(rdmatest::wait_until(
      [&] { return link_port(d.status(), "mlx5_0", 1)["counters"]["symbol_error"] == 4; },
      std::chrono::seconds(10)));
  EXPECT_EQ(link_port(d.status(), "mlx5_0", 1)["quality"], "clean");
  // One more is over it.
  inject(sim, {"counter", "add", "mlx5_0/1", "symbol_error", "1"});
  const Record bad = first_link(d, "mlx5_0/1", "bad");
  ASSERT_TRUE(bad.link);
  LinkQualityEvent want = bad_bit_errors(5, 5, 4, 5, 800);
  ASSERT_DOUBLE_EQ(bad.link->ber, 5 / (800e9 * 5));
  want.ber = bad.link->ber;
  EXPECT_EQ(*bad.link, want);
  const Record degraded = next_port_verdict(d, "mlx5_0/1", "degraded");
  EXPECT_EQ(degraded.reason, "bit_errors");
  EXPECT_EQ(degraded.previous_health, "healthy");
}

}  // namespace
}  // namespace rdma_eventd::test
