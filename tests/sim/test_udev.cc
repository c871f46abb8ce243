// rdma-sim --udev: the real libudev (udev_listen, a monitor of the "udev" group filtered on the
// two RDMA subsystems) receives a message for every device added, removed and renamed, in the
// kernel's order. Each test runs in a network namespace of its own, with a private /run where
// udev "runs" (/run/udev/control exists), so no message reaches the host.
#include <sys/stat.h>

#include <cerrno>
#include <climits>
#include <filesystem>
#include <regex>
#include <utility>
#include <vector>

#include "sim_test.h"

namespace simtest {
namespace {

class UdevTest : public ::testing::Test {
 protected:
  void SetUp() override {
    rdmatest::make_run_private();
    rdmatest::enter_private_network();
    rdmatest::set_udev_running(true);
  }
};

// A listener that has bound its monitor: everything sent from now on reaches it.
Process listen() {
  Process p = Process::spawn({UDEV_LISTEN});
  p.require_line([](const std::string& l) { return l == "listening"; }, kTimeout);
  return p;
}

// The next `n` events, without their sequence numbers (checked to increase by one each).
std::vector<std::string> next_events(Process& p, size_t n, uint64_t* last_seq) {
  static const std::regex seq(" seq=([0-9]+)");
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) {
    std::string line = p.require_next_line(kTimeout);
    std::smatch m;
    if (!std::regex_search(line, m, seq)) throw rdmatest::HarnessError("no seq in: " + line);
    const uint64_t s = std::stoull(m[1]);
    if (*last_seq != 0) {
      EXPECT_EQ(s, *last_seq + 1) << line;
    }
    *last_seq = s;
    out.push_back(std::regex_replace(line, seq, ""));
  }
  return out;
}

const std::string kIb0 = "/devices/pci0000:00/0000:00:02.0";
const std::string kIb1 = "/devices/pci0000:00/0000:00:03.0";

TEST_F(UdevTest, UnplugReplugAndRenameReachLibudevInTheKernelsOrder) {
  Sim sim(two_adapters(), rdmatest::SimOptions{.udev = true});
  Process l = listen();
  uint64_t seq = 0;

  ctl_ok(sim, {"unplug", "mlx5_0"});
  // The uverbs char device goes first (before any DEVICE_FATAL), then the ib_device.
  EXPECT_EQ(next_events(l, 2, &seq),
            (std::vector<std::string>{
                "remove infiniband_verbs uverbs0 devpath=" + kIb0 +
                    "/infiniband_verbs/uverbs0 devname=/dev/infiniband/uverbs0",
                "remove infiniband mlx5_0 devpath=" + kIb0 + "/infiniband/mlx5_0 name=mlx5_0"}));

  ctl_ok(sim, {"replug", "mlx5_0"});
  EXPECT_EQ(next_events(l, 2, &seq),
            (std::vector<std::string>{
                "add infiniband mlx5_0 devpath=" + kIb0 + "/infiniband/mlx5_0 name=mlx5_0",
                "add infiniband_verbs uverbs0 devpath=" + kIb0 +
                    "/infiniband_verbs/uverbs0 devname=/dev/infiniband/uverbs0"}));

  ctl_ok(sim, {"rename", "mlx5_1", "roce0"});
  EXPECT_EQ(next_events(l, 1, &seq),
            (std::vector<std::string>{"move infiniband roce0 devpath=" + kIb1 +
                                      "/infiniband/roce0 devpath_old=" + kIb1 +
                                      "/infiniband/mlx5_1 name=roce0"}));
  // Two per device at start, then these five.
  EXPECT_EQ(sim.stats()["udev_messages"], 9);
}

TEST_F(UdevTest, WithoutDisassociateTheIbDeviceGoesOnlyOnceItsLastContextCloses) {
  Sim sim(two_adapters(), rdmatest::SimOptions{.udev = true});
  VerbsShell sh(sim);
  sh("list");
  const json ctx = sh("open L1:mlx5_1");
  Process l = listen();
  uint64_t seq = 0;

  ctl_ok(sim, {"unplug", "mlx5_1", "--no-disassociate"});
  EXPECT_EQ(
      next_events(l, 1, &seq),
      (std::vector<std::string>{"remove infiniband_verbs uverbs1 devpath=" + kIb1 +
                                "/infiniband_verbs/uverbs1 devname=/dev/infiniband/uverbs1"}));
  EXPECT_FALSE(l.next_line(std::chrono::milliseconds(300)).has_value())
      << "the ib_device must stay while a context is open";

  EXPECT_EQ(sh("close " + ctx["ctx"].get<std::string>())["ret"], 0);
  EXPECT_EQ(next_events(l, 1, &seq),
            (std::vector<std::string>{"remove infiniband mlx5_1 devpath=" + kIb1 +
                                      "/infiniband/mlx5_1 name=mlx5_1"}));
}

TEST_F(UdevTest, ACycleIsFourMessagesPerRoundAndEndsWithTheDevicePlugged) {
  Sim sim(two_adapters(), rdmatest::SimOptions{.udev = true});
  Process l = listen();
  uint64_t seq = 0;
  ctl_ok(sim, {"cycle", "mlx5_0", "--count", "3"});
  const std::vector<std::string> events = next_events(l, 12, &seq);
  for (size_t i = 0; i < 12; i += 4) {
    EXPECT_EQ(events[i].substr(0, 32), "remove infiniband_verbs uverbs0 ");
    EXPECT_EQ(events[i + 1].substr(0, 25), "remove infiniband mlx5_0 ");
    EXPECT_EQ(events[i + 2].substr(0, 22), "add infiniband mlx5_0 ");
    EXPECT_EQ(events[i + 3].substr(0, 29), "add infiniband_verbs uverbs0 ");
  }
  EXPECT_EQ(sim.show()["devices"][1]["name"], "mlx5_0");
  EXPECT_EQ(sim.show()["devices"][1]["index"], 4);  // 0 and 1 at start, then 2, 3, 4
}

// A device hangs off the PCI function its driver binds (device/driver), as the kernel's RDMA
// drivers set their ib_device's parent; rxe and siw have no parent: they are virtual devices,
// in sysfs and in udev's paths.
TEST_F(UdevTest, AHardwareDeviceHangsOffItsDriversFunctionAndASoftwareOneOffNothing) {
  Sim sim(rdmatest::topology("devx-variants"), rdmatest::SimOptions{.udev = true});
  const std::string sys = sim.dir() + "/sys";
  char buf[PATH_MAX];
  for (const auto& [device, driver] : std::vector<std::pair<std::string, std::string>>{
           {"mlx5_0", "mlx5_core"}, {"bnxt_re0", "bnxt_en"}, {"irdma0", "ice"}}) {
    const std::string link = sys + "/class/infiniband/" + device + "/device/driver";
    ASSERT_NE(::realpath(link.c_str(), buf), nullptr) << link;
    EXPECT_EQ(std::string(buf), sys + "/bus/pci/drivers/" + driver);
    // And the driver's directory lists the function it binds.
    const std::string function =
        std::filesystem::read_symlink(sys + "/class/infiniband/" + device + "/device").filename();
    ASSERT_NE(::realpath((sys + "/bus/pci/drivers/" + driver + "/" + function).c_str(), buf),
              nullptr);
    EXPECT_EQ(std::string(buf), sys + "/devices/pci0000:00/" + function);
  }
  struct stat st {};
  EXPECT_EQ(::lstat((sys + "/class/infiniband/rxe0/device").c_str(), &st), -1);
  EXPECT_EQ(errno, ENOENT);

  Process l = listen();
  uint64_t seq = 0;
  ctl_ok(sim, {"unplug", "rxe0"});
  EXPECT_EQ(next_events(l, 2, &seq),
            (std::vector<std::string>{
                "remove infiniband_verbs uverbs5 devpath=/devices/virtual/infiniband_verbs/"
                "uverbs5 devname=/dev/infiniband/uverbs5",
                "remove infiniband rxe0 devpath=/devices/virtual/infiniband/rxe0 name=rxe0"}));
}

TEST(Udev, TheSimulatorRefusesToBroadcastInANetworkNamespaceWithInterfaces) {
  // A fresh namespace given a veth pair stands for any shared one (the system's, a
  // container's). An empty fabric: a simulator that did not refuse would send nothing at start.
  rdmatest::TempDir dir("rdma-sim-udev");
  const rdmatest::CommandResult r = rdmatest::run_command(
      {"unshare", "--net", "sh", "-c",
       "ip link add v0 type veth peer name v1 || exit 99; exec \"$0\" start --udev --dir \"$1\"",
       rdmatest::rdma_sim_bin(), dir.file("fabric")});
  ASSERT_NE(r.exit_code(), 99) << "cannot create a veth pair: " << r.err;
  EXPECT_EQ(r.exit_code(), 1) << r.out << r.err;
  EXPECT_EQ(r.err,
            "rdma-sim: --udev: this network namespace has interfaces (v1, v0): every udev client "
            "in it would get the simulated devices' messages; run the simulator in a network "
            "namespace of its own (unshare --net)\n");
}

}  // namespace
}  // namespace simtest
