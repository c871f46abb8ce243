// speed-change: the one DEVICE_SPEED_CHANGE (20) of the whole device, element 0, that mlx5's
// handle_port_change (drivers/infiniband/hw/mlx5/main.c, Linux 7.0) dispatches when the effective
// speed of its ports changes; rdma-core 44's libibverbs has no name for the number. It changes
// no port attribute: the effective speed is not among ibv_query_port's. And an XDR port: 0 in
// ibv_port_attr's 8-bit active_speed, its speed in sysfs `rate` only.
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

TEST(SpeedChange, OneDeviceEventThatChangesNoPortAttribute) {
  // Every open context gets one event for the device; what ibv_query_port, sysfs and the
  // simulator's own view say of every port stays as it was.
  Sim sim(two_adapters());
  Opened o(sim, "mlx5_1");
  Opened other(sim, "mlx5_1");
  const json before = sim.show();
  const json attrs_before = port_attr(o, 2);
  o.sh.send("get_event " + o.ctx);
  const json out = sim.ctl_json({"speed-change", "mlx5_1"});
  const json ev = o.sh.receive();
  EXPECT_EQ(ev["type"], kDeviceSpeedChange);
  EXPECT_EQ(ev["port_num"], 0);
  EXPECT_EQ(port_attr(o, 2), attrs_before);
  EXPECT_EQ(rate_file(sim, "mlx5_1", 2), "100 Gb/sec (4X EDR)\n");
  EXPECT_EQ(rate_file(sim, "mlx5_1", 1), "100 Gb/sec (4X EDR)\n");
  EXPECT_EQ(sim.show(), before);
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

TEST(SpeedChange, ARetrainIsAPortDownAndUpThatChangesTheRate) {
  // What changes ibv_query_port's width and speed is the link training again: PORT_ERR, then
  // PORT_ACTIVE at the new rate, which sysfs `rate` shows too.
  Sim sim(two_adapters());
  Opened o(sim, "mlx5_1");
  EXPECT_EQ(event_after(o, sim, {"port", "down", "mlx5_1/2"})["type"], IBV_EVENT_PORT_ERR);
  const json ev = event_after(o, sim, {"port", "up", "mlx5_1/2", "--width", "1x"});
  EXPECT_EQ(ev["type"], IBV_EVENT_PORT_ACTIVE);
  EXPECT_EQ(ev["port_num"], 2);
  EXPECT_EQ(port_attr(o, 2)["active_width"], 1);   // IB_WIDTH_1X
  EXPECT_EQ(port_attr(o, 2)["active_speed"], 32);  // EDR, as before
  EXPECT_EQ(port_attr(o, 1)["active_width"], 2);   // IB_WIDTH_4X
  EXPECT_EQ(rate_file(sim, "mlx5_1", 2), "25 Gb/sec (1X EDR)\n");
  EXPECT_EQ(rate_file(sim, "mlx5_1", 1), "100 Gb/sec (4X EDR)\n");
}

TEST(SpeedChange, IsRefusedOnADeviceInFatalStateWithNoEvent) {
  Sim sim(two_adapters());
  ctl_ok(sim, {"fatal", "mlx5_0"});
  const json queued = sim.stats()["totals"]["events_queued"];
  const rdmatest::CommandResult r = sim.ctl({"speed-change", "mlx5_0"});
  EXPECT_EQ(r.exit_code(), 1);
  EXPECT_EQ(r.err, "rdma-sim: device mlx5_0 is in fatal state: unplug and replug it first\n");
  EXPECT_EQ(sim.stats()["totals"]["events_queued"], queued);
}

// A ConnectX-8 port at 4x XDR: the kernel's speed code 0x100 truncated to 0 in the 8-bit field
// (copy_port_attr_to_resp), rate_show's "800 Gb/sec (4X XDR)" in sysfs.
constexpr const char* kXdrTopology = R"({"devices": [
    {"name": "mlx5_0", "node_guid": "0x0c42a10300f65e80",
     "ports": [{"speed": "xdr"}, {"speed": "xdr", "width": "1x"}]}]})";

TEST(XdrPort, ZeroInActiveSpeedItsRateInSysfs) {
  rdmatest::TempDir tmp;
  Sim sim(tmp.write("xdr.json", kXdrTopology));
  Opened o(sim, "mlx5_0");
  const json a = port_attr(o, 1);
  EXPECT_EQ(a["active_speed"], 0);
  EXPECT_EQ(a["active_width"], 2);  // IB_WIDTH_4X
  EXPECT_EQ(rate_file(sim, "mlx5_0", 1), "800 Gb/sec (4X XDR)\n");
  EXPECT_EQ(rate_file(sim, "mlx5_0", 2), "200 Gb/sec (1X XDR)\n");
  EXPECT_EQ(sim.show()["devices"][0]["ports"][0]["speed"], "xdr");
}

TEST(XdrPort, IbvDevinfoShowsWhatRdmaCore44ShowsForSpeedZero) {
  // rdma-core 44's devinfo.c speed_str() knows codes 1 to 128 and prints "invalid speed" for 0.
  rdmatest::TempDir tmp;
  Sim sim(tmp.write("xdr.json", kXdrTopology));
  const rdmatest::CommandResult r = sim.run({"ibv_devinfo", "-v", "-d", "mlx5_0", "-i", "1"});
  EXPECT_EQ(r.exit_code(), 0) << r.err;
  const std::string want =
      "\t\t\tactive_width:\t\t4X (2)\n\t\t\tactive_speed:\t\tinvalid speed (0)\n";
  EXPECT_TRUE(r.out.find(want) != std::string::npos) << r.out;
}

TEST(XdrPort, APortRetrainedToXdrAndBack) {
  Sim sim(two_adapters());
  Opened o(sim, "mlx5_0");
  ctl_ok(sim, {"port", "down", "mlx5_0/1"});
  ctl_ok(sim, {"port", "up", "mlx5_0/1", "--speed", "xdr"});
  EXPECT_EQ(port_attr(o, 1)["active_speed"], 0);
  EXPECT_EQ(rate_file(sim, "mlx5_0", 1), "800 Gb/sec (4X XDR)\n");
  ctl_ok(sim, {"port", "down", "mlx5_0/1"});
  ctl_ok(sim, {"port", "up", "mlx5_0/1", "--speed", "ndr"});
  EXPECT_EQ(port_attr(o, 1)["active_speed"], 128);
  EXPECT_EQ(rate_file(sim, "mlx5_0", 1), "400 Gb/sec (4X NDR)\n");
}

}  // namespace
}  // namespace simtest
