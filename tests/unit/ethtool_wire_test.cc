// The ethtool requests and reply decoder (core/ethtool_wire): the requests against the bytes
// Linux 6.1's policies take (net/ethtool/fec.c ethnl_fec_get_policy, net/ethtool/stats.c
// ethnl_stats_get_policy, net/ethtool/bitset.c), the replies laid out as fec_fill_reply and
// stats_fill_reply build them, and bytes that are not: bad lengths, short values, repeated and
// unknown attributes, other families.
#include "core/ethtool_wire.h"

#include <gtest/gtest.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "netlink_msg.h"

namespace rdma_eventd::daemon::ethtool {
namespace {

using simtest::Msg;
using Bytes = std::vector<uint8_t>;

constexpr uint16_t kFamily = 21;  // what a 6.18 host gave; any id will do
constexpr uint16_t kNested = NLA_F_NESTED;

std::vector<Message> decoded(const Bytes& bytes, uint16_t family = kFamily) {
  std::vector<Message> out;
  decode(bytes, family, out);
  return out;
}

Message one(const Bytes& bytes, uint16_t family = kFamily) {
  const auto out = decoded(bytes, family);
  EXPECT_EQ(out.size(), 1u);
  return out.empty() ? Message{} : out[0];
}

// A u64 array attribute, as nla_put_64bit writes fec_put_stats' arrays.
Msg& array(Msg& m, uint16_t type, const std::vector<uint64_t>& v) {
  return m.attr(type, v.data(), v.size() * sizeof(uint64_t));
}

// ethnl_fill_reply_header: the netdev's ifindex and name, in a nest with NLA_F_NESTED.
Msg& reply_header(Msg& m, uint16_t type, uint32_t ifindex, const std::string& name) {
  return m.nest(type | kNested).u32(kHeaderDevIndex, ifindex).str(kHeaderDevName, name).end();
}

// fec_fill_reply of a FEC_GET with ETHTOOL_FLAG_STATS: the configured modes as a verbose list
// bitset (the request asked for no compact bitsets), auto, the active mode when there is one,
// then the three statistics.
Msg fec_reply(uint32_t active, const std::vector<uint64_t>& corrected,
              const std::vector<uint64_t>& uncorrectable, const std::vector<uint64_t>& bits,
              uint32_t seq = 3) {
  Msg m(kFamily, 0, seq, 1234);
  m.genl(kMsgFecGetReply, 1);
  reply_header(m, kFecHeader, 4, "ens1f0");
  m.nest(kFecModes | kNested).attr(kBitsetNomask, nullptr, 0).u32(kBitsetSize, kLinkModeBits61);
  m.nest(kBitsetBits | kNested);
  const char* name = active == kLinkModeFecNone    ? "None"
                     : active == kLinkModeFecRs    ? "RS"
                     : active == kLinkModeFecBaser ? "BASER"
                                                   : "LLRS";
  if (active)
    m.nest(kBitsetBitsBit | kNested).u32(kBitsetBitIndex, active).str(kBitsetBitName, name).end();
  m.end().end();
  m.u8(kFecAuto, 0);
  if (active) m.u32(kFecActive, active);
  m.nest(kFecStats | kNested);
  array(m, kFecStatCorrected, corrected);
  array(m, kFecStatUncorrectable, uncorrectable);
  array(m, kFecStatCorrectedBits, bits);
  m.end();
  return m;
}

// stats_fill_reply for the eth-phy group: its id, its string set, and the symbol errors when the
// driver filled them (stat_put leaves out what it did not).
Msg phy_reply(std::optional<uint64_t> symbol_errors, uint32_t seq = 4) {
  Msg m(kFamily, 0, seq, 1234);
  m.genl(kMsgStatsGetReply, 1);
  reply_header(m, kStatsHeader, 4, "ens1f0");
  m.nest(kStatsGrp | kNested).u32(kStatsGrpId, kStatsEthPhy).u32(kStatsGrpSsId, kSsStatsEthPhy);
  if (symbol_errors)
    m.nest(kStatsGrpStat | kNested).u64(kStatEthPhySymbolErrors, *symbol_errors).end();
  m.end();
  return m;
}

TEST(EthtoolWire, TheFamilyRequestIsTheControllersGetFamilyForEthtool) {
  const Bytes want = {0x20, 0,    0,    0,   0x10, 0,             // length 32, GENL_ID_CTRL
                      0x01, 0,                                    // NLM_F_REQUEST
                      0x01, 0,    0,    0,   0xd2, 0x04, 0,   0,  // seq 1, port id 1234
                      0x03, 0x01, 0,    0,                        // CTRL_CMD_GETFAMILY, version 1
                      0x0c, 0,    0x02, 0,                        // CTRL_ATTR_FAMILY_NAME, 12 bytes
                      'e',  't',  'h',  't', 'o',  'o',  'l', 0};
  EXPECT_EQ(family_request(1, 1234), want);
}

TEST(EthtoolWire, TheFecRequestNamesTheNetdevAndAsksForStatistics) {
  const Bytes by_index = {
      0x28, 0,    0,    0,    0x15, 0,    0x01, 0,  // length 40, the family, NLM_F_REQUEST
      0x07, 0,    0,    0,    0xd2, 0x04, 0,    0,  // seq 7, port id 1234
      0x1d, 0x01, 0,    0,                          // ETHTOOL_MSG_FEC_GET (29), version 1
      0x14, 0,    0x01, 0x80,                       // ETHTOOL_A_FEC_HEADER | NLA_F_NESTED, 20 bytes
      0x08, 0,    0x01, 0,    4,    0,    0,    0,  //   ETHTOOL_A_HEADER_DEV_INDEX 4
      0x08, 0,    0x03, 0,    4,    0,    0,    0};  //   ETHTOOL_A_HEADER_FLAGS ETHTOOL_FLAG_STATS
  EXPECT_EQ(fec_request(kFamily, 4u, 7, 1234), by_index);

  // A RoCE GID's ndevs file gives the name: ETHTOOL_A_HEADER_DEV_NAME, NUL-terminated.
  const Bytes by_name = {
      0x2c, 0,    0,    0,    0x15, 0,    0x01, 0,  // length 44, the family, NLM_F_REQUEST
      0x07, 0,    0,    0,    0xd2, 0x04, 0,    0,  // seq 7, port id 1234
      0x1d, 0x01, 0,    0,                          // ETHTOOL_MSG_FEC_GET (29), version 1
      0x18, 0,    0x01, 0x80,                       // ETHTOOL_A_FEC_HEADER | NLA_F_NESTED, 24 bytes
      0x09, 0,    0x02, 0,    'e',  't',  'h',  '1', 0, 0, 0, 0,  //   DEV_NAME "eth1", padded
      0x08, 0,    0x03, 0,    4,    0,    0,    0};  //   ETHTOOL_A_HEADER_FLAGS ETHTOOL_FLAG_STATS
  EXPECT_EQ(fec_request(kFamily, std::string("eth1"), 7, 1234), by_name);
}

TEST(EthtoolWire, ThePhyStatsRequestAsksForTheEthPhyGroupAsACompactList) {
  const Bytes want = {
      0x38, 0,    0,    0,    0x15, 0,    0x01, 0,   // length 56, the family, NLM_F_REQUEST
      0x08, 0,    0,    0,    0xd2, 0x04, 0,    0,   // seq 8, port id 1234
      0x20, 0x01, 0,    0,                           // ETHTOOL_MSG_STATS_GET (32), version 1
      0x0c, 0,    0x02, 0x80,                        // ETHTOOL_A_STATS_HEADER | NLA_F_NESTED
      0x08, 0,    0x01, 0,    4,    0,    0,    0,   //   ETHTOOL_A_HEADER_DEV_INDEX 4 (no flags)
      0x18, 0,    0x03, 0x80,                        // ETHTOOL_A_STATS_GROUPS | NLA_F_NESTED
      0x04, 0,    0x01, 0,                           //   ETHTOOL_A_BITSET_NOMASK
      0x08, 0,    0x02, 0,    4,    0,    0,    0,   //   ETHTOOL_A_BITSET_SIZE 4
      0x08, 0,    0x04, 0,    1,    0,    0,    0};  //   ETHTOOL_A_BITSET_VALUE: bit 0, eth-phy
  EXPECT_EQ(phy_stats_request(kFamily, 4u, 8, 1234), want);
}

TEST(EthtoolWire, TheControllersAnswerGivesTheFamilyIdAndTheMonitorGroup) {
  Msg m(GENL_ID_CTRL, 0, 1, 1234);
  m.genl(CTRL_CMD_NEWFAMILY, 2)
      .str(CTRL_ATTR_FAMILY_NAME, "ethtool")
      .u16(CTRL_ATTR_FAMILY_ID, kFamily)
      .u32(CTRL_ATTR_VERSION, 1)
      .u32(CTRL_ATTR_HDRSIZE, 0)
      .u32(CTRL_ATTR_MAXATTR, 0)
      .nest(CTRL_ATTR_MCAST_GROUPS | kNested)
      .nest(1 | kNested)
      .u32(CTRL_ATTR_MCAST_GRP_ID, 5)
      .str(CTRL_ATTR_MCAST_GRP_NAME, "monitor")
      .end()
      .end();
  // Before the id is known, the controller's answer still decodes.
  const Message f = one(m.done(), 0);
  EXPECT_EQ(f.kind, MessageKind::kFamily);
  EXPECT_EQ(f.family.id, kFamily);
  EXPECT_EQ(f.family.monitor_group, 5u);
  EXPECT_EQ(f.seq, 1u);

  Msg other(GENL_ID_CTRL);
  other.genl(CTRL_CMD_NEWFAMILY, 2)
      .str(CTRL_ATTR_FAMILY_NAME, "devlink")
      .u16(CTRL_ATTR_FAMILY_ID, 20);
  const Message o = one(other.done(), 0);
  EXPECT_EQ(o.kind, MessageKind::kMalformed);
  EXPECT_EQ(o.problem, "the family is \"devlink\", not ethtool");
}

TEST(EthtoolWire, AFecReplyGivesEachStatisticsTotalAndTheActiveMode) {
  struct Case {
    const char* what;
    uint32_t active;
    std::vector<uint64_t> corrected, uncorrectable, bits;
    PhyStats want;
  };
  const Case cases[] = {
      {"RS with totals only",
       kLinkModeFecRs,
       {1234},
       {5},
       {98765},
       {.fec_corrected_blocks = 1234,
        .fec_uncorrectable_blocks = 5,
        .fec_corrected_bits = 98765,
        .fec_mode = "rs"}},
      // fec_stats_recalc: element 0 is the sum of the lanes, then each lane.
      {"BASE-R on four lanes: the kernel's sum",
       kLinkModeFecBaser,
       {10, 1, 2, 3, 4},
       {3, 0, 0, 3, 0},
       {77},
       {.fec_corrected_blocks = 10,
        .fec_uncorrectable_blocks = 3,
        .fec_corrected_bits = 77,
        .fec_mode = "baser"}},
  };
  for (const Case& c : cases) {
    const Message m = one(fec_reply(c.active, c.corrected, c.uncorrectable, c.bits).done());
    ASSERT_EQ(m.kind, MessageKind::kFec) << c.what << ": " << m.problem;
    EXPECT_EQ(m.seq, 3u) << c.what;
    EXPECT_EQ(m.ifindex, 4u) << c.what;
    EXPECT_EQ(m.ifname, "ens1f0") << c.what;
    EXPECT_EQ(m.stats, c.want) << c.what;
  }
}

TEST(EthtoolWire, EmptyArraysAreNotReportedRatherThanZero) {
  // FEC off on mlx5e (or a driver without get_fec_stats): the nest with three empty arrays.
  const Message off = one(fec_reply(kLinkModeFecNone, {}, {}, {}).done());
  ASSERT_EQ(off.kind, MessageKind::kFec) << off.problem;
  PhyStats want;
  want.fec_mode = "off";
  EXPECT_EQ(off.stats, want);

  // No active mode (ETHTOOL_A_FEC_ACTIVE left out) and no statistics nest at all.
  Msg m(kFamily, 0, 3);
  m.genl(kMsgFecGetReply, 1);
  reply_header(m, kFecHeader, 9, "eth9").u8(kFecAuto, 1);
  const Message bare = one(m.done());
  ASSERT_EQ(bare.kind, MessageKind::kFec) << bare.problem;
  EXPECT_EQ(bare.stats, PhyStats{});
  EXPECT_EQ(bare.ifindex, 9u);
}

TEST(EthtoolWire, TheEthPhyGroupGivesSymbolErrorDuringCarrierAtAttributeTypeZero) {
  const Message m = one(phy_reply(42).done());
  ASSERT_EQ(m.kind, MessageKind::kPhyStats) << m.problem;
  PhyStats want;
  want.symbol_errors = 42;
  EXPECT_EQ(m.stats, want);
  EXPECT_EQ(m.ifindex, 4u);
  EXPECT_EQ(m.seq, 4u);

  // The group with no statistic: the driver has no get_eth_phy_stats (veth, virtio_net).
  const Message none = one(phy_reply(std::nullopt).done());
  ASSERT_EQ(none.kind, MessageKind::kPhyStats) << none.problem;
  EXPECT_EQ(none.stats, PhyStats{});
}

TEST(EthtoolWire, OtherGroupsTheStatsSourceAndPaddingAreSkipped) {
  Msg m(kFamily, 0, 4);
  m.genl(kMsgStatsGetReply, 1);
  reply_header(m, kStatsHeader, 4, "ens1f0");
  m.u32(5, 0);  // ETHTOOL_A_STATS_SRC of 6.3 and later
  // eth-mac first, whose index 0 is not SymbolErrorDuringCarrier.
  m.nest(kStatsGrp | kNested).u32(kStatsGrpId, 1).u32(kStatsGrpSsId, 18);
  m.nest(kStatsGrpStat | kNested).u64(0, 999).end().end();
  m.nest(kStatsGrp | kNested).u32(kStatsGrpId, kStatsEthPhy).u32(kStatsGrpSsId, kSsStatsEthPhy);
  m.attr(kStatsGrpPad, nullptr, 0);
  m.nest(kStatsGrpStat | kNested).u64(kStatEthPhySymbolErrors, 7).end();
  m.nest(kStatsGrpStat | kNested).u64(kStatEthPhySymbolErrors, 8).end();  // repeated: first wins
  m.end();
  // A second eth-phy group: the first counts.
  m.nest(kStatsGrp | kNested).u32(kStatsGrpId, kStatsEthPhy);
  m.nest(kStatsGrpStat | kNested).u64(kStatEthPhySymbolErrors, 9).end().end();
  const Message d = one(m.done());
  ASSERT_EQ(d.kind, MessageKind::kPhyStats) << d.problem;
  ASSERT_TRUE(d.stats.symbol_errors);
  EXPECT_EQ(*d.stats.symbol_errors, 7u);
}

TEST(EthtoolWire, RepeatedAndUnknownFecAttributesAreSkipped) {
  Msg m(kFamily, 0, 3);
  m.genl(kMsgFecGetReply, 1);
  reply_header(m, kFecHeader, 4, "ens1f0");
  m.u32(kFecActive, kLinkModeFecRs).u32(kFecActive, kLinkModeFecNone).u32(99, 1);
  m.nest(kFecStats | kNested);
  array(m, kFecStatCorrected, {5});
  array(m, kFecStatCorrected, {9});
  m.nest(5 | kNested).u32(1, 0).u32(2, 0).end();  // ETHTOOL_A_FEC_STAT_HIST of newer kernels
  array(m, kFecStatCorrectedBits, {1, 1});
  m.end();
  const Message d = one(m.done());
  ASSERT_EQ(d.kind, MessageKind::kFec) << d.problem;
  PhyStats want;
  want.fec_corrected_blocks = 5;
  want.fec_corrected_bits = 1;
  want.fec_mode = "rs";
  EXPECT_EQ(d.stats, want);
}

TEST(EthtoolWire, AnErrorReplyGivesTheErrno) {
  const Bytes request = fec_request(kFamily, 4u, 7, 1234);
  const auto eopnotsupp = decoded(simtest::error_message(1234, request, EOPNOTSUPP));
  ASSERT_EQ(eopnotsupp.size(), 1u);
  EXPECT_EQ(eopnotsupp[0].kind, MessageKind::kError);
  EXPECT_EQ(eopnotsupp[0].error, EOPNOTSUPP);
  EXPECT_EQ(eopnotsupp[0].seq, 7u);
  EXPECT_EQ(one(simtest::error_message(1234, request, ENODEV)).error, ENODEV);
  const Message ack = one(simtest::error_message(1234, request, 0));
  EXPECT_EQ(ack.kind, MessageKind::kError);
  EXPECT_EQ(ack.error, 0);
}

TEST(EthtoolWire, AReplyAndItsAcknowledgementInOneDatagramAreTwoMessages) {
  Bytes d = phy_reply(1).done();
  const Bytes ack = simtest::error_message(1234, phy_stats_request(kFamily, 4u, 4, 1234), 0);
  d.insert(d.end(), ack.begin(), ack.end());
  const auto m = decoded(d);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].kind, MessageKind::kPhyStats);
  EXPECT_EQ(m[1].kind, MessageKind::kError);
  EXPECT_EQ(m[1].error, 0);
}

TEST(EthtoolWire, OtherFamiliesAndCommandsAreIgnored) {
  const Bytes reply = fec_reply(kLinkModeFecRs, {1}, {1}, {1}).done();
  EXPECT_EQ(one(reply, 0).kind, MessageKind::kIgnored);   // the id is not known yet
  EXPECT_EQ(one(reply, 22).kind, MessageKind::kIgnored);  // another family's id
  Msg ntf(kFamily);
  ntf.genl(31, 1);  // ETHTOOL_MSG_FEC_NTF: after a FEC_SET, no statistics
  EXPECT_EQ(one(ntf.done()).kind, MessageKind::kIgnored);
}

TEST(EthtoolWire, BadLengthsAndShortValuesMakeTheMessageMalformed) {
  struct Case {
    const char* what;
    Bytes bytes;
    std::string problem;
  };
  std::vector<Case> cases;
  {
    Msg m(kFamily);
    m.genl(kMsgFecGetReply, 1).u8(kFecAuto, 0);
    cases.push_back({"no header", m.done(), "no header"});
  }
  {
    Msg m(kFamily);
    m.genl(kMsgFecGetReply, 1).nest(kFecHeader | kNested).str(kHeaderDevName, "x").end();
    cases.push_back({"no ifindex", m.done(), "no ifindex"});
  }
  {
    Msg m(kFamily);
    m.genl(kMsgFecGetReply, 1);
    reply_header(m, kFecHeader, 4, "ens1f0").nest(kFecStats | kNested);
    m.attr(kFecStatCorrected, "123456789012", 12).end();
    cases.push_back({"a stat of 12 bytes", m.done(),
                     "corrected blocks has 12 bytes, not a whole number of u64"});
  }
  {
    // A nested attribute whose length runs past its nest.
    Msg m(kFamily);
    m.genl(kMsgFecGetReply, 1);
    reply_header(m, kFecHeader, 4, "ens1f0").nest(kFecStats | kNested);
    const uint16_t hdr[2] = {0x100, kFecStatUncorrectable};
    m.attr(0xffff, nullptr, 0);  // placeholder, overwritten below
    Bytes b = m.end().done();
    std::memcpy(b.data() + b.size() - 4, hdr, 4);
    cases.push_back(
        {"a nested length past the nest", b, "attribute 3 has length 256, 4 bytes left"});
  }
  {
    Msg m(kFamily);
    m.genl(kMsgStatsGetReply, 1);
    reply_header(m, kStatsHeader, 4, "ens1f0");
    m.nest(kStatsGrp | kNested).u32(kStatsGrpId, kStatsEthPhy);
    m.nest(kStatsGrpStat | kNested).u32(kStatEthPhySymbolErrors, 7).end().end();
    cases.push_back(
        {"a u32 symbol error count", m.done(), "SymbolErrorDuringCarrier has 4 bytes, not 8"});
  }
  {
    Msg m(kFamily);
    m.genl(kMsgFecGetReply, 1);
    reply_header(m, kFecHeader, 4, "ens1f0").attr(kFecActive, "\1\0", 2);
    cases.push_back({"a short active mode", m.done(), "active FEC has 2 bytes, needs 4"});
  }
  {
    Msg m(kFamily);
    m.genl(kMsgFecGetReply, 1);
    reply_header(m, kFecHeader, 4, "ens1f0");
    Bytes b = m.done();
    b.insert(b.end(), {2, 0, 4, 0});  // an attribute length under its own header
    const auto len = static_cast<uint32_t>(b.size());
    std::memcpy(b.data(), &len, 4);
    cases.push_back({"an attribute of length 2", b, "attribute 4 has length 2, 4 bytes left"});
  }
  {
    Bytes b = Msg(kFamily).done();
    b.insert(b.end(), {kMsgFecGetReply, 1});
    const uint32_t len = 18;
    std::memcpy(b.data(), &len, 4);
    cases.push_back({"no genetlink header", b, "no generic netlink header"});
  }
  for (const Case& c : cases) {
    const auto m = decoded(c.bytes);
    ASSERT_EQ(m.size(), 1u) << c.what;
    EXPECT_EQ(m[0].kind, MessageKind::kMalformed) << c.what;
    EXPECT_EQ(m[0].problem, c.problem) << c.what;
  }
}

TEST(EthtoolWire, EveryTruncationOfAReplyIsMalformedOrShortOfWhatWasCut) {
  // Each message length from the bare header to the whole reply, the datagram exactly that long
  // (so that a read past it is a read past the buffer): never a crash, and a message cut inside
  // an attribute is malformed.
  for (const Bytes& whole :
       {fec_reply(kLinkModeFecBaser, {10, 1, 2, 3, 4}, {0}, {7}).done(), phy_reply(42).done()}) {
    for (size_t len = 16; len <= whole.size(); ++len) {
      Bytes cut(whole.begin(), whole.begin() + static_cast<ptrdiff_t>(len));
      const auto l = static_cast<uint32_t>(len);
      std::memcpy(cut.data(), &l, 4);
      const auto m = decoded(cut);
      ASSERT_EQ(m.size(), 1u) << len;
      if (m[0].kind == MessageKind::kMalformed) {
        EXPECT_FALSE(m[0].problem.empty()) << len;
      } else {
        EXPECT_TRUE(m[0].kind == MessageKind::kFec || m[0].kind == MessageKind::kPhyStats) << len;
        // Only whole attributes were left: the totals are those of the whole reply, or absent.
        EXPECT_EQ(m[0].stats.fec_corrected_blocks.value_or(10), 10u) << len;
        EXPECT_EQ(m[0].stats.symbol_errors.value_or(42), 42u) << len;
      }
    }
    // A message length past the datagram ends it.
    Bytes longer = whole;
    const auto l = static_cast<uint32_t>(whole.size() + 4);
    std::memcpy(longer.data(), &l, 4);
    const auto m = decoded(longer);
    ASSERT_EQ(m.size(), 1u);
    EXPECT_EQ(m[0].kind, MessageKind::kMalformed);
    EXPECT_EQ(m[0].problem, "message length " + std::to_string(whole.size() + 4) + ", " +
                                std::to_string(whole.size()) + " bytes left");
  }
}

}  // namespace
}  // namespace rdma_eventd::daemon::ethtool
