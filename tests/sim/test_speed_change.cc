// speed-change: the ports' new width and speed are published before the one
// DEVICE_SPEED_CHANGE (20) of the whole device, element 0, as Linux 7.0 sends it for an mlx5
// device in link aggregation; rdma-core 44's libibverbs has no name for the number.
#include <infiniband/verbs.h>

#include "opened_context.h"
#include "sim_test.h"

namespace simtest {
namespace {

constexpr int kDeviceSpeedChange = 20;

json port_attr(Opened& o, int port) {
  return o.with("query_port", std::to_string(port))["attr"];
}

std::string rate_file(const SimFabric& sim, const std::string& device, int port) {
  return rdmatest::read_file(sim.dir() + "/sys/class/infiniband/" + device + "/ports/" +
                             std::to_string(port) + "/rate");
}

TEST(SpeedChange, ThePortsGivenTakeTheirNewRateBeforeOneDeviceEvent) {
  // Port 2 of the dual-port RoCE adapter drops to 1x: its width changes, port 1 keeps its own,
  // and each open context gets one event for the device.
  Sim sim(two_adapters());
  Opened o(sim, "mlx5_1");
  Opened other(sim, "mlx5_1");
  o.sh.send("get_event " + o.ctx);
  const json out = sim.ctl_json({"speed-change", "mlx5_1", "--ports", "2", "--width", "1x"});
  const json ev = o.sh.receive();
  EXPECT_EQ(ev["type"], kDeviceSpeedChange);
  EXPECT_EQ(ev["port_num"], 0);
  EXPECT_EQ(port_attr(o, 2)["active_width"], 1);   // IB_WIDTH_1X
  EXPECT_EQ(port_attr(o, 2)["active_speed"], 32);  // EDR, as before
  EXPECT_EQ(port_attr(o, 1)["active_width"], 2);   // IB_WIDTH_4X
  EXPECT_EQ(rate_file(sim, "mlx5_1", 2), "25 Gb/sec (1X EDR)\n");
  EXPECT_EQ(rate_file(sim, "mlx5_1", 1), "100 Gb/sec (4X EDR)\n");
  // The kernel raises no firmware EQE for it: DEVX channels get nothing.
  EXPECT_EQ(out, json::parse(R"({"ok":true,
    "message":"mlx5_1: speed change: device_speed_change (element 0) to 2 contexts",
    "events":[{"device":"mlx5_1","type":20,"type_name":"device_speed_change","element":0,
               "contexts":2}]})"));
  const json second = other("get_event");
  EXPECT_EQ(second["type"], kDeviceSpeedChange);
  EXPECT_EQ(second["port_num"], 0);
  // The stand-in is rdma-core 44's: no name for 20 (index 0 of the table is type -1).
  EXPECT_EQ(o.sh("strings")["event_type"][kDeviceSpeedChange + 1], "unknown");
}

TEST(SpeedChange, WithoutPortsEveryPortChangesAndWithoutARateOnlyTheEventComes) {
  Sim sim(two_adapters());
  Opened o(sim, "mlx5_1");
  json ev = event_after(o, sim, {"speed-change", "mlx5_1", "--speed", "hdr"});
  EXPECT_EQ(ev["type"], kDeviceSpeedChange);
  for (int port : {1, 2}) {
    EXPECT_EQ(port_attr(o, port)["active_speed"], 64) << port;  // HDR
    EXPECT_EQ(port_attr(o, port)["active_width"], 2) << port;   // 4X
    EXPECT_EQ(rate_file(sim, "mlx5_1", port), "200 Gb/sec (4X HDR)\n") << port;
  }
  const json before = sim.show();
  ev = event_after(o, sim, {"speed-change", "mlx5_1"});
  EXPECT_EQ(ev["type"], kDeviceSpeedChange);
  EXPECT_EQ(ev["port_num"], 0);
  EXPECT_EQ(sim.show(), before);
}

TEST(SpeedChange, IsRefusedOnADeviceInFatalStateWithNoEvent) {
  Sim sim(two_adapters());
  ctl_ok(sim, {"fatal", "mlx5_0"});
  const json queued = sim.stats()["totals"]["events_queued"];
  const rdmatest::CommandResult r = sim.ctl({"speed-change", "mlx5_0", "--width", "1x"});
  EXPECT_EQ(r.exit_code(), 1);
  EXPECT_EQ(r.err, "rdma-sim: device mlx5_0 is in fatal state: unplug and replug it first\n");
  EXPECT_EQ(sim.stats()["totals"]["events_queued"], queued);
}

}  // namespace
}  // namespace simtest
