// The devlink stand-in (DIR/devlink.sock; docs/simulator.md, "devlink health"): its bytes are
// compared with the layout Linux 6.1 builds (ctrl_fill_info in net/netlink/genetlink.c,
// devlink_nl_health_reporter_fill in net/devlink/leftover.c, netlink_dump and netlink_ack in
// net/netlink/af_netlink.c), written out here attribute by attribute, and read back with the
// daemon's own decoder (core/devlink_decode.h). Reports and recoveries follow
// devlink_health_report(); the devices' sysfs leads to their PCI function, the devlink handle.
#include <linux/devlink.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <fstream>

#include "core/devlink_decode.h"
#include "netlink_client.h"
#include "netlink_msg.h"
#include "sim_test.h"

namespace simtest {
namespace {

namespace dl = rdma_eventd::daemon::devlink;
using Bytes = std::vector<uint8_t>;

constexpr uint16_t kFamily = 0x14;  // the id the stand-in documents
constexpr uint32_t kGroup = 2;

std::vector<dl::Message> decode(const Bytes& d) {
  std::vector<dl::Message> out;
  dl::decode(d, kFamily, out);
  return out;
}

// An mlx5 PF's reporter as 6.1 fills it on x86-64 (no DEVLINK_ATTR_PAD: efficient unaligned
// access): fw has a dump and no recover, fw_fatal both, with the PF's 60 s grace period.
Bytes reporter(uint8_t cmd, uint16_t flags, uint32_t seq, uint32_t pid, const std::string& dev,
               const std::string& name, uint8_t state, uint64_t errors, uint64_t recoveries) {
  Msg m(kFamily, flags, seq, pid);
  m.genl(cmd, DEVLINK_GENL_VERSION)
      .str(DEVLINK_ATTR_BUS_NAME, "pci")
      .str(DEVLINK_ATTR_DEV_NAME, dev)
      .nest(DEVLINK_ATTR_HEALTH_REPORTER)
      .str(DEVLINK_ATTR_HEALTH_REPORTER_NAME, name)
      .u8(DEVLINK_ATTR_HEALTH_REPORTER_STATE, state)
      .u64(DEVLINK_ATTR_HEALTH_REPORTER_ERR_COUNT, errors)
      .u64(DEVLINK_ATTR_HEALTH_REPORTER_RECOVER_COUNT, recoveries);
  if (name == "fw_fatal")
    m.u64(DEVLINK_ATTR_HEALTH_REPORTER_GRACEFUL_PERIOD, 60000)
        .u8(DEVLINK_ATTR_HEALTH_REPORTER_AUTO_RECOVER, 1);
  m.u8(DEVLINK_ATTR_HEALTH_REPORTER_AUTO_DUMP, 1).end();
  return m.done();
}

// mlx5e's tx reporter on a devlink port as 6.1 fills it: DEVLINK_ATTR_PORT_INDEX between the
// handle and the reporter's nest (devlink_nl_health_reporter_fill), recover and dump, 500 ms.
Bytes port_reporter(uint8_t cmd, uint16_t flags, uint32_t seq, uint32_t pid, uint32_t port,
                    uint8_t state, uint64_t errors, uint64_t recoveries) {
  return Msg(kFamily, flags, seq, pid)
      .genl(cmd, DEVLINK_GENL_VERSION)
      .str(DEVLINK_ATTR_BUS_NAME, "pci")
      .str(DEVLINK_ATTR_DEV_NAME, "0000:00:02.0")
      .u32(DEVLINK_ATTR_PORT_INDEX, port)
      .nest(DEVLINK_ATTR_HEALTH_REPORTER)
      .str(DEVLINK_ATTR_HEALTH_REPORTER_NAME, "tx")
      .u8(DEVLINK_ATTR_HEALTH_REPORTER_STATE, state)
      .u64(DEVLINK_ATTR_HEALTH_REPORTER_ERR_COUNT, errors)
      .u64(DEVLINK_ATTR_HEALTH_REPORTER_RECOVER_COUNT, recoveries)
      .u64(DEVLINK_ATTR_HEALTH_REPORTER_GRACEFUL_PERIOD, 500)
      .u8(DEVLINK_ATTR_HEALTH_REPORTER_AUTO_RECOVER, 1)
      .u8(DEVLINK_ATTR_HEALTH_REPORTER_AUTO_DUMP, 1)
      .end()
      .done();
}

Bytes done_message(uint32_t seq, uint32_t pid) {
  Bytes b = Msg(NLMSG_DONE, NLM_F_MULTI, seq, pid).done();
  b.insert(b.end(), 4, 0);  // dump_done_errno 0
  const uint32_t len = 20;
  std::memcpy(b.data(), &len, 4);
  return b;
}

std::string socket_of(const Sim& sim) {
  return sim.dir() + "/devlink.sock";
}

Bytes dump_request(uint32_t seq) {
  return dl::reporter_dump_request(kFamily, seq);
}

// The two-adapter topology's own reporters (fw and fw_fatal of each PCI function) as a dump
// answering request `seq` lists them.
Bytes two_adapter_reporters(uint32_t seq, uint32_t pid) {
  Bytes out;
  for (const std::string dev : {"0000:00:02.0", "0000:00:03.0"})
    for (const std::string name : {"fw", "fw_fatal"}) {
      const Bytes r =
          reporter(DEVLINK_CMD_HEALTH_REPORTER_GET, NLM_F_MULTI, seq, pid, dev, name, 0, 0, 0);
      out.insert(out.end(), r.begin(), r.end());
    }
  return out;
}

// Every datagram of a dump, up to and with its NLMSG_DONE.
std::vector<Bytes> read_dump(NetlinkClient& c) {
  std::vector<Bytes> parts;
  while (true) {
    parts.push_back(c.require());
    const auto m = decode(parts.back());
    if (!m.empty() && m.back().kind == dl::MessageKind::kDone) return parts;
  }
}

TEST(Devlink, TheFamilyIsAnsweredWithTheKernelsAttributesAndOthersWithEnoent) {
  Sim sim(rdmatest::topology("two-adapters"));
  NetlinkClient c(socket_of(sim));
  c.send(dl::family_request(7));
  const Bytes answer = c.require();
  // ctrl_fill_info: name, id, version, header size, max attribute, then the groups (the
  // command list the kernel puts before them is left out, docs/simulator.md).
  const Bytes expected = Msg(GENL_ID_CTRL, 0, 7, pid_of(answer))
                             .genl(CTRL_CMD_NEWFAMILY, 2)
                             .str(CTRL_ATTR_FAMILY_NAME, "devlink")
                             .u16(CTRL_ATTR_FAMILY_ID, kFamily)
                             .u32(CTRL_ATTR_VERSION, 1)
                             .u32(CTRL_ATTR_HDRSIZE, 0)
                             .u32(CTRL_ATTR_MAXATTR, DEVLINK_ATTR_MAX)
                             .nest(CTRL_ATTR_MCAST_GROUPS)
                             .nest(1)
                             .u32(CTRL_ATTR_MCAST_GRP_ID, kGroup)
                             .str(CTRL_ATTR_MCAST_GRP_NAME, "config")
                             .end()
                             .end()
                             .done();
  EXPECT_EQ(answer, expected);
  // The port id is the process's own for its first socket, as netlink_autobind gives it.
  EXPECT_EQ(pid_of(answer), static_cast<uint32_t>(getpid()));
  const auto m = decode(answer);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].kind, dl::MessageKind::kFamily);
  EXPECT_EQ(m[0].family.id, kFamily);
  EXPECT_EQ(m[0].family.config_group, kGroup);

  // Another family: NLMSG_ERROR -ENOENT carrying the whole request (no NETLINK_CAP_ACK).
  Bytes request = Msg(GENL_ID_CTRL, NLM_F_REQUEST, 8, 0)
                      .genl(CTRL_CMD_GETFAMILY, 1)
                      .str(CTRL_ATTR_FAMILY_NAME, "nl80211")
                      .done();
  c.send(request);
  const Bytes error = c.require();
  Bytes want = Msg(NLMSG_ERROR, 0, 8, pid_of(answer)).done();
  const int32_t enoent = -ENOENT;
  want.insert(want.end(), reinterpret_cast<const uint8_t*>(&enoent),
              reinterpret_cast<const uint8_t*>(&enoent) + 4);
  want.insert(want.end(), request.begin(), request.end());
  const auto len = static_cast<uint32_t>(want.size());
  std::memcpy(want.data(), &len, 4);
  EXPECT_EQ(error, want);
  const auto e = decode(error);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].kind, dl::MessageKind::kError);
  EXPECT_EQ(e[0].error, ENOENT);
}

TEST(Devlink, TheDumpListsEveryReporterWithTheRequestsSeqThenDoneOnItsOwn) {
  Sim sim(rdmatest::topology("two-adapters"));
  NetlinkClient c(socket_of(sim));
  c.send(dump_request(99));
  const std::vector<Bytes> parts = read_dump(c);
  ASSERT_EQ(parts.size(), 2u);
  const uint32_t pid = pid_of(parts[0]);
  EXPECT_EQ(parts[0], two_adapter_reporters(99, pid));
  EXPECT_EQ(parts[1], done_message(99, pid));

  const auto m = decode(parts[0]);
  ASSERT_EQ(m.size(), 4u);
  EXPECT_EQ(m[1].reporter.handle(), "pci/0000:00:02.0");
  EXPECT_EQ(m[1].reporter.name, "fw_fatal");
  EXPECT_EQ(m[1].reporter.grace_period_ms, 60000u);
  EXPECT_TRUE(m[1].reporter.auto_recover);
  EXPECT_FALSE(m[0].reporter.auto_recover);
  EXPECT_EQ(sim.ctl_json({"stats"})["devlink"]["dumps"], 1);
}

TEST(Devlink, AReportAndItsRecoveryAreTwoNotificationsToEveryConnection) {
  Sim sim(rdmatest::topology("two-adapters"));
  NetlinkClient a(socket_of(sim));
  NetlinkClient b(socket_of(sim));
  sim.wait_stats([](const json& s) { return s["devlink"]["connections_open"] == 2; });
  const json reply = sim.ctl_json({"devlink", "report", "mlx5_0", "fw_fatal"});
  EXPECT_EQ(reply["notifications"], 2);
  EXPECT_EQ(reply["recovered"], true);
  for (NetlinkClient* c : {&a, &b}) {
    // devlink_recover_notify: cmd RECOVER, seq 0, port id 0; first the error, counted...
    EXPECT_EQ(c->require(), reporter(DEVLINK_CMD_HEALTH_REPORTER_RECOVER, 0, 0, 0, "0000:00:02.0",
                                     "fw_fatal", 1, 1, 0));
    // ...then, the dump taken, the recovery: healthy, counted, with the dump's time stamps.
    const auto m = decode(c->require());
    ASSERT_EQ(m.size(), 1u);
    EXPECT_EQ(m[0].command, DEVLINK_CMD_HEALTH_REPORTER_RECOVER);
    EXPECT_EQ(m[0].seq, 0u);
    EXPECT_EQ(m[0].pid, 0u);
    EXPECT_EQ(m[0].reporter.state, dl::kStateHealthy);
    EXPECT_EQ(m[0].reporter.error_count, 1u);
    EXPECT_EQ(m[0].reporter.recover_count, 1u);
  }
  // A report within the 60 s grace period of that recovery is not recovered (ECANCELED).
  const json again = sim.ctl_json({"devlink", "report", "mlx5_0", "fw_fatal"});
  EXPECT_EQ(again["result"], "ECANCELED");
  EXPECT_EQ(again["state"], "error");
  EXPECT_EQ(again["notifications"], 1);
  const auto m = decode(a.require());
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].reporter.state, dl::kStateError);
  EXPECT_EQ(m[0].reporter.error_count, 2u);
  EXPECT_FALSE(a.receive(200).has_value());
}

TEST(Devlink, AFailedRecoveryLeavesErrorSilentlyAndAReportInErrorIsOnlyCounted) {
  Sim sim(rdmatest::topology("two-adapters"));
  NetlinkClient c(socket_of(sim));
  sim.wait_stats([](const json& s) { return s["devlink"]["connections_open"] == 1; });
  const json failed =
      sim.ctl_json({"devlink", "report", "mlx5_0", "fw_fatal", "--recovery", "fail"});
  EXPECT_EQ(failed["result"], "EIO");
  EXPECT_EQ(failed["notifications"], 1);
  EXPECT_EQ(c.require(), reporter(DEVLINK_CMD_HEALTH_REPORTER_RECOVER, 0, 0, 0, "0000:00:02.0",
                                  "fw_fatal", 1, 1, 0));
  // In error already: counted and notified, no recovery tried.
  EXPECT_EQ(sim.ctl_json({"devlink", "report", "mlx5_0", "fw_fatal"})["result"], "ECANCELED");
  auto m = decode(c.require());
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].reporter.error_count, 2u);
  EXPECT_EQ(m[0].reporter.state, dl::kStateError);
  // A manual recovery that fails: refused, nothing sent; one that works: one notification.
  EXPECT_EQ(sim.ctl({"devlink", "recover", "mlx5_0", "fw_fatal", "--recovery", "fail"}).exit_code(),
            1);
  EXPECT_FALSE(c.receive(200).has_value());
  EXPECT_EQ(sim.ctl_json({"devlink", "recover", "mlx5_0", "fw_fatal"})["recovered"], true);
  m = decode(c.require());
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].reporter.state, dl::kStateHealthy);
  EXPECT_EQ(m[0].reporter.recover_count, 1u);
  // Healthy: recovering does nothing.
  EXPECT_EQ(sim.ctl_json({"devlink", "recover", "mlx5_0", "fw_fatal"})["notifications"], 0);
  // fw has no recover operation: it stays in error, and recovering it is refused.
  sim.ctl_json({"devlink", "report", "mlx5_0", "fw"});
  EXPECT_EQ(decode(c.require())[0].reporter.state, dl::kStateError);
  const auto refused = sim.ctl({"devlink", "recover", "mlx5_0", "fw"});
  EXPECT_EQ(refused.exit_code(), 1);
  EXPECT_NE(refused.err.find("EOPNOTSUPP"), std::string::npos) << refused.err;
}

TEST(Devlink, TheDevicesSysfsLeadsToItsPciFunctionAndAnUnplugTakesItsReportersWithTheInstance) {
  Sim sim(rdmatest::topology("two-adapters"));
  char buf[PATH_MAX];
  const std::string link = sim.dir() + "/sys/class/infiniband/mlx5_1/device";
  ASSERT_NE(::realpath(link.c_str(), buf), nullptr);
  EXPECT_EQ(std::string(buf), sim.dir() + "/sys/devices/pci0000:00/0000:00:03.0");
  ASSERT_NE(::realpath((link + "/subsystem").c_str(), buf), nullptr);
  EXPECT_EQ(std::string(buf), sim.dir() + "/sys/bus/pci");

  NetlinkClient c(socket_of(sim));
  sim.wait_stats([](const json& s) { return s["devlink"]["connections_open"] == 1; });
  // The instance goes with DEVLINK_CMD_DEL (mlx5_1 has two ports: no devlink port), and no
  // reporter notification.
  inject(sim, {"unplug", "mlx5_1"});
  auto gone = c.require();
  EXPECT_EQ(gone[16], DEVLINK_CMD_DEL);
  EXPECT_FALSE(c.receive(200).has_value());
  c.send(dump_request(5));
  auto m = decode(read_dump(c)[0]);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].reporter.handle(), "pci/0000:00:02.0");
  // Back, with a new instance's counts, on the same function.
  inject(sim, {"replug", "mlx5_1"});
  EXPECT_EQ(c.require()[16], DEVLINK_CMD_NEW);
  c.send(dump_request(6));
  m = decode(read_dump(c)[0]);
  ASSERT_EQ(m.size(), 4u);
  EXPECT_EQ(m[3].reporter.handle(), "pci/0000:00:03.0");
  EXPECT_EQ(m[3].reporter.error_count, 0u);
}

TEST(Devlink, PortReportersComeAfterEveryInstancesOwnAndTopologyInstancesAreUnmapped) {
  rdmatest::TempDir tmp("rdma-devlink");
  const std::string topo = tmp.file("t.json");
  std::ofstream(topo) << R"({
    "devlink_u64_padding": true,
    "devlink_instances": [{"handle": "netdevsim/netdevsim9",
                           "reporters": [{"name": "dummy", "grace_period_ms": 10}]}],
    "devices": [{"name": "mlx5_2", "link_layer": "ethernet",
                 "ports": [{"netdev": "eth2", "mac": "0c:42:a1:00:00:02"}]}]})";
  Sim sim(topo);
  NetlinkClient c(socket_of(sim));
  c.send(dump_request(3));
  const Bytes part = read_dump(c)[0];
  const auto m = decode(part);
  ASSERT_EQ(m.size(), 5u);
  std::vector<std::string> order;
  for (const auto& x : m)
    order.push_back(x.reporter.handle() + " " + std::to_string(x.reporter.port_index) + " " +
                    x.reporter.name);
  // mlx5e's uplink port: (vhca_id 0 << 16) | 0xffff.
  EXPECT_EQ(order,
            (std::vector<std::string>{"pci/0000:00:02.0 -1 fw", "pci/0000:00:02.0 -1 fw_fatal",
                                      "netdevsim/netdevsim9 -1 dummy", "pci/0000:00:02.0 65535 tx",
                                      "pci/0000:00:02.0 65535 rx"}));
  EXPECT_EQ(m[3].reporter.grace_period_ms, 500u);
  EXPECT_EQ(m[2].reporter.grace_period_ms, 10u);
  // With padding, every u64's value sits 8-aligned in the datagram, behind a PAD attribute.
  size_t pads = 0;
  for (size_t at = 0; at + 4 <= part.size(); at += 4) {
    uint16_t len, type;
    std::memcpy(&len, &part[at], 2);
    std::memcpy(&type, &part[at + 2], 2);
    if (len == 4 && type == DEVLINK_ATTR_PAD) ++pads;
  }
  EXPECT_GT(pads, 0u);
  (void)sim.ctl_json({"devlink", "add", "netdevsim/netdevsim9", "empty", "--no-recover"});
  EXPECT_EQ(sim.ctl({"devlink", "add", "pci/0000:00:02.0", "x"}).exit_code(), 1);
  const json shown = sim.ctl_json({"devlink", "show", "netdevsim/netdevsim9"});
  ASSERT_EQ(shown["reporters"].size(), 2u);
  EXPECT_EQ(shown["reporters"][1]["reporter"], "empty");
  EXPECT_EQ(shown["reporters"][1]["device"], "");
}

// `devlink add HANDLE tx --port N` on a device's own instance: the driver's devlink port
// reporter. The dump lists it after every instance's own reporters, and its messages carry the
// port index between the handle and the reporter, byte for byte as 6.1's.
TEST(Devlink, APortReporterCarriesItsPortIndexBetweenTheHandleAndTheReporter) {
  Sim sim(rdmatest::topology("two-adapters"));
  NetlinkClient c(socket_of(sim));
  sim.wait_stats([](const json& s) { return s["devlink"]["connections_open"] == 1; });
  sim.ctl_json(
      {"devlink", "add", "pci/0000:00:02.0", "tx", "--port", "65535", "--grace-period", "500"});
  c.send(dump_request(4));
  const std::vector<Bytes> parts = read_dump(c);
  ASSERT_EQ(parts.size(), 2u);
  const uint32_t pid = pid_of(parts[0]);
  Bytes want = two_adapter_reporters(4, pid);
  const Bytes tx =
      port_reporter(DEVLINK_CMD_HEALTH_REPORTER_GET, NLM_F_MULTI, 4, pid, 65535, 0, 0, 0);
  want.insert(want.end(), tx.begin(), tx.end());
  EXPECT_EQ(parts[0], want);
  const auto m = decode(parts[0]);
  ASSERT_EQ(m.size(), 5u);
  EXPECT_EQ(m[4].reporter.port_index, 65535);
  EXPECT_EQ(m[4].reporter.name, "tx");

  // A report the driver fails to recover: one notification, with the port index. Named by the
  // device and the port, as devlink(8)'s DEV/PORT_INDEX.
  const json failed =
      sim.ctl_json({"devlink", "report", "mlx5_0", "tx", "--port", "65535", "--recovery", "fail"});
  EXPECT_EQ(failed["port_index"], 65535);
  EXPECT_EQ(failed["result"], "EIO");
  EXPECT_EQ(c.require(),
            port_reporter(DEVLINK_CMD_HEALTH_REPORTER_RECOVER, 0, 0, 0, 65535, 1, 1, 0));
  // The dump the report took would add DUMP_TS and DUMP_TS_NS (times): cleared, by port.
  sim.ctl_json({"devlink", "dump-clear", "mlx5_0", "tx", "--port", "65535"});
  // Without --port, the one tx of the instance; with a second one, which is ambiguous.
  EXPECT_EQ(sim.ctl_json({"devlink", "recover", "mlx5_0", "tx"})["recovered"], true);
  EXPECT_EQ(c.require(),
            port_reporter(DEVLINK_CMD_HEALTH_REPORTER_RECOVER, 0, 0, 0, 65535, 0, 1, 1));
  sim.ctl_json({"devlink", "add", "pci/0000:00:02.0", "tx", "--port", "1"});
  const auto ambiguous = sim.ctl({"devlink", "report", "mlx5_0", "tx"});
  EXPECT_EQ(ambiguous.exit_code(), 1);
  EXPECT_NE(ambiguous.err.find("--port"), std::string::npos) << ambiguous.err;
  EXPECT_EQ(sim.ctl({"devlink", "report", "mlx5_0", "tx", "--port", "2"}).exit_code(), 1);
  EXPECT_FALSE(c.receive(200).has_value());
  const json shown = sim.ctl_json({"devlink", "show", "mlx5_0", "--port", "65535"});
  ASSERT_EQ(shown["reporters"].size(), 1u) << shown.dump();
  EXPECT_EQ(shown["reporters"][0]["reporter"], "tx");
  EXPECT_EQ(shown["reporters"][0]["port_index"], 65535);
  EXPECT_EQ(shown["reporters"][0]["error_count"], 1);
  EXPECT_EQ(shown["reporters"][0]["recover_count"], 1);
  // A device's own reporters stay its driver's; its port reporters come and go.
  EXPECT_EQ(sim.ctl({"devlink", "remove", "pci/0000:00:02.0", "fw"}).exit_code(), 1);
  sim.ctl_json({"devlink", "remove", "pci/0000:00:02.0", "tx", "--port", "1"});
  EXPECT_EQ(sim.ctl_json({"devlink", "show", "mlx5_0"})["reporters"].size(), 3u);
}

}  // namespace
}  // namespace simtest
