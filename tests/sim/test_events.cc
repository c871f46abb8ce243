// What each control command changes and queues, in the kernel's order: state first, then the
// event; one GID_CHANGE per GID entry; DEVICE_FATAL and silence on unplug.
#include <infiniband/verbs.h>

#include <filesystem>

#include "opened_context.h"
#include "sim_test.h"

namespace simtest {
namespace {

TEST(Events, PortDownAndUpChangeTheStateBeforeTheEvent) {
  Sim sim(two_adapters());
  Opened o(sim, "mlx5_0");
  const std::string state_file = sim.dir() + "/sys/class/infiniband/mlx5_0/ports/1/state";

  json ev = event_after(o, sim, {"port", "down", "mlx5_0/1"});
  EXPECT_EQ(ev["type"], IBV_EVENT_PORT_ERR);
  EXPECT_EQ(ev["port_num"], 1);
  json a = o.with("query_port", "1")["attr"];
  EXPECT_EQ(a["state"], IBV_PORT_DOWN);
  EXPECT_EQ(a["phys_state"], 2);  // Polling
  EXPECT_EQ(a["lid"], 0);
  EXPECT_EQ(a["sm_lid"], 0);
  EXPECT_EQ(rdmatest::read_file(state_file), "1: DOWN\n");
  EXPECT_EQ(rdmatest::read_file(sim.dir() + "/sys/class/infiniband/mlx5_0/ports/1/phys_state"),
            "2: Polling\n");

  ev = event_after(o, sim, {"port", "up", "mlx5_0/1"});
  EXPECT_EQ(ev["type"], IBV_EVENT_PORT_ACTIVE);
  a = o.with("query_port", "1")["attr"];
  EXPECT_EQ(a["state"], IBV_PORT_ACTIVE);
  EXPECT_EQ(a["phys_state"], 5);  // LinkUp
  EXPECT_EQ(a["lid"], 7);         // given back as the SM would
  EXPECT_EQ(a["sm_lid"], 1);
  EXPECT_EQ(rdmatest::read_file(state_file), "4: ACTIVE\n");
  EXPECT_EQ(rdmatest::read_file(sim.dir() + "/sys/class/infiniband/mlx5_0/ports/1/lid"), "0x7\n");

  ev = event_after(o, sim, {"port", "down", "mlx5_0/1", "--phys", "disabled"});
  EXPECT_EQ(o.with("query_port", "1")["attr"]["phys_state"], 3);
  ev = event_after(o, sim, {"port", "up", "mlx5_0/1", "--lid", "33", "--sm-lid", "2"});
  a = o.with("query_port", "1")["attr"];
  EXPECT_EQ(a["lid"], 33);
  EXPECT_EQ(a["sm_lid"], 2);
  const std::string rate = sim.dir() + "/sys/class/infiniband/mlx5_0/ports/1/rate";
  EXPECT_EQ(rdmatest::read_file(rate), "200 Gb/sec (4X HDR)\n");

  // A link that retrains at 1x: the width is the new one when PORT_ACTIVE is read, and stays.
  event_after(o, sim, {"port", "down", "mlx5_0/1"});
  ev = event_after(o, sim, {"port", "up", "mlx5_0/1", "--width", "1x"});
  EXPECT_EQ(ev["type"], IBV_EVENT_PORT_ACTIVE);
  a = o.with("query_port", "1")["attr"];
  EXPECT_EQ(a["active_width"], 1);   // IB_WIDTH_1X
  EXPECT_EQ(a["active_speed"], 64);  // HDR, as before
  EXPECT_EQ(rdmatest::read_file(rate), "50 Gb/sec (1X HDR)\n");
  event_after(o, sim, {"port", "down", "mlx5_0/1"});
  event_after(o, sim, {"port", "up", "mlx5_0/1"});
  EXPECT_EQ(o.with("query_port", "1")["attr"]["active_width"], 1);
  event_after(o, sim, {"port", "down", "mlx5_0/1"});
  event_after(o, sim, {"port", "up", "mlx5_0/1", "--width", "4x", "--speed", "edr"});
  a = o.with("query_port", "1")["attr"];
  EXPECT_EQ(a["active_width"], 2);
  EXPECT_EQ(a["active_speed"], 32);
  EXPECT_EQ(rdmatest::read_file(rate), "100 Gb/sec (4X EDR)\n");
}

TEST(Events, RoceLinkDownIsDisabledAndKeepsNoLid) {
  Sim sim(two_adapters());
  Opened o(sim, "mlx5_1");
  const json ev = event_after(o, sim, {"port", "down", "mlx5_1/2"});
  EXPECT_EQ(ev["type"], IBV_EVENT_PORT_ERR);
  EXPECT_EQ(ev["port_num"], 2);
  const json a = o.with("query_port", "2")["attr"];
  EXPECT_EQ(a["state"], IBV_PORT_DOWN);
  EXPECT_EQ(a["phys_state"], 3);  // Disabled
  EXPECT_EQ(a["lid"], 0);
  EXPECT_EQ(o.with("query_port", "1")["attr"]["state"], IBV_PORT_ACTIVE);  // the other port
}

TEST(Events, LidSmAndPkeyChangesAreVisibleWhenTheirEventArrives) {
  Sim sim(two_adapters());
  Opened o(sim, "mlx5_0");
  json ev = event_after(o, sim, {"lid", "mlx5_0/1", "0x2a"});
  EXPECT_EQ(ev["type"], IBV_EVENT_LID_CHANGE);
  EXPECT_EQ(o.with("query_port", "1")["attr"]["lid"], 42);

  ev = event_after(o, sim, {"sm", "mlx5_0/1", "9", "--sl", "3"});
  EXPECT_EQ(ev["type"], IBV_EVENT_SM_CHANGE);
  const json a = o.with("query_port", "1")["attr"];
  EXPECT_EQ(a["sm_lid"], 9);
  EXPECT_EQ(a["sm_sl"], 3);

  ev = event_after(o, sim, {"pkey", "mlx5_0/1", "5", "0x8123"});
  EXPECT_EQ(ev["type"], IBV_EVENT_PKEY_CHANGE);
  EXPECT_EQ(o.with("query_pkey", "1 5")["pkey"], 0x8123);
  ev = event_after(o, sim, {"pkey", "mlx5_0/1", "5", "0"});
  EXPECT_EQ(o.with("query_pkey", "1 5")["pkey"], 0);

  ev = event_after(o, sim, {"reregister", "mlx5_0/1"});
  EXPECT_EQ(ev["type"], IBV_EVENT_CLIENT_REREGISTER);
  EXPECT_EQ(ev["port_num"], 1);
}

TEST(Events, EachGidEntryChangeIsOneGidChange) {
  Sim sim(two_adapters());
  Opened o(sim, "mlx5_0");
  json ev = event_after(o, sim, {"gid", "add", "mlx5_0/1", "fe80::1:2:3:4", "--index", "3"});
  EXPECT_EQ(ev["type"], IBV_EVENT_GID_CHANGE);
  EXPECT_EQ(ev["port_num"], 1);
  json e = o.with("query_gid_ex", "1 3");
  EXPECT_EQ(e["ret"], 0);
  EXPECT_EQ(e["entry"]["gid_text"], "fe80::1:2:3:4");
  EXPECT_EQ(e["entry"]["gid_type"], IBV_GID_TYPE_IB);
  EXPECT_EQ(rdmatest::read_file(sim.dir() + "/sys/class/infiniband/mlx5_0/ports/1/gids/3"),
            "fe80:0000:0000:0000:0001:0002:0003:0004\n");

  ev = event_after(o, sim, {"gid", "del", "mlx5_0/1", "3"});
  EXPECT_EQ(ev["type"], IBV_EVENT_GID_CHANGE);
  EXPECT_EQ(o.with("query_gid_ex", "1 3")["ret"], ENODATA);
  o.with("nonblock", "1");
  EXPECT_EQ(o("get_event")["errno_name"], "EAGAIN");  // one event per entry, no more
}

TEST(Events, AnIpOnARoceNetdevAddsAV1AndAV2GidEachWithItsEvent) {
  Sim sim(two_adapters());
  Opened o(sim, "mlx5_1");
  const json out = sim.ctl_json({"gid", "add-ip", "mlx5_1/1", "10.1.2.3", "--netdev", "ens1f0"});
  ASSERT_TRUE(out["ok"]);
  EXPECT_EQ(out["events"].size(), 2u);
  for (int i = 0; i < 2; ++i) {
    const json ev = o("get_event");
    EXPECT_EQ(ev["type"], IBV_EVENT_GID_CHANGE);
    EXPECT_EQ(ev["port_num"], 1);
  }
  const json v1 = o.with("query_gid_ex", "1 4"), v2 = o.with("query_gid_ex", "1 5");
  EXPECT_EQ(v1["entry"]["gid_text"], "::ffff:10.1.2.3");
  EXPECT_EQ(v1["entry"]["gid_type"], IBV_GID_TYPE_ROCE_V1);
  EXPECT_EQ(v1["entry"]["ndev_ifindex"], 4);  // ens1f0's ifindex in the topology
  EXPECT_EQ(v2["entry"]["gid_text"], "::ffff:10.1.2.3");
  EXPECT_EQ(v2["entry"]["gid_type"], IBV_GID_TYPE_ROCE_V2);
  const std::string attrs = sim.dir() + "/sys/class/infiniband/mlx5_1/ports/1/gid_attrs/";
  EXPECT_EQ(rdmatest::read_file(attrs + "ndevs/5"), "ens1f0\n");
  EXPECT_EQ(rdmatest::read_file(attrs + "types/4"), "IB/RoCE v1\n");
  EXPECT_EQ(rdmatest::read_file(attrs + "types/5"), "RoCE v2\n");

  ASSERT_EQ(sim.ctl_json({"gid", "del-ip", "mlx5_1/1", "10.1.2.3"})["events"].size(), 2u);
  for (int i = 0; i < 2; ++i)
    EXPECT_EQ(o("get_event")["type"], IBV_EVENT_GID_CHANGE);
  EXPECT_EQ(o.with("query_gid_ex", "1 4")["ret"], ENODATA);
  EXPECT_EQ(o.with("query_gid_ex", "1 5")["ret"], ENODATA);
  EXPECT_FALSE(std::filesystem::exists(attrs + "ndevs/5"));
}

TEST(Events, AnRxePortTakesRoceV2GidsOnly) {
  // rxe's port is RoCE v2 only (its core capabilities: UDP encapsulation), so the kernel adds one
  // GID per address, and the default GID of its MAC once, as v2 (checked on a real rxe device by
  // the kernel tests, tests/kernel).
  Sim sim(rdmatest::topology("devx-variants"));
  Opened o(sim, "rxe0");
  json g0 = o.with("query_gid_ex", "1 0");
  EXPECT_EQ(g0["entry"]["gid_text"], "fe80::ff:fe00:10");
  EXPECT_EQ(g0["entry"]["gid_type"], IBV_GID_TYPE_ROCE_V2);
  EXPECT_EQ(o.with("query_gid_ex", "1 1")["ret"], ENODATA);

  const json out = sim.ctl_json({"gid", "add-ip", "rxe0/1", "192.0.2.1", "--netdev", "eth0"});
  ASSERT_TRUE(out["ok"]);
  EXPECT_EQ(out["events"].size(), 1u);
  EXPECT_EQ(o("get_event")["type"], IBV_EVENT_GID_CHANGE);
  const json v2 = o.with("query_gid_ex", "1 1");
  EXPECT_EQ(v2["entry"]["gid_text"], "::ffff:192.0.2.1");
  EXPECT_EQ(v2["entry"]["gid_type"], IBV_GID_TYPE_ROCE_V2);
  EXPECT_EQ(o.with("query_gid_ex", "1 2")["ret"], ENODATA);
  EXPECT_EQ(sim.ctl_json({"gid", "del-ip", "rxe0/1", "192.0.2.1"})["events"].size(), 1u);
  EXPECT_EQ(o("get_event")["type"], IBV_EVENT_GID_CHANGE);
  EXPECT_EQ(o.with("query_gid_ex", "1 1")["ret"], ENODATA);
}

TEST(Events, ARoceMtuChangeSetsTheActiveMtuWithNoEvent) {
  Sim sim(two_adapters());
  Opened o(sim, "mlx5_1");
  EXPECT_EQ(o.with("query_port", "1")["attr"]["active_mtu"], IBV_MTU_1024);
  const json out = sim.ctl_json({"port", "mtu", "mlx5_1/1", "4096"});
  ASSERT_TRUE(out["ok"]);
  EXPECT_EQ(out["events"], json::array());
  EXPECT_EQ(o.with("query_port", "1")["attr"]["active_mtu"], IBV_MTU_4096);
  o.with("nonblock", "1");
  EXPECT_EQ(o("get_event")["errno_name"], "EAGAIN");  // the kernel sends no event
  // Refused: not an MTU, and an InfiniBand port (the SM sets its MTU).
  EXPECT_EQ(sim.ctl({"port", "mtu", "mlx5_1/1", "1500"}).exit_code(), 1);
  EXPECT_EQ(sim.ctl({"port", "mtu", "mlx5_0/1", "2048"}).exit_code(), 1);
  EXPECT_EQ(o.with("query_port", "1")["attr"]["active_mtu"], IBV_MTU_4096);
}

TEST(Events, RawEventsOfAnyTypePassThrough) {
  // Type 20 (DEVICE_SPEED_CHANGE on newer kernels) is unknown to v44: it arrives with its number,
  // element in port_num, and ibv_event_type_str calls it "unknown".
  Sim sim(two_adapters());
  Opened o(sim, "mlx5_1");
  ctl_ok(sim, {"event", "mlx5_1/2", "20"});
  ctl_ok(sim, {"event", "mlx5_1", "gid_change", "--element", "7"});
  json ev = o("get_event");
  EXPECT_EQ(ev["type"], 20);
  EXPECT_EQ(ev["port_num"], 2);
  ev = o("get_event");
  EXPECT_EQ(ev["type"], IBV_EVENT_GID_CHANGE);
  EXPECT_EQ(ev["port_num"], 7);
  EXPECT_EQ(o.sh("strings")["event_type"][21], "unknown");  // index 0 is type -1
}

TEST(Events, UnplugSendsOneDeviceFatalPerContextThenSilenceAndEio) {
  Sim sim(two_adapters());
  Opened a(sim, "mlx5_0"), b(sim, "mlx5_0");
  ctl_ok(sim, {"lid", "mlx5_0/1", "8"});  // queued before the unplug: still delivered, first
  const json out = sim.ctl_json({"unplug", "mlx5_0"});
  EXPECT_EQ(
      out["events"],
      json::parse(
          R"([{"device":"mlx5_0","type":8,"type_name":"device_fatal","element":0,"contexts":2}])"));
  for (Opened* o : {&a, &b}) {
    EXPECT_EQ((*o)("get_event")["type"], IBV_EVENT_LID_CHANGE);
    const json fatal = (*o)("get_event");
    EXPECT_EQ(fatal["type"], IBV_EVENT_DEVICE_FATAL);
    EXPECT_EQ(fatal["port_num"], 0);
    EXPECT_EQ(o->with("poll", "100")["revents"], 0);  // silent: no more events, no hangup
    o->with("nonblock", "1");
    EXPECT_EQ((*o)("get_event")["errno_name"], "EAGAIN");
    EXPECT_EQ(o->with("query_port", "1")["ret"], EIO);
    EXPECT_EQ(o->with("query_port_compat", "1")["ret"], EIO);
    EXPECT_EQ((*o)("query_device")["ret"], EIO);
    EXPECT_EQ((*o)("query_device_ex")["ret"], EIO);
    const json gid = o->with("query_gid", "1 0");
    EXPECT_EQ(gid["ret"], -1);
    EXPECT_EQ(gid["errno_name"], "EIO");
    EXPECT_EQ(o->with("query_gid_ex", "1 0")["ret"], EIO);
    EXPECT_EQ(o->with("query_gid_table", "16")["ret"], -EIO);
    const json pkey = o->with("query_pkey", "1 0");
    EXPECT_EQ(pkey["ret"], -1);
    EXPECT_EQ(pkey["errno_name"], "ENOENT");
  }
  // Nothing further reaches the silenced contexts, even for a device of the same name.
  ctl_ok(sim, {"replug", "mlx5_0"});
  ctl_ok(sim, {"port", "down", "mlx5_0/1"});
  EXPECT_EQ(a("get_event")["errno_name"], "EAGAIN");
  EXPECT_EQ(a("close")["ret"], 0);
  EXPECT_EQ(b("close")["ret"], 0);
}

TEST(Events, WithoutDisassociateTheRemovalWaitsForTheLastContext) {
  // A driver that cannot disassociate: no event, the device leaves the list but stays usable by
  // the open context, and `unplug --wait` returns only once that context closes.
  Sim sim(two_adapters());
  Opened o(sim, "mlx5_0");
  Process unplug = Process::spawn({rdmatest::rdma_sim_bin(), "--dir", sim.dir(), "unplug", "mlx5_0",
                                   "--no-disassociate", "--wait", "60"});
  const json pending =
      sim.wait_stats([](const json& s) { return s["devices"][0]["state"] == "removal_pending"; });
  EXPECT_EQ(pending["devices"][0]["open_contexts"], 1);
  EXPECT_TRUE(unplug.running());
  EXPECT_EQ(names(o.sh("list")), std::vector<std::string>{"mlx5_1"});
  EXPECT_EQ(o.with("query_port", "1")["ret"], 0);
  EXPECT_EQ(o.with("query_pkey", "1 0")["pkey"], 0xffff);  // its sysfs directory is still there
  o.with("nonblock", "1");
  EXPECT_EQ(o("get_event")["errno_name"], "EAGAIN");
  const rdmatest::CommandResult replug = sim.ctl({"replug", "mlx5_0"});
  EXPECT_EQ(replug.exit_code(), 1);
  EXPECT_EQ(replug.err, "rdma-sim: removal of device mlx5_0 is still pending (1 contexts open)\n");

  EXPECT_EQ(o("close")["ret"], 0);
  EXPECT_TRUE(unplug.require_exit(kTimeout).success()) << unplug.describe();
  EXPECT_NE(unplug.stdout_text().find("removal complete"), std::string::npos);
  EXPECT_EQ(sim.show()["unplugged"], json::array({"mlx5_0"}));
  ctl_ok(sim, {"replug", "mlx5_0"});
}

TEST(Events, UnplugWaitFailsAfterItsTimeoutAndTheRemovalStaysPending) {
  Sim sim(two_adapters());
  Opened o(sim, "mlx5_1");
  const rdmatest::CommandResult r =
      sim.ctl({"unplug", "mlx5_1", "--no-disassociate", "--wait", "0.2"});
  EXPECT_EQ(r.exit_code(), 1);
  EXPECT_EQ(r.err, "rdma-sim: removal of mlx5_1 still pending: 1 context(s) open (pids " +
                       std::to_string(o.sh.process().pid()) + ")\n");
  EXPECT_EQ(sim.stats()["devices"][1]["state"], "removal_pending");
  o("close");
  sim.wait_stats([](const json& s) { return s["unplugged"] == json::array({"mlx5_1"}); });
}

TEST(Events, FirmwareFatalKeepsTheDeviceListedButFailsItsCommands) {
  Sim sim(two_adapters());
  Opened o(sim, "mlx5_0");
  const json fatal = event_after(o, sim, {"fatal", "mlx5_0", "--port", "1"});
  EXPECT_EQ(fatal["type"], IBV_EVENT_DEVICE_FATAL);
  EXPECT_EQ(fatal["port_num"], 1);
  EXPECT_EQ(o.with("query_port", "1")["ret"], EIO);
  EXPECT_EQ(o.with("query_gid", "1 0")["errno_name"], "EIO");
  EXPECT_EQ(o.with("query_pkey", "1 0")["ret"], 0);  // sysfs is still there
  EXPECT_EQ(names(o.sh("list")), (std::vector<std::string>{"mlx5_0", "mlx5_1"}));
  EXPECT_EQ(o.sh("open L2:mlx5_0")["errno_name"], "EIO");
  const rdmatest::CommandResult down = sim.ctl({"port", "down", "mlx5_0/1"});
  EXPECT_EQ(down.exit_code(), 1);
  EXPECT_EQ(down.err, "rdma-sim: device mlx5_0 is in fatal state: unplug and replug it first\n");
  ctl_ok(sim, {"unplug", "mlx5_0"});
  ctl_ok(sim, {"replug", "mlx5_0"});
  VerbsShell fresh(sim);
  fresh("list");
  EXPECT_FALSE(fresh("open L1:mlx5_0")["null"]);
}

TEST(Events, RawEventToOneContext) {
  Sim sim(two_adapters());
  Opened a(sim, "mlx5_0"), b(sim, "mlx5_0");
  ctl_ok(sim, {"event", "mlx5_0/1", "port_active", "--context", "2"});
  b.with("nonblock", "1");
  a.with("nonblock", "1");
  EXPECT_EQ(b("get_event")["type"], IBV_EVENT_PORT_ACTIVE);
  EXPECT_EQ(a("get_event")["errno_name"], "EAGAIN");
}

}  // namespace
}  // namespace simtest
