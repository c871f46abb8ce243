// Which RDMA device and port a devlink instance concerns (core/devlink_map), read from sysfs
// trees laid out as the drivers lay them out (devlink/sysfs_handles):
//  - mlx5 (drivers/net/ethernet/mellanox/mlx5/core/dev.c: the auxiliary devices mlx5_core.eth.N
//    and mlx5_core.rdma.N are children of the PCI function; drivers/infiniband/hw/mlx5/main.c:
//    ib_dev.dev.parent = mdev->device, the PCI function; en_main.c: SET_NETDEV_DEV(netdev,
//    mdev->device)); a scalable function's RDMA device under its auxiliary device
//    mlx5_core.sf.N, a child of the PF; a RoCE LAG device whose GID netdev is a bond over both
//    PFs' netdevs (drivers/net/bonding: lower_NAME links; the bond is virtual);
//  - rxe on a netdevsim netdev, as Linux 6.1 showed it (tests/unit/data/devlink/sysfs.txt).
#include "core/devlink_map.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "devlink/sysfs_handles.h"

namespace rdma_eventd::daemon {
namespace {

namespace fs = std::filesystem;

// A sysfs tree in a temporary directory: devices/ with bus devices, class/ links to them.
class Sysfs {
 public:
  Sysfs() {
    // In memory when there is /dev/shm: a tree is dozens of directories and links.
    const fs::path base =
        fs::is_directory("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path();
    std::string t = (base / "devlink-map-XXXXXX").string();
    root_ = ::mkdtemp(t.data());
    for (const char* bus : {"pci", "auxiliary", "netdevsim"})
      fs::create_directories(root_ + "/bus/" + bus + "/devices");
    fs::create_directories(root_ + "/class/infiniband");
    fs::create_directories(root_ + "/class/net");
    fs::create_directories(root_ + "/devices/virtual/net");
  }
  ~Sysfs() { fs::remove_all(root_); }
  Sysfs(const Sysfs&) = delete;
  Sysfs& operator=(const Sysfs&) = delete;

  // A bus device at devices/`path` (relative), on `bus`.
  std::string bus_device(const std::string& path, const std::string& bus) {
    const std::string dir = root_ + "/devices/" + path;
    fs::create_directories(dir);
    fs::create_directory_symlink(fs::relative(root_ + "/bus/" + bus, dir), dir + "/subsystem");
    fs::create_directory_symlink(
        fs::relative(dir, root_ + "/bus/" + bus + "/devices"),
        root_ + "/bus/" + bus + "/devices/" + fs::path(dir).filename().string());
    return dir;
  }
  // A netdev under `parent` (a bus device's dir), or virtual (parent "") with lower netdevs.
  void netdev(const std::string& name, const std::string& parent,
              const std::vector<std::string>& lowers = {}) {
    const std::string dir =
        parent.empty() ? root_ + "/devices/virtual/net/" + name : parent + "/net/" + name;
    fs::create_directories(dir);
    if (!parent.empty()) fs::create_directory_symlink(fs::relative(parent, dir), dir + "/device");
    for (const std::string& l : lowers)
      fs::create_directory_symlink(fs::relative(fs::canonical(root_ + "/class/net/" + l), dir),
                                   dir + "/lower_" + l);
    fs::create_directory_symlink(fs::relative(dir, root_ + "/class/net"),
                                 root_ + "/class/net/" + name);
  }
  // An RDMA device under `parent` (virtual when ""), its ports' GID netdevs ("" for an
  // InfiniBand port). Returns its ibdev_path, as libibverbs gives it.
  std::string ibdev(const std::string& name, const std::string& parent,
                    const std::vector<std::string>& port_netdevs) {
    const std::string dir =
        (parent.empty() ? root_ + "/devices/virtual" : parent) + "/infiniband/" + name;
    fs::create_directories(dir);
    if (!parent.empty()) fs::create_directory_symlink(fs::relative(parent, dir), dir + "/device");
    for (size_t p = 0; p < port_netdevs.size(); ++p) {
      const std::string ndevs = dir + "/ports/" + std::to_string(p + 1) + "/gid_attrs/ndevs";
      fs::create_directories(ndevs);
      if (!port_netdevs[p].empty()) std::ofstream(ndevs + "/0") << port_netdevs[p] << "\n";
    }
    fs::create_directory_symlink(fs::relative(dir, root_ + "/class/infiniband"),
                                 root_ + "/class/infiniband/" + name);
    views_.push_back({name, 0x0c42a10300000000ull + views_.size(), {}});
    views_.back().ports.resize(port_netdevs.size());
    return root_ + "/class/infiniband/" + name;
  }
  // The kernel unregistered the RDMA device: its directory and class link go.
  void unregister(const std::string& name) {
    const fs::path link = root_ + "/class/infiniband/" + name;
    fs::remove_all(fs::canonical(link));
    fs::remove(link);
  }
  std::vector<DevlinkHandles> read() const {
    std::vector<DevlinkHandles> out;
    for (const DeviceView& v : views_)
      out.push_back(read_devlink_handles(root_ + "/class/infiniband/" + v.name, v));
    return out;
  }

 private:
  std::string root_;
  std::vector<DeviceView> views_;
};

using Targets = std::vector<std::pair<std::string, uint32_t>>;
Targets targets(const std::vector<DevlinkHandles>& h, std::string_view handle, int64_t port = -1,
                std::string_view netdev = {}) {
  Targets out;
  for (const DevlinkTarget& t : devlink_targets(h, handle, port, netdev))
    out.emplace_back(t.device, t.port);
  return out;
}

// One 8-rail host's kind of adapters: mlx5_0 an InfiniBand function (no Ethernet auxiliary
// device), mlx5_1 a RoCE function with its netdev and mlx5_core.eth.1, mlx5_2 a scalable
// function of mlx5_1's PF.
class Mlx5Host : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string ib = s.bus_device("pci0000:00/0000:00:01.0/0000:08:00.0", "pci");
    s.bus_device("pci0000:00/0000:00:01.0/0000:08:00.0/mlx5_core.rdma.0", "auxiliary");
    s.ibdev("mlx5_0", ib, {""});
    const std::string roce = s.bus_device("pci0000:00/0000:00:02.0/0000:09:00.0", "pci");
    s.bus_device("pci0000:00/0000:00:02.0/0000:09:00.0/mlx5_core.eth.1", "auxiliary");
    s.bus_device("pci0000:00/0000:00:02.0/0000:09:00.0/mlx5_core.rdma.1", "auxiliary");
    s.netdev("ens2np0", roce);
    s.ibdev("mlx5_1", roce, {"ens2np0"});
    const std::string sf =
        s.bus_device("pci0000:00/0000:00:02.0/0000:09:00.0/mlx5_core.sf.2", "auxiliary");
    s.ibdev("mlx5_2", sf, {""});
    h = s.read();
  }
  Sysfs s;
  std::vector<DevlinkHandles> h;
};

TEST_F(Mlx5Host, TheReaderFindsTheFunctionItsAuxiliaryChildrenAndThePortsNetdev) {
  ASSERT_EQ(h.size(), 3u);
  EXPECT_EQ(h[0].own, "pci/0000:08:00.0");
  EXPECT_EQ(h[0].own_children, (std::vector<std::string>{"auxiliary/mlx5_core.rdma.0"}));
  EXPECT_TRUE(h[0].port_links.empty());  // InfiniBand: no netdev
  EXPECT_EQ(h[1].own, "pci/0000:09:00.0");
  ASSERT_EQ(h[1].port_links.count(1), 1u);
  EXPECT_EQ(h[1].port_links.at(1).netdevs, (std::vector<std::string>{"ens2np0"}));
  // The SF's auxiliary device is its own device's parent, not one of the PF's children.
  auto children = h[1].own_children;
  std::sort(children.begin(), children.end());
  EXPECT_EQ(children,
            (std::vector<std::string>{"auxiliary/mlx5_core.eth.1", "auxiliary/mlx5_core.rdma.1"}));
  EXPECT_EQ(h[2].own, "auxiliary/mlx5_core.sf.2");
}

TEST_F(Mlx5Host, TheFunctionsReportersAreAboutItsDevice) {
  EXPECT_EQ(targets(h, "pci/0000:08:00.0"), (Targets{{"mlx5_0", 0}}));
  EXPECT_EQ(targets(h, "pci/0000:09:00.0"), (Targets{{"mlx5_1", 0}}));
}

// Linux >= 6.2: tx and rx on auxiliary/mlx5_core.eth.N, on the devlink port of the netdev.
TEST_F(Mlx5Host, APortReporterOfTheEthernetAuxiliaryInstanceIsThePortOfItsNetdev) {
  EXPECT_EQ(targets(h, "auxiliary/mlx5_core.eth.1", 65535, "ens2np0"), (Targets{{"mlx5_1", 1}}));
  // Its port's netdev not yet known (no port message read): the function's child still is.
  EXPECT_EQ(targets(h, "auxiliary/mlx5_core.eth.1", 65535), (Targets{{"mlx5_1", 1}}));
}

// Linux 6.1: the same port on the function's own instance.
TEST_F(Mlx5Host, APortReporterOfTheFunctionsInstanceIsThePortOfItsNetdev) {
  EXPECT_EQ(targets(h, "pci/0000:09:00.0", 65535, "ens2np0"), (Targets{{"mlx5_1", 1}}));
}

TEST_F(Mlx5Host, AScalableFunctionAndItsPfAreNotBlamedForEachOther) {
  EXPECT_EQ(targets(h, "auxiliary/mlx5_core.sf.2"), (Targets{{"mlx5_2", 0}}));
  for (const auto& [device, port] : targets(h, "pci/0000:09:00.0"))
    EXPECT_NE(device, "mlx5_2");
}

TEST_F(Mlx5Host, WhatIsNoRdmaDevicesHasNoTarget) {
  EXPECT_TRUE(targets(h, "pci/0000:0a:00.0").empty());
  // A port whose netdev no RDMA port uses.
  EXPECT_TRUE(targets(h, "auxiliary/mlx5_core.eth.1", 65536, "ens2np0v1").empty());
  EXPECT_TRUE(targets({}, "pci/0000:08:00.0").empty());
}

// mlx5's recovery from a fw_fatal report unregisters the RDMA device while the daemon still has
// it open: what was read of it before maps it until its removal is read.
TEST_F(Mlx5Host, ADeviceWhoseSysfsWentIsMappedByWhatWasReadOfItBefore) {
  s.unregister("mlx5_1");
  const auto now = s.read();
  ASSERT_EQ(now.size(), 3u);
  EXPECT_EQ(now[1].own, "");
  EXPECT_TRUE(now[1].port_links.empty());
  EXPECT_EQ(handles_or_before(now[1], &h[1]), h[1]);
  EXPECT_EQ(targets({now[0], handles_or_before(now[1], &h[1]), now[2]}, "pci/0000:09:00.0"),
            (Targets{{"mlx5_1", 0}}));
  // Nothing before, or another device before under that GUID: what is read now.
  EXPECT_EQ(handles_or_before(now[1], nullptr), now[1]);
  DevlinkHandles other = h[1];
  other.device = "mlx5_7";
  EXPECT_EQ(handles_or_before(now[1], &other), now[1]);
  // A device still there is read as it is now, whatever was read before.
  EXPECT_EQ(handles_or_before(h[0], &h[1]), h[0]);
}

// RoCE LAG: mlx5_bond_0 on PF0, its port's netdev bond0 over both PFs' netdevs; each PF has its
// own instance and (>= 6.2) Ethernet auxiliary instance.
TEST(DevlinkMap, EveryPfOfABondIsAboutTheBondDevice) {
  Sysfs s;
  const std::string pf0 = s.bus_device("pci0000:00/0000:00:03.0/0000:0b:00.0", "pci");
  const std::string pf1 = s.bus_device("pci0000:00/0000:00:03.0/0000:0b:00.1", "pci");
  s.bus_device("pci0000:00/0000:00:03.0/0000:0b:00.0/mlx5_core.eth.3", "auxiliary");
  s.bus_device("pci0000:00/0000:00:03.0/0000:0b:00.1/mlx5_core.eth.4", "auxiliary");
  s.netdev("ens3f0np0", pf0);
  s.netdev("ens3f1np1", pf1);
  s.netdev("bond0", "", {"ens3f0np0", "ens3f1np1"});
  s.ibdev("mlx5_bond_0", pf0, {"bond0"});
  const auto h = s.read();
  EXPECT_EQ(targets(h, "pci/0000:0b:00.0"), (Targets{{"mlx5_bond_0", 0}}));
  EXPECT_EQ(targets(h, "pci/0000:0b:00.1"), (Targets{{"mlx5_bond_0", 1}}));
  EXPECT_EQ(targets(h, "auxiliary/mlx5_core.eth.4", 131071, "ens3f1np1"),
            (Targets{{"mlx5_bond_0", 1}}));
  EXPECT_EQ(targets(h, "auxiliary/mlx5_core.eth.4", 131071), (Targets{{"mlx5_bond_0", 1}}));
  EXPECT_EQ(targets(h, "auxiliary/mlx5_core.eth.3", 65535, "ens3f0np0"),
            (Targets{{"mlx5_bond_0", 1}}));
}

// rxe on a netdevsim netdev, as Linux 6.1 lays it out: rxe has no parent; netdevsim1 is the
// netdev's device and has the instance.
TEST(DevlinkMap, RxeOnANetdevsimNetdevIsReachedThroughItsNetdev) {
  Sysfs s;
  const std::string nsim = s.bus_device("netdevsim1", "netdevsim");
  s.netdev("eni1np1", nsim);
  s.ibdev("rxe1", "", {"eni1np1"});
  const auto h = s.read();
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].own, "");
  EXPECT_EQ(targets(h, "netdevsim/netdevsim1"), (Targets{{"rxe1", 1}}));
  EXPECT_EQ(targets(h, "netdevsim/netdevsim1", 0, "eni1np1"), (Targets{{"rxe1", 1}}));
}

// A two-port device whose ports' netdevs share one function: its instance is about the device.
TEST(DevlinkMap, AnInstanceUnderEveryPortsNetdevIsTheDevice) {
  Sysfs s;
  const std::string nsim = s.bus_device("netdevsim2", "netdevsim");
  s.netdev("eni2np1", nsim);
  s.netdev("eni2np2", nsim);
  s.ibdev("rxe2", "", {"eni2np1", "eni2np2"});
  const auto h = s.read();
  EXPECT_EQ(targets(h, "netdevsim/netdevsim2"), (Targets{{"rxe2", 0}}));
  EXPECT_EQ(targets(h, "netdevsim/netdevsim2", 1, "eni2np2"), (Targets{{"rxe2", 2}}));
}

}  // namespace
}  // namespace rdma_eventd::daemon
