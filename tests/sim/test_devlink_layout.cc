// mlx5's sysfs and devlink layout in the simulator (docs/simulator.md, "mlx5's sysfs and devlink
// layout"): the netdevs and auxiliary devices under the PCI function, the devlink instances and
// ports by kernel release, their bytes (devlink_nl_fill and devlink_nl_port_fill, compared with
// the Linux 6.1 netdevsim capture in tests/unit/data/devlink/) and the notifications their
// registration and unregistration send.
#include <linux/devlink.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>

#include "captured_hex.h"
#include "devlink_notes.h"
#include "netlink_msg.h"

namespace simtest {
namespace {

constexpr uint16_t kCapturedFamily = 21;

// The captured file's messages, one per line, as the kernel sent them.
std::vector<Bytes> captured(const std::string& name) {
  std::vector<Bytes> out = rdmatest::captured_messages(RDMA_EVENTD_SOURCE_DIR, "devlink", name);
  EXPECT_FALSE(out.empty()) << name;
  return out;
}

// The whole answer to a DEVLINK_CMD_PORT_GET dump: its messages, then NLMSG_DONE.
std::vector<Bytes> port_dump(NetlinkClient& c, uint32_t seq) {
  c.send(
      Msg(kDevlinkFamily, NLM_F_REQUEST | NLM_F_DUMP, seq, 0).genl(DEVLINK_CMD_PORT_GET, 1).done());
  std::vector<Bytes> out;
  while (true) {
    const Bytes d = c.require();
    for (size_t at = 0; at + NLMSG_HDRLEN <= d.size();) {
      nlmsghdr h;
      std::memcpy(&h, &d[at], sizeof h);
      if (h.nlmsg_type == NLMSG_DONE) return out;
      out.emplace_back(d.begin() + at, d.begin() + at + h.nlmsg_len);
      at += NLMSG_ALIGN(h.nlmsg_len);
    }
  }
}

// The uplink port as devlink_nl_port_fill puts it, in the order of the captured PORT_NEW.
Bytes port_message(uint8_t cmd, uint16_t flags, uint32_t seq, uint32_t pid, const std::string& bus,
                   const std::string& dev, uint32_t index, const std::string& netdev,
                   uint32_t ifindex) {
  return Msg(kDevlinkFamily, flags, seq, pid)
      .genl(cmd, DEVLINK_GENL_VERSION)
      .str(DEVLINK_ATTR_BUS_NAME, bus)
      .str(DEVLINK_ATTR_DEV_NAME, dev)
      .u32(DEVLINK_ATTR_PORT_INDEX, index)
      .u16(DEVLINK_ATTR_PORT_TYPE, DEVLINK_PORT_TYPE_ETH)
      .u32(DEVLINK_ATTR_PORT_NETDEV_IFINDEX, ifindex)
      .str(DEVLINK_ATTR_PORT_NETDEV_NAME, netdev)
      .u8(DEVLINK_ATTR_PORT_SPLITTABLE, 0)
      .u16(DEVLINK_ATTR_PORT_FLAVOUR, DEVLINK_PORT_FLAVOUR_PHYSICAL)
      .u32(DEVLINK_ATTR_PORT_NUMBER, 0)
      .done();
}

std::vector<uint16_t> attr_types(const Bytes& m) {
  std::vector<uint16_t> out;
  for (const auto& [t, p] : attrs_of(m))
    out.push_back(t);
  return out;
}

TEST(DevlinkLayout, NetdevsAndAuxiliaryDevicesAreChildrenOfThePciFunction) {
  LayoutSim sim(two_functions("6.8"));
  const std::string sys = sim->dir() + "/sys";
  const std::string fn1 = sys + "/devices/pci0000:00/0000:00:03.0";
  // The netdev: under the function, its `device` the function, in class/net.
  EXPECT_EQ(real(sys + "/class/net/eth2"), fn1 + "/net/eth2");
  EXPECT_EQ(real(sys + "/class/net/eth2/device"), fn1);
  EXPECT_EQ(real(sys + "/class/net/eth2/subsystem"), sys + "/class/net");
  EXPECT_EQ(rdmatest::read_file(sys + "/class/net/eth2/ifindex"), "42\n");
  // The RDMA device's parent is the function itself, not an auxiliary device.
  EXPECT_EQ(real(sys + "/class/infiniband/mlx5_1/device"), fn1);
  // mlx5_adev_idx_alloc: one index per function, in probe order; eth only where Ethernet.
  EXPECT_EQ(real(sys + "/bus/auxiliary/devices/mlx5_core.rdma.0"),
            sys + "/devices/pci0000:00/0000:00:02.0/mlx5_core.rdma.0");
  EXPECT_EQ(real(sys + "/bus/auxiliary/devices/mlx5_core.eth.1"), fn1 + "/mlx5_core.eth.1");
  EXPECT_EQ(real(sys + "/bus/auxiliary/devices/mlx5_core.rdma.1"), fn1 + "/mlx5_core.rdma.1");
  EXPECT_EQ(real(fn1 + "/mlx5_core.eth.1/subsystem"), sys + "/bus/auxiliary");
  EXPECT_EQ(real(fn1 + "/mlx5_core.eth.1/driver"), sys + "/bus/auxiliary/drivers/mlx5_core.eth");
  EXPECT_NE(::access((sys + "/bus/auxiliary/devices/mlx5_core.eth.0").c_str(), F_OK), 0);

  // Gone with the function, back on replug with the lowest free index.
  inject(*sim, {"unplug", "mlx5_0"});
  EXPECT_NE(::access((sys + "/bus/auxiliary/devices/mlx5_core.rdma.0").c_str(), F_OK), 0);
  inject(*sim, {"unplug", "mlx5_1"});
  EXPECT_NE(::access((sys + "/class/net/eth2").c_str(), F_OK), 0);
  EXPECT_NE(::access((fn1 + "/mlx5_core.eth.1").c_str(), F_OK), 0);
  inject(*sim, {"replug", "mlx5_1"});
  EXPECT_EQ(real(sys + "/bus/auxiliary/devices/mlx5_core.eth.0"), fn1 + "/mlx5_core.eth.0");
  EXPECT_EQ(real(sys + "/class/net/eth2/device"), fn1);
}

// 6.1: tx and rx on the pci/ instance's port; 6.8: on auxiliary/mlx5_core.eth.N's, with vnic
// beside fw and fw_fatal. The port dump answers DEVLINK_CMD_NEW per port (before the 2024 fix).
TEST(DevlinkLayout, ThePortDumpCarriesTheNetdevOnTheInstanceTheKernelReleasePutsItOn) {
  for (const std::string kernel : {"6.1", "6.8"}) {
    SCOPED_TRACE(kernel);
    LayoutSim sim(two_functions(kernel));
    NetlinkClient c(socket_of(*sim));
    const std::vector<Bytes> ports = port_dump(c, 9);
    ASSERT_EQ(ports.size(), 1u);
    uint32_t pid;
    std::memcpy(&pid, &ports[0][12], 4);
    const bool aux = kernel == "6.8";
    const std::string bus = aux ? "auxiliary" : "pci";
    const std::string dev = aux ? "mlx5_core.eth.1" : "0000:00:03.0";
    EXPECT_EQ(ports[0],
              port_message(DEVLINK_CMD_NEW, NLM_F_MULTI, 9, pid, bus, dev, 131071, "eth2", 42));
    const json shown = sim->ctl_json({"devlink", "show", "mlx5_1"});
    std::vector<std::string> reporters;
    for (const json& r : shown["reporters"])
      reporters.push_back(r["handle"].get<std::string>() + " " + r["reporter"].get<std::string>());
    const std::vector<std::string> on_aux = {
        "pci/0000:00:03.0 fw", "pci/0000:00:03.0 fw_fatal", "pci/0000:00:03.0 vnic",
        "auxiliary/mlx5_core.eth.1 tx", "auxiliary/mlx5_core.eth.1 rx"};
    const std::vector<std::string> on_pci = {"pci/0000:00:03.0 fw", "pci/0000:00:03.0 fw_fatal",
                                             "pci/0000:00:03.0 tx", "pci/0000:00:03.0 rx"};
    EXPECT_EQ(reporters, aux ? on_aux : on_pci);
    const std::string ports_text = sim->ctl({"devlink", "ports"}).out;
    EXPECT_NE(ports_text.find(bus + "/" + dev +
                              "/131071: type eth netdev eth2 ifindex 42 "
                              "flavour physical port 0 (mlx5_1)"),
              std::string::npos)
        << ports_text;
    // A port reporter is found by the device's name whichever instance has it.
    EXPECT_EQ(sim->ctl_json({"devlink", "report", "mlx5_1", "tx"})["handle"], bus + "/" + dev);
  }
}

// The captured PORT_NEW lists the same attributes in the same order; an instance's NEW (a
// topology instance has netdevsim's reload operations) is the captured one byte for byte.
TEST(DevlinkLayout, InstanceAndPortMessagesAreLaidOutAsTheKernelsCapture) {
  const std::vector<Bytes> capture = captured("new_device");
  ASSERT_GE(capture.size(), 2u);
  ASSERT_EQ(command_of(capture[1]), DEVLINK_CMD_PORT_NEW);
  LayoutSim sim(two_functions("6.1"));
  NetlinkClient c(socket_of(*sim));
  EXPECT_EQ(attr_types(port_dump(c, 1).at(0)), attr_types(capture[1]));

  connected(*sim, c);
  sim->ctl_json({"devlink", "add", "netdevsim/netdevsim1", "dummy"});
  const Bytes fresh = c.require();
  Bytes want = capture[0];
  std::memcpy(&want[4], &kDevlinkFamily, 2);  // the family id the stand-in's kernel gave
  EXPECT_EQ(fresh, want);
  uint16_t family;
  std::memcpy(&family, &capture[0][4], 2);
  EXPECT_EQ(family, kCapturedFamily);
}

// Registration and unregistration, in mlx5's order for each release (remove_one before 6.3:
// devlink_unregister first; from 6.3 mlx5_uninit_one: auxiliary devices, then pci/).
TEST(DevlinkLayout, UnplugAndReplugSendTheInstancesAndPortsInTheKernelsOrder) {
  const std::map<std::string, std::pair<std::vector<std::string>, std::vector<std::string>>>
      expected = {
          {"6.1",
           {{"PORT_DEL pci/0000:00:03.0/131071 eth eth2", "DEL pci/0000:00:03.0"},
            {"NEW pci/0000:00:03.0", "PORT_NEW pci/0000:00:03.0/131071 eth eth2"}}},
          {"6.8",
           {{"PORT_NEW auxiliary/mlx5_core.eth.1/131071 eth",
             "PORT_NEW auxiliary/mlx5_core.eth.1/131071 notset",
             "PORT_DEL auxiliary/mlx5_core.eth.1/131071 notset", "DEL auxiliary/mlx5_core.eth.1",
             "DEL pci/0000:00:03.0"},
            {"NEW pci/0000:00:03.0", "NEW auxiliary/mlx5_core.eth.1",
             "PORT_NEW auxiliary/mlx5_core.eth.1/131071 notset",
             "PORT_NEW auxiliary/mlx5_core.eth.1/131071 eth",
             "PORT_NEW auxiliary/mlx5_core.eth.1/131071 eth eth2"}}},
      };
  for (const auto& [kernel, want] : expected) {
    SCOPED_TRACE(kernel);
    LayoutSim sim(two_functions(kernel));
    NetlinkClient c(socket_of(*sim));
    connected(*sim, c);
    inject(*sim, {"unplug", "mlx5_1"});
    EXPECT_EQ(drain(c), want.first);
    inject(*sim, {"replug", "mlx5_1"});
    // mlx5_0 keeps index 0: the function back takes 1 again.
    EXPECT_EQ(drain(c), want.second);
    // An InfiniBand function: its instance alone.
    inject(*sim, {"unplug", "mlx5_0"});
    EXPECT_EQ(drain(c), std::vector<std::string>{"DEL pci/0000:00:02.0"});
  }
}

// A scalable function: its RDMA device hangs off mlx5_core.sf.<id> below its PF's function, and
// its own devlink instance is auxiliary/mlx5_core.sf.<id> (fw, fw_fatal with the 30 s grace of a
// non-PF function), never the PF's.
TEST(DevlinkLayout, AScalableFunctionHangsOffItsAuxiliaryDeviceWithItsOwnInstance) {
  LayoutSim sim(R"({"kernel": "6.8", "devices": [
      {"name": "mlx5_0", "link_layer": "ethernet", "ports": [{"netdev": "p0"}]},
      {"name": "mlx5_2", "sf": {"parent": "mlx5_0", "id": 3}, "ports": [{"state": "active"}]}]})");
  const std::string fn = sim->dir() + "/sys/devices/pci0000:00/0000:00:02.0";
  EXPECT_EQ(real(sim->dir() + "/sys/class/infiniband/mlx5_2/device"), fn + "/mlx5_core.sf.3");
  EXPECT_EQ(real(fn + "/mlx5_core.sf.3/subsystem"), sim->dir() + "/sys/bus/auxiliary");
  const json shown = sim->ctl_json({"devlink", "show", "mlx5_2"});
  std::vector<std::string> reporters;
  for (const json& r : shown["reporters"])
    reporters.push_back(r["handle"].get<std::string>() + " " + r["reporter"].get<std::string>() +
                        " " + std::to_string(r["grace_period_ms"].get<uint64_t>()));
  EXPECT_EQ(reporters, (std::vector<std::string>{"auxiliary/mlx5_core.sf.3 fw 0",
                                                 "auxiliary/mlx5_core.sf.3 fw_fatal 30000"}));
  NetlinkClient c(socket_of(*sim));
  connected(*sim, c);
  inject(*sim, {"unplug", "mlx5_2"});
  EXPECT_EQ(drain(c), std::vector<std::string>{"DEL auxiliary/mlx5_core.sf.3"});
  EXPECT_NE(::access((fn + "/mlx5_core.sf.3").c_str(), F_OK), 0);
  const auto bad = start_with_topology(
      R"({"devices": [{"name": "s", "sf": {"parent": "nope"}, "ports": [{}]}]})");
  EXPECT_EQ(bad.result.exit_code(), 78);
  EXPECT_NE(bad.result.err.find("devices[0].sf"), std::string::npos) << bad.result.err;
}

TEST(DevlinkLayout, AKernelThatIsNoReleaseIsRefusedNamingTheFileAndKey) {
  for (const std::string bad : {R"("6")", R"("5.15")", R"("6.x")", R"(6.8)", R"("6.8.1")"}) {
    const auto r = start_with_topology(R"({"kernel": )" + bad + R"(, "devices": []})");
    EXPECT_EQ(r.result.exit_code(), 78) << bad;
    EXPECT_NE(r.result.err.find("kernel"), std::string::npos) << r.result.err;
    EXPECT_NE(r.result.err.find(r.file), std::string::npos) << r.result.err;
  }
}

}  // namespace
}  // namespace simtest
