// The RDMA netlink stand-in (DIR/rdma-netlink.sock; docs/simulator.md, "RDMA netlink monitor"):
// its bytes are compared with the layout drivers/infiniband/core/nldev.c builds, written out
// here attribute by attribute: nldev_sys_get_doit's answer, rdma_nl_notify_event's
// notifications (fill_nldev_handle, fill_mon_netdev_association), and netlink_ack's errors as
// rdma_nl_rcv_msg returns them. Hot-plug is driven with the simulator's unplug, replug and
// rename. Nothing here sleeps: a SYS_GET round trip shows that nothing else was queued before
// its answer (a connection's datagrams keep their order).
#include <linux/netlink.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "netlink_client.h"
#include "netlink_msg.h"
#include "sim_test.h"

namespace simtest {
namespace {

using Bytes = std::vector<uint8_t>;

constexpr uint16_t kSysGet = (5 << 10) + 6;    // RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, SYS_GET)
constexpr uint16_t kMonitor = (5 << 10) + 28;  // RDMA_NLDEV_CMD_MONITOR
constexpr uint16_t kDevIndex = 1, kDevName = 2, kPortIndex = 3, kNdevIndex = 50, kNdevName = 51,
                   kNetnsMode = 66, kCopyOnFork = 93, kPrivilegedQkey = 96, kEventType = 102,
                   kMonitorMode = 103;
enum Event : uint8_t { kRegister = 0, kUnregister = 1, kNetdevAttach = 2, kRename = 4 };

const uint32_t kPid = static_cast<uint32_t>(getpid());  // netlink_autobind: the first socket

Bytes sys_get_request(uint32_t seq, uint16_t flags = NLM_F_REQUEST) {
  return Msg(kSysGet, flags, seq, 0).done();
}

// nldev_sys_get_doit of 6.12 on, or of 6.1 (no PRIVILEGED_QKEY_MODE, no MONITOR_MODE).
Bytes sys_get_answer(uint32_t seq, bool monitor, uint32_t pid = kPid) {
  Msg m(kSysGet, 0, seq, pid);
  m.u8(kNetnsMode, 1);
  if (monitor) m.u8(kPrivilegedQkey, 0).u8(kMonitorMode, 1);
  return m.u8(kCopyOnFork, 1).done();
}

Bytes device_event(Event e, uint32_t index, const std::string& name) {
  return Msg(kMonitor, 0, 0, 0).u32(kDevIndex, index).str(kDevName, name).u8(kEventType, e).done();
}

Bytes attach_event(uint32_t index, const std::string& name, uint32_t port, uint32_t ifindex,
                   const std::string& netdev) {
  return Msg(kMonitor, 0, 0, 0)
      .u32(kDevIndex, index)
      .str(kDevName, name)
      .u32(kPortIndex, port)
      .u32(kNdevIndex, ifindex)
      .str(kNdevName, netdev)
      .u8(kEventType, kNetdevAttach)
      .done();
}

uint32_t index_of(const Sim& sim, const std::string& name) {
  const json shown = sim.show();
  for (const json& d : shown["devices"])
    if (d["name"] == name) return d["index"].get<uint32_t>();
  throw std::runtime_error("no device " + name);
}

// Asks SYS_GET and requires its answer next: nothing else was queued before it. Returns the
// connection's port id.
uint32_t expect_nothing_queued(NetlinkClient& c, uint32_t seq, bool monitor) {
  c.send(sys_get_request(seq));
  const Bytes answer = c.require();
  EXPECT_EQ(answer, sys_get_answer(seq, monitor, pid_of(answer)));
  return pid_of(answer);
}

TEST(RdmaNetlink, SysGetShowsTheMonitorAndAnAckFollowsWhenAskedFor) {
  Sim sim(rdmatest::topology("two-adapters"));
  NetlinkClient c(sim.rdma_netlink_socket());
  c.send(sys_get_request(7));
  EXPECT_EQ(c.require(), sys_get_answer(7, true));
  const Bytes acked = sys_get_request(8, NLM_F_REQUEST | NLM_F_ACK);
  c.send(acked);
  EXPECT_EQ(c.require(), sys_get_answer(8, true));
  EXPECT_EQ(c.require(), error_message(kPid, acked, 0));
  const json s = sim.stats()["rdma_netlink"];
  EXPECT_EQ(s["kernel"], "monitor");
  EXPECT_EQ(s["requests"], 2);
  EXPECT_EQ(s["errors"], 0);
  EXPECT_EQ(s["connections"], 1);
}

TEST(RdmaNetlink, RegisterAttachUnregisterAndRenameReachEveryConnectionInTheKernelsOrder) {
  Sim sim(rdmatest::topology("two-adapters"));
  NetlinkClient a(sim.rdma_netlink_socket());
  NetlinkClient b(sim.rdma_netlink_socket());
  // Both connected before the first change (a round trip each). netlink_autobind: the
  // process's pid for its first socket, -4096 for the next.
  EXPECT_EQ(expect_nothing_queued(a, 1, true), kPid);
  EXPECT_EQ(expect_nothing_queued(b, 1, true), 0xfffff000u);
  const uint32_t before = index_of(sim, "mlx5_1");
  rdmatest::inject(sim, {"unplug", "mlx5_1"});
  rdmatest::inject(sim, {"replug", "mlx5_1"});
  const uint32_t after = index_of(sim, "mlx5_1");
  EXPECT_NE(after, before);  // a device index is never reused
  rdmatest::inject(sim, {"rename", "mlx5_1", "roce0"});
  for (NetlinkClient* c : {&a, &b}) {
    // Removal: UNREGISTER only (free_netdevs sends no NETDEV_DETACH).
    EXPECT_EQ(c->require(), device_event(kUnregister, before, "mlx5_1"));
    // Registration: REGISTER, then each RoCE port's netdev (ib_device_notify_register).
    EXPECT_EQ(c->require(), device_event(kRegister, after, "mlx5_1"));
    EXPECT_EQ(c->require(), attach_event(after, "mlx5_1", 1, 4, "ens1f0"));
    EXPECT_EQ(c->require(), attach_event(after, "mlx5_1", 2, 5, "ens1f1"));
    EXPECT_EQ(c->require(), device_event(kRename, after, "roce0"));
    expect_nothing_queued(*c, 2, true);
  }
  // The InfiniBand device has no netdev: REGISTER alone.
  rdmatest::inject(sim, {"unplug", "mlx5_0"});
  rdmatest::inject(sim, {"replug", "mlx5_0"});
  EXPECT_EQ(a.require(), device_event(kUnregister, 0, "mlx5_0"));
  EXPECT_EQ(a.require(), device_event(kRegister, index_of(sim, "mlx5_0"), "mlx5_0"));
  expect_nothing_queued(a, 3, true);
  EXPECT_EQ(sim.stats()["rdma_netlink"]["notifications"], 7);
}

TEST(RdmaNetlink, AKernelWithoutTheMonitorShowsNoMonitorModeAndSendsNothing) {
  Sim sim(rdmatest::topology("two-adapters"), rdmatest::SimOptions{.rdma_netlink = "none"});
  NetlinkClient c(sim.rdma_netlink_socket());
  expect_nothing_queued(c, 1, false);
  rdmatest::inject(sim, {"unplug", "mlx5_1"});
  rdmatest::inject(sim, {"replug", "mlx5_1"});
  rdmatest::inject(sim, {"rename", "mlx5_1", "roce0"});
  expect_nothing_queued(c, 2, false);
  // 6.1 has no RDMA_NLDEV_CMD_MONITOR at all (RDMA_NLDEV_NUM_OPS 25): EINVAL.
  const Bytes monitor = Msg(kMonitor, NLM_F_REQUEST, 3, 0).done();
  c.send(monitor);
  EXPECT_EQ(c.require(), error_message(kPid, monitor, EINVAL));
  const json s = sim.stats()["rdma_netlink"];
  EXPECT_EQ(s["kernel"], "none");
  EXPECT_EQ(s["notifications"], 0);
}

TEST(RdmaNetlink, A612KernelMonitorsButSendsNoRename) {
  Sim sim(rdmatest::topology("two-adapters"), rdmatest::SimOptions{.rdma_netlink = "rename-less"});
  NetlinkClient c(sim.rdma_netlink_socket());
  expect_nothing_queued(c, 1, true);
  const uint32_t index = index_of(sim, "mlx5_1");
  rdmatest::inject(sim, {"rename", "mlx5_1", "roce0"});
  rdmatest::inject(sim, {"unplug", "roce0"});
  EXPECT_EQ(c.require(), device_event(kUnregister, index, "roce0"));
  expect_nothing_queued(c, 2, true);
}

TEST(RdmaNetlink, HostileRequestsGetTheKernelsErrorsAndTheConnectionStaysUsable) {
  Sim sim(rdmatest::topology("two-adapters"));
  NetlinkClient c(sim.rdma_netlink_socket());
  struct Case {
    const char* what;
    Bytes request;
    int error;
  };
  Bytes truncated_attr = Msg(kSysGet, NLM_F_REQUEST, 16, 0).u32(kDevIndex, 0).done();
  truncated_attr.resize(truncated_attr.size() - 2);  // the attribute no longer fits
  const uint32_t len = static_cast<uint32_t>(truncated_attr.size());
  std::memcpy(truncated_attr.data(), &len, 4);
  const std::vector<Case> cases = {
      {"no such client", Msg((9 << 10) + 1, NLM_F_REQUEST, 10, 0).done(), EINVAL},
      {"no such command", Msg((5 << 10) + 200, NLM_F_REQUEST, 11, 0).done(), EINVAL},
      {"MONITOR has no handler", Msg(kMonitor, NLM_F_REQUEST, 12, 0).done(), EINVAL},
      {"SYS_GET has no dump", Msg(kSysGet, NLM_F_REQUEST | NLM_F_DUMP, 13, 0).done(), EINVAL},
      {"attribute beyond the last", Msg(kSysGet, NLM_F_REQUEST, 14, 0).u8(200, 1).done(), EINVAL},
      {"attribute 0", Msg(kSysGet, NLM_F_REQUEST, 15, 0).u8(0, 1).done(), EINVAL},
      {"truncated attribute", truncated_attr, EINVAL},
      {"not emulated (DELLINK)", Msg((5 << 10) + 4, NLM_F_REQUEST, 17, 0).done(), EOPNOTSUPP},
  };
  for (const Case& k : cases) {
    c.send(k.request);
    EXPECT_EQ(c.require(), error_message(kPid, k.request, k.error)) << k.what;
  }
  // Ignored without an answer: a datagram shorter than a header, a length beyond the datagram,
  // and a message that is not a request (not asked to be acknowledged).
  c.send(Bytes{1, 2, 3});
  Bytes too_long = sys_get_request(20);
  too_long[0] = 200;
  c.send(too_long);
  c.send(Msg(kSysGet, 0, 21, 0).done());
  // Two requests in one datagram: two answers, in order.
  Bytes two = sys_get_request(22);
  const Bytes second = Msg((5 << 10) + 200, NLM_F_REQUEST, 23, 0).done();
  two.insert(two.end(), second.begin(), second.end());
  c.send(two);
  EXPECT_EQ(c.require(), sys_get_answer(22, true));
  EXPECT_EQ(c.require(), error_message(kPid, second, EINVAL));
  expect_nothing_queued(c, 24, true);
  const json s = sim.stats()["rdma_netlink"];
  EXPECT_EQ(s["errors"], cases.size() + 1);
  EXPECT_EQ(s["connections_open"], 1);
}

TEST(RdmaNetlink, StartRefusesAnUnknownKernel) {
  const rdmatest::CommandResult r = rdmatest::run_command(
      {rdmatest::rdma_sim_bin(), "start", "--rdma-netlink", "6.13", "--dir", "/nonexistent/x"});
  EXPECT_EQ(r.exit_code(), 2);
  EXPECT_EQ(r.err.substr(0, r.err.find(" (usage: ")),
            "rdma-sim: start: --rdma-netlink \"6.13\" is not monitor, rename-less or none");
}

}  // namespace
}  // namespace simtest
