// The ethtool family of the generic netlink stand-in (DIR/devlink.sock; docs/simulator.md,
// "RoCE PHY statistics"): a raw client sends the bytes a program sends the kernel and gets the
// replies Linux 6.1 builds (fec_fill_reply in net/ethtool/fec.c, stats_fill_reply in
// net/ethtool/stats.c, mlx5e_stats_fec_get for what each FEC mode fills), written out here
// attribute by attribute and read back with the daemon's decoder (core/ethtool_wire.h); and
// the errors of the kernel's policies and device lookup.
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include <cerrno>

#include "core/ethtool_wire.h"
#include "netlink_client.h"
#include "netlink_msg.h"
#include "sim_test.h"

namespace simtest {
// Named, so that a unity build puts it beside test_devlink.cc's names.
namespace ethtool_test {
namespace {

namespace et = rdma_eventd::daemon::ethtool;
using Bytes = std::vector<uint8_t>;

constexpr uint16_t kFamily = 0x15;  // the id the stand-in documents
constexpr uint16_t kNested = NLA_F_NESTED;

// mlx5_0: InfiniBand. mlx5_1: RoCE, ens1f0 (RS, the default, 1000 corrected blocks from the
// topology) and ens1f1 (BASE-R on 4 lanes). mlx5_2: RoCE with FEC off. rxe0: Soft-RoCE on eth0,
// whose driver has no FEC operations.
constexpr const char* kTopology = R"({"devices": [
  {"name": "mlx5_0", "ports": [{"lid": 7}]},
  {"name": "mlx5_1", "link_layer": "ethernet", "ports": [
    {"netdev": "ens1f0", "netdev_ifindex": 4, "mac": "0c:42:a1:6d:0b:3a",
     "counter_values": {"ethtool/fec_corrected_blocks": 1000}},
    {"netdev": "ens1f1", "netdev_ifindex": 5, "mac": "0c:42:a1:6d:0b:3b", "fec": "baser"}]},
  {"name": "mlx5_2", "link_layer": "ethernet", "ports": [
    {"netdev": "ens2f0", "netdev_ifindex": 6, "mac": "0c:42:a1:6d:0c:3a", "fec": "off"}]},
  {"name": "rxe0", "provider": "rxe", "link_layer": "ethernet", "vendor_id": "0xffffff",
   "vendor_part_id": 0, "ports": [{"netdev": "eth0", "netdev_ifindex": 2,
                                   "mac": "02:00:00:00:00:10"}]}]})";

struct EthtoolFabric {
  rdmatest::TempDir tmp;
  Sim sim;
  NetlinkClient client;
  uint32_t pid;
  EthtoolFabric()
      : sim(tmp.write("ethtool.json", kTopology)),
        client(sim.devlink_socket()),
        pid(static_cast<uint32_t>(getpid())) {}
  // One request, one datagram back.
  Bytes ask(const Bytes& request) {
    client.send(request);
    return client.require();
  }
};

// The reply header as ethnl_fill_reply_header nests it.
Msg& header(Msg& m, uint16_t type, uint32_t ifindex, const std::string& name) {
  return m.nest(type | kNested)
      .u32(et::kHeaderDevIndex, ifindex)
      .str(et::kHeaderDevName, name)
      .end();
}

Msg& array(Msg& m, uint16_t type, const std::vector<uint64_t>& v) {
  return m.attr(type, v.data(), v.size() * 8);
}

// FEC_GET_REPLY to a request with ETHTOOL_FLAG_STATS (so verbose bitsets): the configured mode
// is the active one (bit and name), auto 0.
Bytes fec_reply(uint32_t seq, uint32_t pid, uint32_t ifindex, const std::string& dev, uint32_t bit,
                const char* bit_name, const std::vector<uint64_t>& corrected,
                const std::vector<uint64_t>& uncorrectable, const std::vector<uint64_t>& bits) {
  Msg m(kFamily, 0, seq, pid);
  m.genl(et::kMsgFecGetReply, 1);
  header(m, et::kFecHeader, ifindex, dev);
  m.nest(et::kFecModes | kNested)
      .attr(et::kBitsetNomask, nullptr, 0)
      .u32(et::kBitsetSize, 93)
      .nest(et::kBitsetBits | kNested)
      .nest(et::kBitsetBitsBit | kNested)
      .u32(et::kBitsetBitIndex, bit)
      .str(et::kBitsetBitName, bit_name)
      .end()
      .end()
      .end();
  m.u8(et::kFecAuto, 0).u32(et::kFecActive, bit).nest(et::kFecStats | kNested);
  array(m, et::kFecStatCorrected, corrected);
  array(m, et::kFecStatUncorrectable, uncorrectable);
  array(m, et::kFecStatCorrectedBits, bits);
  return m.end().done();
}

// STATS_GET_REPLY for eth-phy: the group's id and string set, SymbolErrorDuringCarrier at
// attribute type 0 when the driver reports it.
Bytes phy_reply(uint32_t seq, uint32_t pid, uint32_t ifindex, const std::string& dev,
                std::optional<uint64_t> symbol_errors) {
  Msg m(kFamily, 0, seq, pid);
  m.genl(et::kMsgStatsGetReply, 1);
  header(m, et::kStatsHeader, ifindex, dev);
  m.nest(et::kStatsGrp | kNested).u32(et::kStatsGrpId, 0).u32(et::kStatsGrpSsId, 17);
  if (symbol_errors) m.nest(et::kStatsGrpStat | kNested).u64(0, *symbol_errors).end();
  return m.end().done();
}

et::Message decode_one(const Bytes& d) {
  std::vector<et::Message> out;
  et::decode(d, kFamily, out);
  EXPECT_EQ(out.size(), 1u);
  return out.empty() ? et::Message{} : out[0];
}

TEST(Ethtool, TheFamilyResolvesByNameToTheStandInsIdAndMonitorGroup) {
  EthtoolFabric f;
  const Bytes answer = f.ask(et::family_request(1, 0));
  const Bytes want = Msg(GENL_ID_CTRL, 0, 1, f.pid)
                         .genl(CTRL_CMD_NEWFAMILY, 2)
                         .str(CTRL_ATTR_FAMILY_NAME, "ethtool")
                         .u16(CTRL_ATTR_FAMILY_ID, kFamily)
                         .u32(CTRL_ATTR_VERSION, 1)
                         .u32(CTRL_ATTR_HDRSIZE, 0)
                         .u32(CTRL_ATTR_MAXATTR, 0)
                         .nest(CTRL_ATTR_MCAST_GROUPS)
                         .nest(1)
                         .u32(CTRL_ATTR_MCAST_GRP_ID, 3)
                         .str(CTRL_ATTR_MCAST_GRP_NAME, "monitor")
                         .end()
                         .end()
                         .done();
  EXPECT_EQ(answer, want);
  std::vector<et::Message> m;
  et::decode(answer, 0, m);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].kind, et::MessageKind::kFamily);
  EXPECT_EQ(m[0].family.id, kFamily);
  EXPECT_EQ(m[0].family.monitor_group, 3u);
}

TEST(Ethtool, RsReportsTotalsOnlyAndFollowsTheCounterCommands) {
  EthtoolFabric f;
  ctl_ok(f.sim, {"counter", "add", "mlx5_1/1", "ethtool/fec_uncorrectable_blocks", "3"});
  ctl_ok(f.sim, {"counter", "set", "mlx5_1/1", "ethtool/fec_corrected_bits", "555"});
  EXPECT_EQ(f.ask(et::fec_request(kFamily, 4u, 10, 0)),
            fec_reply(10, f.pid, 4, "ens1f0", 50, "RS", {1000}, {3}, {555}));

  ctl_ok(f.sim, {"counter", "add", "mlx5_1/1", "ethtool/fec_corrected_blocks", "1"});
  const et::Message m = decode_one(f.ask(et::fec_request(kFamily, 4u, 11, 0)));
  ASSERT_EQ(m.kind, et::MessageKind::kFec) << m.problem;
  et::PhyStats want;
  want.fec_corrected_blocks = 1001;
  want.fec_uncorrectable_blocks = 3;
  want.fec_corrected_bits = 555;
  want.fec_mode = "rs";
  EXPECT_EQ(m.stats, want);
  EXPECT_EQ(m.seq, 11u);
  EXPECT_EQ(f.sim.stats()["devlink"]["ethtool_fec_replies"], 2);
}

TEST(Ethtool, BaseRReportsEachLaneWithTheirSumFirst) {
  EthtoolFabric f;
  ctl_ok(f.sim, {"counter", "set", "mlx5_1/2", "ethtool/fec_corrected_blocks", "10"});
  ctl_ok(f.sim, {"counter", "set", "mlx5_1/2", "ethtool/fec_uncorrectable_blocks", "1"});
  ctl_ok(f.sim, {"counter", "set", "mlx5_1/2", "ethtool/fec_corrected_bits", "77"});
  // A 4x port: four lanes, the count spread evenly; corrected bits are a total only.
  EXPECT_EQ(f.ask(et::fec_request(kFamily, 5u, 1, 0)),
            fec_reply(1, f.pid, 5, "ens1f1", 51, "BASER", {10, 3, 3, 2, 2}, {1, 1, 0, 0, 0}, {77}));
}

TEST(Ethtool, FecOffReportsEmptyArraysButSymbolErrorsStillCount) {
  EthtoolFabric f;
  const std::string added =
      ctl_ok(f.sim, {"counter", "add", "mlx5_2/1", "ethtool/fec_corrected_blocks", "5"});
  EXPECT_NE(added.find("(not reported while FEC is off)"), std::string::npos) << added;
  ctl_ok(f.sim, {"counter", "add", "mlx5_2/1", "ethtool/symbol_errors", "9"});
  const Bytes fec = f.ask(et::fec_request(kFamily, 6u, 2, 0));
  EXPECT_EQ(fec, fec_reply(2, f.pid, 6, "ens2f0", 49, "None", {}, {}, {}));
  const et::Message m = decode_one(fec);
  ASSERT_EQ(m.kind, et::MessageKind::kFec) << m.problem;
  et::PhyStats want;
  want.fec_mode = "off";
  EXPECT_EQ(m.stats, want);

  const Bytes phy = f.ask(et::phy_stats_request(kFamily, 6u, 3, 0));
  EXPECT_EQ(phy, phy_reply(3, f.pid, 6, "ens2f0", 9));
  EXPECT_EQ(decode_one(phy).stats.symbol_errors, std::optional<uint64_t>(9));
}

TEST(Ethtool, TheEthPhyGroupByIfindexOrNameCarriesSymbolErrorDuringCarrier) {
  EthtoolFabric f;
  ctl_ok(f.sim, {"counter", "add", "mlx5_1/1", "ethtool/symbol_errors", "42"});
  const Bytes by_index = f.ask(et::phy_stats_request(kFamily, 4u, 5, 0));
  EXPECT_EQ(by_index, phy_reply(5, f.pid, 4, "ens1f0", 42));
  const et::Message m = decode_one(by_index);
  ASSERT_EQ(m.kind, et::MessageKind::kPhyStats) << m.problem;
  EXPECT_EQ(m.stats.symbol_errors, std::optional<uint64_t>(42));

  // By name, the groups as a compact bitset with a mask (the other accepted form).
  const uint32_t one = 1;
  const Bytes request = Msg(kFamily, NLM_F_REQUEST, 6)
                            .genl(et::kMsgStatsGet, 1)
                            .nest(et::kStatsHeader | kNested)
                            .str(et::kHeaderDevName, "ens1f0")
                            .end()
                            .nest(et::kStatsGroups | kNested)
                            .u32(et::kBitsetSize, 4)
                            .u32(et::kBitsetValue, one)
                            .u32(et::kBitsetMask, one)
                            .end()
                            .done();
  EXPECT_EQ(f.ask(request), phy_reply(6, f.pid, 4, "ens1f0", 42));
}

TEST(Ethtool, ANetdevWithoutFecOperationsFailsFecGetAndHasAnEmptyGroup) {
  EthtoolFabric f;
  const Bytes request = et::fec_request(kFamily, 2u, 7, 0);
  EXPECT_EQ(f.ask(request), error_message(f.pid, request, EOPNOTSUPP));
  const et::Message e = decode_one(f.ask(request));
  EXPECT_EQ(e.kind, et::MessageKind::kError);
  EXPECT_EQ(e.error, EOPNOTSUPP);
  EXPECT_EQ(f.ask(et::phy_stats_request(kFamily, 2u, 8, 0)),
            phy_reply(8, f.pid, 2, "eth0", std::nullopt));
}

TEST(Ethtool, RequestsTheKernelRefusesGetItsErrors) {
  EthtoolFabric f;
  const auto header_flags = [](uint32_t flags, uint16_t header_type) {
    return Msg(kFamily, NLM_F_REQUEST, 20)
        .genl(header_type == et::kFecHeader ? et::kMsgFecGet : et::kMsgStatsGet, 1)
        .nest(header_type | kNested)
        .u32(et::kHeaderDevIndex, 4)
        .u32(et::kHeaderFlags, flags)
        .end();
  };
  // STATS_GET of one group by its name, the verbose list bitset that ethtool(8) sends.
  const auto group_by_name = [&](const char* name) {
    return header_flags(0, et::kStatsHeader)
        .nest(et::kStatsGroups | kNested)
        .attr(et::kBitsetNomask, nullptr, 0)
        .nest(et::kBitsetBits | kNested)
        .nest(et::kBitsetBitsBit | kNested)
        .str(et::kBitsetBitName, name)
        .end()
        .end()
        .end()
        .done();
  };
  struct Case {
    const char* what;
    Bytes request;
    int error;
  };
  const std::vector<Case> cases = {
      {"an unknown ifindex", et::fec_request(kFamily, 99u, 20, 0), ENODEV},
      {"a header without NLA_F_NESTED",
       Msg(kFamily, NLM_F_REQUEST, 20)
           .genl(et::kMsgFecGet, 1)
           .nest(et::kFecHeader)
           .u32(et::kHeaderDevIndex, 4)
           .end()
           .done(),
       EINVAL},
      {"no header", Msg(kFamily, NLM_F_REQUEST, 20).genl(et::kMsgFecGet, 1).done(), EINVAL},
      {"an ifindex and another netdev's name",
       Msg(kFamily, NLM_F_REQUEST, 20)
           .genl(et::kMsgFecGet, 1)
           .nest(et::kFecHeader | kNested)
           .u32(et::kHeaderDevIndex, 4)
           .str(et::kHeaderDevName, "ens1f1")
           .end()
           .done(),
       ENODEV},
      {"an unknown name",
       Msg(kFamily, NLM_F_REQUEST, 20)
           .genl(et::kMsgFecGet, 1)
           .nest(et::kFecHeader | kNested)
           .str(et::kHeaderDevName, "nope0")
           .end()
           .done(),
       ENODEV},
      {"ETHTOOL_FLAG_STATS on STATS_GET", header_flags(4, et::kStatsHeader).done(), EINVAL},
      {"a flag outside FEC_GET's mask", header_flags(8, et::kFecHeader).done(), EINVAL},
      {"no stats groups", header_flags(0, et::kStatsHeader).done(), EINVAL},
      {"a group bit past the kernel's",
       header_flags(0, et::kStatsHeader)
           .nest(et::kStatsGroups | kNested)
           .attr(et::kBitsetNomask, nullptr, 0)
           .u32(et::kBitsetSize, 8)
           .u32(et::kBitsetValue, 0x11)
           .end()
           .done(),
       EINVAL},
      {"an unknown group name", group_by_name("eth-nope"), EOPNOTSUPP},
      {"ETHTOOL_MSG_LINKSTATE_GET, not modelled", Msg(kFamily, NLM_F_REQUEST, 20).genl(6, 1).done(),
       EOPNOTSUPP},
  };
  for (const Case& c : cases)
    EXPECT_EQ(f.ask(c.request), error_message(f.pid, c.request, c.error)) << c.what;

  // The verbose form that ethtool(8) sends, by name: answered.
  const Bytes verbose = group_by_name("eth-phy");
  EXPECT_EQ(f.ask(verbose), phy_reply(20, f.pid, 4, "ens1f0", 0));
}

TEST(Ethtool, WithNlmFAckTheReplyComesThenTheAcknowledgement) {
  EthtoolFabric f;
  Bytes request = et::phy_stats_request(kFamily, 4u, 30, 0);
  const uint16_t flags = NLM_F_REQUEST | NLM_F_ACK;
  std::memcpy(request.data() + 6, &flags, 2);
  f.client.send(request);
  EXPECT_EQ(f.client.require(), phy_reply(30, f.pid, 4, "ens1f0", 0));
  EXPECT_EQ(f.client.require(), error_message(f.pid, request, 0));
}

TEST(Ethtool, AnUnpluggedDevicesNetdevIsGone) {
  EthtoolFabric f;
  ctl_ok(f.sim, {"unplug", "mlx5_1"});
  // The same socket carries devlink's config group: the function's instance goes first
  // (PORT_DEL, DEVLINK_CMD_DEL), before the question is asked.
  while (f.client.receive(200)) {
  }
  const Bytes request = et::fec_request(kFamily, 4u, 40, 0);
  EXPECT_EQ(f.ask(request), error_message(f.pid, request, ENODEV));
}

TEST(Ethtool, TheCountersAreShownAndRefusedWhereTheyDoNotExist) {
  EthtoolFabric f;
  const json ports = f.sim.show()["devices"][1]["ports"];
  EXPECT_EQ(ports[0]["fec"], "rs");
  EXPECT_EQ(ports[0]["ethtool"], json({{"fec_corrected_blocks", 1000},
                                       {"fec_uncorrectable_blocks", 0},
                                       {"fec_corrected_bits", 0},
                                       {"symbol_errors", 0}}));
  EXPECT_EQ(ports[1]["fec"], "baser");
  EXPECT_FALSE(f.sim.show()["devices"][0]["ports"][0].contains("ethtool"));
  EXPECT_NE(ctl_ok(f.sim, {"show", "mlx5_1"})
                .find("\n    fec rs\n    ethtool/  fec_corrected_blocks 1000  (3 more at 0)\n"),
            std::string::npos);

  const std::vector<RefusedCommand> cases = {
      {{"counter", "add", "mlx5_0/1", "ethtool/symbol_errors", "1"},
       "rdma-sim: mlx5_0/1 is an InfiniBand port: it has no netdev, so no ethtool/symbol_errors "
       "(ethtool counters are for RoCE ports)\n"},
      {{"counter", "add", "rxe0/1", "ethtool/symbol_errors", "1"},
       "rdma-sim: rxe0/1's netdev reports no PHY statistics (fec unsupported)\n"},
      {{"counter", "set", "mlx5_1/1", "ethtool/nope", "1"},
       "rdma-sim: mlx5_1/1 has no counter \"ethtool/nope\" (ethtool/fec_corrected_blocks, "
       "ethtool/fec_uncorrectable_blocks, ethtool/fec_corrected_bits, ethtool/symbol_errors)\n"},
      {{"counter", "fail", "mlx5_1/1", "ethtool/symbol_errors", "missing"},
       "rdma-sim: counter fail is for sysfs counters: ethtool/symbol_errors is read over ethtool "
       "netlink and takes only add and set\n"},
  };
  expect_refused(f.sim, cases);
}

TEST(Ethtool, TopologyEthtoolFieldsAreChecked) {
  struct Bad {
    const char* devices;  // the "devices" array
    const char* error;    // after "rdma-sim: FILE: "
  };
  const Bad cases[] = {
      {R"([{"name":"a","ports":[{"fec":"rs"}]}])",
       "devices[0].ports[0].fec: an InfiniBand port has no netdev, so no FEC mode\n"},
      {R"([{"name":"a","link_layer":"ethernet","ports":[{"netdev":"e0","fec":"fc"}]}])",
       "devices[0].ports[0].fec: \"fc\" is not one of: rs, baser, llrs, off, unsupported\n"},
      {R"([{"name":"a","ports":[{"counter_values":{"ethtool/symbol_errors":1}}]}])",
       "devices[0].ports[0].counter_values.ethtool/symbol_errors: an InfiniBand port has no "
       "netdev, so no ethtool counters\n"},
      {R"([{"name":"a","link_layer":"ethernet",
            "ports":[{"netdev":"e0","counter_values":{"ethtool/nope":1}}]}])",
       "devices[0].ports[0].counter_values.ethtool/nope: no such counter "
       "(ethtool/fec_corrected_blocks, ethtool/fec_uncorrectable_blocks, "
       "ethtool/fec_corrected_bits, ethtool/symbol_errors)\n"},
      {R"([{"name":"a","provider":"rxe","link_layer":"ethernet",
            "ports":[{"netdev":"e0","counter_values":{"ethtool/symbol_errors":1}}]}])",
       "devices[0].ports[0].counter_values.ethtool/symbol_errors: the port's netdev reports no "
       "PHY statistics (fec \"unsupported\")\n"},
  };
  for (const Bad& c : cases) {
    const auto [file, r] = start_with_topology(std::string(R"({"devices":)") + c.devices + "}");
    EXPECT_EQ(r.exit_code(), 78) << c.devices;
    EXPECT_EQ(r.err, "rdma-sim: " + file + ": " + c.error) << c.devices;
  }
}

}  // namespace
}  // namespace ethtool_test
}  // namespace simtest
