// ibv_get_device_list and the device accessors: rdma-core's re-scan semantics.
#include "sim_test.h"

namespace simtest {
namespace {

TEST(Discovery, ListsTheTopologyWithPathsGuidsAndIndexes) {
  // Given the two-adapter fabric, a program lists both devices in index order, each with
  // rdma-core's names and paths, its big-endian GUID, CA/IB types (RoCE too) and its index.
  Sim sim(two_adapters());
  VerbsShell sh(sim);
  const json l = sh("list");
  ASSERT_FALSE(l["null"]);
  EXPECT_EQ(l["num"], 2);
  EXPECT_TRUE(l["terminated"]);
  const std::string sys = sim.dir() + "/sys/class/";
  const json& d0 = l["devices"][0];
  EXPECT_EQ(d0["name"], "mlx5_0");
  EXPECT_EQ(d0["dev_name"], "uverbs0");
  EXPECT_EQ(d0["dev_path"], sys + "infiniband_verbs/uverbs0");
  EXPECT_EQ(d0["ibdev_path"], sys + "infiniband/mlx5_0");
  EXPECT_EQ(d0["guid"], "0c42a10300f65e44");  // the bytes in memory: network order
  EXPECT_EQ(d0["index"], 0);
  EXPECT_EQ(d0["node_type"], 1);       // IBV_NODE_CA
  EXPECT_EQ(d0["transport_type"], 0);  // IBV_TRANSPORT_IB
  const json& d1 = l["devices"][1];
  EXPECT_EQ(d1["name"], "mlx5_1");
  EXPECT_EQ(d1["dev_name"], "uverbs1");
  EXPECT_EQ(d1["guid"], "0c42a103006d0b3a");
  EXPECT_EQ(d1["index"], 1);
  EXPECT_EQ(d1["node_type"], 1);
  EXPECT_EQ(d1["transport_type"], 0);
  EXPECT_EQ(sh("sysfs_path")["path"], sim.dir() + "/sys");
}

TEST(Discovery, EveryCallRescansSurvivorsKeepTheirPointerAndReaddedDevicesGetANewOne) {
  // Given a list kept alive, an unplugged device vanishes from the next list while the other
  // keeps its struct; replugged, it comes back first (rdma-core prepends new devices) with a new
  // struct and a new, never reused index.
  Sim sim(two_adapters());
  VerbsShell sh(sim);
  const json l1 = sh("list");
  const json l1_again = sh("list");
  EXPECT_EQ(l1_again["devices"], l1["devices"]);  // same pointers, same everything

  ctl_ok(sim, {"unplug", "mlx5_0"});
  const json l2 = sh("list");
  ASSERT_EQ(names(l2), std::vector<std::string>{"mlx5_1"});
  EXPECT_EQ(l2["devices"][0]["ptr"], l1["devices"][1]["ptr"]);

  ctl_ok(sim, {"replug", "mlx5_0"});
  const json l3 = sh("list");
  ASSERT_EQ(names(l3), (std::vector<std::string>{"mlx5_0", "mlx5_1"}));
  EXPECT_NE(l3["devices"][0]["ptr"], l1["devices"][0]["ptr"]);
  EXPECT_EQ(l3["devices"][0]["index"], 2);
  EXPECT_EQ(l3["devices"][0]["dev_name"], "uverbs0");  // the lowest free minor again
  EXPECT_EQ(l3["devices"][1]["ptr"], l1["devices"][1]["ptr"]);
}

TEST(Discovery, NewDevicesComeFirstInIndexOrder) {
  // rdma-core puts the devices found by a scan before the survivors: replugging both devices of
  // a fabric where a third survived lists them first, in index order.
  Sim sim(rdmatest::topology("sixteen-devices"));
  VerbsShell sh(sim);
  sh("list");  // the process has now seen all sixteen
  ctl_ok(sim, {"unplug", "mlx5_3"});
  ctl_ok(sim, {"unplug", "mlx5_1"});
  ctl_ok(sim, {"replug", "mlx5_3"});  // index 16
  ctl_ok(sim, {"replug", "mlx5_1"});  // index 17
  const std::vector<std::string> n = names(sh("list"));
  ASSERT_EQ(n.size(), 16u);
  EXPECT_EQ(n[0], "mlx5_3");
  EXPECT_EQ(n[1], "mlx5_1");
  EXPECT_EQ(n[2], "mlx5_0");
  EXPECT_EQ(n[3], "mlx5_2");
  EXPECT_EQ(n[15], "mlx5_15");
}

TEST(Discovery, AnEmptyFabricGivesANonNullEmptyList) {
  Sim sim("");
  VerbsShell sh(sim);
  const json l = sh("list");
  EXPECT_FALSE(l["null"]);
  EXPECT_EQ(l["num"], 0);
  EXPECT_TRUE(l["devices"].empty());
  EXPECT_TRUE(l["terminated"]);
}

TEST(Discovery, NoSimulatorBehavesAsAKernelWithoutRdma) {
  // RDMA_SIM_DIR unset, pointing nowhere, or at a directory whose simulator has stopped: NULL
  // with ENOSYS, as this machine's real libibverbs answers.
  for (const std::string& dir : {std::string(), std::string("/nonexistent/rdma-sim")}) {
    VerbsShell sh(standin_env(dir));
    const json l = sh("list");
    EXPECT_TRUE(l["null"]) << dir;
    EXPECT_EQ(l["errno_name"], "ENOSYS") << dir;
    EXPECT_EQ(l["num"], 0) << dir;
  }
  std::string stale;
  {
    Sim sim(two_adapters());
    stale = sim.dir();
  }
  VerbsShell sh(standin_env(stale));
  EXPECT_EQ(sh("list")["errno_name"], "ENOSYS");
}

TEST(Discovery, TheStandInOnlyAnswersWhileTheSimulatorRuns) {
  // A program that listed the devices sees ENOSYS once the simulator is gone, and the devices of
  // a new simulator in the same directory are new devices.
  auto sim = std::make_unique<Sim>(two_adapters());
  VerbsShell sh(sim->spawn_options());  // keeps running after the simulator stops
  const json before = sh("list");
  ASSERT_EQ(before["num"], 2);
  sim->stop();
  EXPECT_EQ(sh("list")["errno_name"], "ENOSYS");
}

TEST(Discovery, NoRdmaModeFailsWithEnosysAndKeepsThePersistentList) {
  // `no-rdma on` makes the scan fail like a kernel without RDMA; as in rdma-core a failed scan
  // leaves the known devices alone, so they keep their structs when the mode ends.
  Sim sim(two_adapters());
  VerbsShell sh(sim);
  const json l1 = sh("list");
  ctl_ok(sim, {"no-rdma", "on"});
  const json off = sh("list");
  EXPECT_TRUE(off["null"]);
  EXPECT_EQ(off["errno_name"], "ENOSYS");
  ctl_ok(sim, {"no-rdma", "off"});
  const json l2 = sh("list");
  EXPECT_EQ(l2["devices"], l1["devices"]);
}

TEST(Discovery, StartingInNoRdmaMode) {
  rdmatest::SimOptions o;
  o.no_rdma = true;
  Sim sim(two_adapters(), o);
  VerbsShell sh(sim);
  EXPECT_EQ(sh("list")["errno_name"], "ENOSYS");
  ctl_ok(sim, {"no-rdma", "off"});
  EXPECT_EQ(sh("list")["num"], 2);
}

TEST(Discovery, ARenamedDeviceKeepsItsStaleNameAndSysfsCallsFail) {
  // A rename keeps uverbsN and the index: the process's struct survives with its old name and
  // ibdev_path, so the sysfs-backed P_Key query fails with ENOENT while ioctl-style queries
  // still work; a process that lists for the first time sees the new name.
  Sim sim(two_adapters());
  VerbsShell sh(sim);
  const json l1 = sh("list");
  const json c = sh("open L1:mlx5_0");
  ctl_ok(sim, {"rename", "mlx5_0", "ib_hdr0"});
  const json l2 = sh("list");
  ASSERT_EQ(l2["devices"][0]["ptr"], l1["devices"][0]["ptr"]);
  EXPECT_EQ(l2["devices"][0]["name"], "mlx5_0");
  EXPECT_EQ(l2["devices"][0]["ibdev_path"], sim.dir() + "/sys/class/infiniband/mlx5_0");
  const json pkey = sh("query_pkey " + c["ctx"].get<std::string>() + " 1 0");
  EXPECT_EQ(pkey["ret"], -1);
  EXPECT_EQ(pkey["errno_name"], "ENOENT");
  EXPECT_EQ(sh("query_port " + c["ctx"].get<std::string>() + " 1")["ret"], 0);
  EXPECT_EQ(sh("sysfs_read L2:0 node_guid")["ret"], -1);

  VerbsShell fresh(sim);
  const json l = fresh("list");
  EXPECT_EQ(names(l), (std::vector<std::string>{"ib_hdr0", "mlx5_1"}));
  EXPECT_EQ(l["devices"][0]["index"], 0);
  EXPECT_EQ(l["devices"][0]["dev_name"], "uverbs0");
  EXPECT_EQ(fresh("sysfs_read L1:ib_hdr0 node_guid")["value"], "0c42:a103:00f6:5e44");
}

TEST(Discovery, AnUnpluggedDevicesStructStillAnswersButCannotBeOpened) {
  // A list kept from before the unplug still holds the device: its GUID and index answer (read
  // when it appeared, as rdma-core's netlink values), opening it fails with EIO.
  Sim sim(two_adapters());
  VerbsShell sh(sim);
  sh("list");
  ctl_ok(sim, {"unplug", "mlx5_1"});
  EXPECT_EQ(names(sh("list")), std::vector<std::string>{"mlx5_0"});
  const json info = sh("device_info L1:1");
  EXPECT_EQ(info["name"], "mlx5_1");
  EXPECT_EQ(info["guid"], "0c42a103006d0b3a");
  EXPECT_EQ(info["index"], 1);
  const json open = sh("open L1:1");
  EXPECT_TRUE(open["null"]);
  EXPECT_EQ(open["errno_name"], "EIO");
}

TEST(Discovery, AnOpenContextKeepsItsUnpluggedDeviceAlive) {
  // The context holds its device: once the list is freed and a re-scan has dropped the unplugged
  // device, the context's device struct is still there, answering, and the context closes.
  Sim sim(two_adapters());
  VerbsShell sh(sim);
  sh("list");
  const std::string c = sh("open L1:mlx5_1")["ctx"];
  sh("free L1");
  ctl_ok(sim, {"unplug", "mlx5_1"});
  EXPECT_EQ(names(sh("list")), std::vector<std::string>{"mlx5_0"});
  const json d = sh("ctx_device " + c);
  EXPECT_EQ(d["name"], "mlx5_1");
  EXPECT_EQ(d["guid"], "0c42a103006d0b3a");
  EXPECT_EQ(d["index"], 1);
  EXPECT_EQ(d["dev_name"], "uverbs1");
  EXPECT_EQ(sh("query_port " + c + " 1")["ret"], EIO);
  EXPECT_EQ(sh("close " + c)["ret"], 0);
}

}  // namespace
}  // namespace simtest
