// rdma-core's own utilities (Debian's ibverbs-utils), unchanged, against the simulator.
#include <signal.h>

#include "sim_test.h"

namespace simtest {
namespace {

std::string expected(const std::string& name) {
  return rdmatest::read_file(std::string(SIM_EXPECTED_DIR) + "/" + name);
}

TEST(Utilities, IbvDevicesListsNamesAndGuids) {
  Sim sim(two_adapters());
  const rdmatest::CommandResult r = sim.run({"ibv_devices"});
  EXPECT_EQ(r.exit_code(), 0) << r.err;
  EXPECT_EQ(r.out, expected("two-adapters.ibv_devices.txt"));
  EXPECT_EQ(r.err, "");
}

TEST(Utilities, IbvDevinfoShowsEveryDeviceAndPort) {
  Sim sim(two_adapters());
  const rdmatest::CommandResult r = sim.run({"ibv_devinfo"});
  EXPECT_EQ(r.exit_code(), 0) << r.err;
  EXPECT_EQ(r.out, expected("two-adapters.ibv_devinfo.txt"));
}

TEST(Utilities, IbvDevinfoVerboseShowsAttributesAndGids) {
  // The whole -v output: device capabilities (query_device_ex), every port attribute (the inline
  // ibv_query_port), board_id (ibv_read_sysfs_file) and the GID tables with their RoCE types
  // (ibv_query_gid, ibv_query_gid_type).
  Sim sim(two_adapters());
  const rdmatest::CommandResult r = sim.run({"ibv_devinfo", "-v"});
  EXPECT_EQ(r.exit_code(), 0) << r.err;
  EXPECT_EQ(r.out, expected("two-adapters.ibv_devinfo-v.txt"));
  EXPECT_EQ(r.err, "");
}

TEST(Utilities, IbvDevinfoFollowsPortStateAndGidChanges) {
  Sim sim(two_adapters());
  ctl_ok(sim, {"port", "down", "mlx5_0/1"});
  rdmatest::CommandResult r = sim.run({"ibv_devinfo", "-d", "mlx5_0", "-i", "1"});
  EXPECT_EQ(r.exit_code(), 0) << r.err;
  const std::string head =
      expected("two-adapters.ibv_devinfo.txt")
          .substr(0, expected("two-adapters.ibv_devinfo.txt").find("\t\tport:"));
  EXPECT_EQ(r.out, head +
                       "\t\tport:\t1\n"
                       "\t\t\tstate:\t\t\tPORT_DOWN (1)\n"
                       "\t\t\tmax_mtu:\t\t4096 (5)\n"
                       "\t\t\tactive_mtu:\t\t4096 (5)\n"
                       "\t\t\tsm_lid:\t\t\t0\n"
                       "\t\t\tport_lid:\t\t0\n"
                       "\t\t\tport_lmc:\t\t0x00\n"
                       "\t\t\tlink_layer:\t\tInfiniBand\n\n");

  ctl_ok(sim, {"gid", "add-ip", "mlx5_1/2", "fd00::17", "--netdev", "ens1f1"});
  ctl_ok(sim, {"gid", "del", "mlx5_1/2", "0"});
  r = sim.run({"ibv_devinfo", "-v", "-d", "mlx5_1", "-i", "2"});
  EXPECT_EQ(r.exit_code(), 0) << r.err;
  const std::string out = r.out;
  const std::string gids = out.substr(out.find("\t\t\tGID["));
  EXPECT_EQ(gids,
            "\t\t\tGID[  1]:\t\tfe80::e42:a1ff:fe6d:b3b, RoCE v2\n"
            "\t\t\tGID[  2]:\t\t0000:0000:0000:0000:0000:ffff:c0a8:1401, RoCE v1\n"
            "\t\t\tGID[  3]:\t\t::ffff:192.168.20.1, RoCE v2\n"
            "\t\t\tGID[  4]:\t\tfd00:0000:0000:0000:0000:0000:0000:0017, RoCE v1\n"
            "\t\t\tGID[  5]:\t\tfd00::17, RoCE v2\n\n");
}

TEST(Utilities, IbvDevinfoListAndNoRdma) {
  Sim sim(two_adapters());
  rdmatest::CommandResult r = sim.run({"ibv_devinfo", "-l"});
  EXPECT_EQ(r.out, "2 HCAs found:\n\tmlx5_0\n\tmlx5_1\n\n");
  ctl_ok(sim, {"no-rdma", "on"});
  r = sim.run({"ibv_devinfo"});
  EXPECT_EQ(r.exit_code(), 255);
  EXPECT_EQ(r.err, "Failed to get IB devices list: Function not implemented\n");
  r = sim.run({"ibv_devices"});
  EXPECT_EQ(r.exit_code(), 1);
  EXPECT_EQ(r.err, "Failed to get IB devices list: Function not implemented\n");
}

TEST(Utilities, IbvAsyncwatchPrintsExactlyTheInjectedEventsInOrder) {
  Sim sim(two_adapters());
  Process ib = sim.spawn({"ibv_asyncwatch"});  // the first device: mlx5_0
  Process roce = sim.spawn({"ibv_asyncwatch", "-d", "mlx5_1"});
  EXPECT_EQ(ib.require_next_line(kTimeout), "mlx5_0: async event FD 4");
  EXPECT_EQ(roce.require_next_line(kTimeout), "mlx5_1: async event FD 4");

  const auto expect_events = [&](Process& p, const std::vector<std::string>& command,
                                 const std::vector<std::string>& lines) {
    ctl_ok(sim, command);
    for (const std::string& line : lines)
      EXPECT_EQ(p.require_next_line(kTimeout), line);
  };
  expect_events(ib, {"port", "down", "mlx5_0/1"}, {"  event_type IBV_EVENT_PORT_ERR (10), port 1"});
  expect_events(ib, {"port", "up", "mlx5_0/1"}, {"  event_type IBV_EVENT_PORT_ACTIVE (9), port 1"});
  expect_events(ib, {"lid", "mlx5_0/1", "11"}, {"  event_type IBV_EVENT_LID_CHANGE (11), port 1"});
  expect_events(ib, {"sm", "mlx5_0/1", "2"}, {"  event_type IBV_EVENT_SM_CHANGE (13), port 1"});
  expect_events(ib, {"pkey", "mlx5_0/1", "3", "0x8003"},
                {"  event_type IBV_EVENT_PKEY_CHANGE (12), port 1"});
  expect_events(ib, {"reregister", "mlx5_0/1"},
                {"  event_type IBV_EVENT_CLIENT_REREGISTER (17), port 1"});
  expect_events(ib, {"gid", "add", "mlx5_0/1", "fe80::abcd"},
                {"  event_type IBV_EVENT_GID_CHANGE (18), port 1"});
  expect_events(ib, {"event", "mlx5_0/1", "20"}, {"  event_type unexpected (20), port 1"});
  // DEVICE_SPEED_CHANGE as rdma-core 44's asyncwatch prints it: a number it does not name, with
  // the device's element 0.
  expect_events(roce, {"speed-change", "mlx5_1"}, {"  event_type unexpected (20), port 0"});
  expect_events(roce, {"gid", "add-ip", "mlx5_1/2", "172.16.0.9", "--netdev", "ens1f1"},
                {"  event_type IBV_EVENT_GID_CHANGE (18), port 2",
                 "  event_type IBV_EVENT_GID_CHANGE (18), port 2"});
  expect_events(roce, {"port", "down", "mlx5_1/1"},
                {"  event_type IBV_EVENT_PORT_ERR (10), port 1"});
  expect_events(ib, {"unplug", "mlx5_0"}, {"  event_type IBV_EVENT_DEVICE_FATAL (8), port 0"});

  // After the fatal event the fd is silent: asyncwatch blocks in read(), it does not exit.
  EXPECT_FALSE(ib.next_line(200ms).has_value());
  EXPECT_TRUE(ib.running());
  EXPECT_FALSE(roce.next_line(0ms).has_value());  // nothing of mlx5_0 reached mlx5_1's watcher
  EXPECT_EQ(ib.stop().signal, SIGTERM);
  EXPECT_EQ(roce.stop().signal, SIGTERM);
  EXPECT_EQ(ib.stderr_text(), "");
}

TEST(Utilities, IbvAsyncwatchForAnUnknownDevice) {
  Sim sim(two_adapters());
  const rdmatest::CommandResult r = sim.run({"ibv_asyncwatch", "-d", "mlx5_9"});
  EXPECT_EQ(r.exit_code(), 1);
  EXPECT_EQ(r.err, "IB device mlx5_9 not found\n");
}

}  // namespace
}  // namespace simtest
