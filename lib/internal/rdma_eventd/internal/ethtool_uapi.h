// The numbers of the ethtool generic-netlink family that the RoCE PHY statistics use: what the
// daemon's decoder (daemon/core/ethtool_wire.h) reads and writes and what rdma-sim's stand-in
// (sim/rdma-sim/ethtool_wire.h) answers. Written out here because the installed headers may not
// have every one, and because from 2025 the enums live in the generated
// include/uapi/linux/ethtool_netlink_generated.h instead of ethtool_netlink.h. The values are
// those of Linux 6.1's include/uapi/linux/ethtool_netlink.h (uapi: they never change) unless a
// comment names another file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace rdma_eventd::internal::ethtool_uapi {

inline constexpr std::string_view kFamilyName = "ethtool";        // ETHTOOL_GENL_NAME
inline constexpr uint8_t kFamilyVersion = 1;                      // ETHTOOL_GENL_VERSION
inline constexpr std::string_view kMonitorGroupName = "monitor";  // ETHTOOL_MCGRP_MONITOR_NAME

// The user-to-kernel and the kernel-to-user commands are two enums: 30 is FEC_SET one way and
// FEC_GET_REPLY the other.
inline constexpr uint8_t kMsgFecGet = 29;         // ETHTOOL_MSG_FEC_GET
inline constexpr uint8_t kMsgStatsGet = 32;       // ETHTOOL_MSG_STATS_GET
inline constexpr uint8_t kMsgFecGetReply = 30;    // ETHTOOL_MSG_FEC_GET_REPLY
inline constexpr uint8_t kMsgStatsGetReply = 33;  // ETHTOOL_MSG_STATS_GET_REPLY

// The request and reply header, a nest (ETHTOOL_A_HEADER_*).
inline constexpr uint16_t kHeaderDevIndex = 1;  // u32
inline constexpr uint16_t kHeaderDevName = 2;   // NUL-terminated, at most ALTIFNAMSIZ - 1
inline constexpr uint16_t kHeaderFlags = 3;     // u32
inline constexpr size_t kMaxDevName = 127;      // ALTIFNAMSIZ - 1 (include/uapi/linux/if.h)
// ETHTOOL_FLAG_*: FEC_GET takes all three (ethnl_header_policy_stats, net/ethtool/netlink.c),
// STATS_GET only the first two (ethnl_header_policy): EINVAL for a flag outside the mask.
inline constexpr uint32_t kFlagCompactBitsets = 1;
inline constexpr uint32_t kFlagOmitReply = 2;
inline constexpr uint32_t kFlagStats = 4;

// ETHTOOL_A_FEC_*
inline constexpr uint16_t kFecHeader = 1;  // nest
inline constexpr uint16_t kFecModes = 2;   // bitset of link modes
inline constexpr uint16_t kFecAuto = 3;    // u8
inline constexpr uint16_t kFecActive = 4;  // u32, a link-mode bit; absent when none is active
inline constexpr uint16_t kFecStats = 5;   // nest, present when the request had kFlagStats
// ETHTOOL_A_FEC_STAT_*: each an array of u64, [] or [total] or [sum of lanes, lane 0, ...]
// (fec_stats_recalc in net/ethtool/fec.c). Mainline adds ETHTOOL_A_FEC_STAT_HIST = 5.
inline constexpr uint16_t kFecStatPad = 1;
inline constexpr uint16_t kFecStatCorrected = 2;
inline constexpr uint16_t kFecStatUncorrectable = 3;
inline constexpr uint16_t kFecStatCorrectedBits = 4;
inline constexpr size_t kMaxLanes = 8;  // ETHTOOL_MAX_LANES (include/linux/ethtool.h)

// The link-mode bits of the FEC encodings (enum ethtool_link_mode_bit_indices,
// include/uapi/linux/ethtool.h), ETHTOOL_A_FEC_ACTIVE's values, and their names
// (link_mode_names in net/ethtool/common.c).
inline constexpr uint32_t kLinkModeFecNone = 49;   // "None": FEC off
inline constexpr uint32_t kLinkModeFecRs = 50;     // "RS"
inline constexpr uint32_t kLinkModeFecBaser = 51;  // "BASER" (FireCode)
inline constexpr uint32_t kLinkModeFecLlrs = 74;   // "LLRS"
// Each encoding: its bit, the name the daemon and rdma-sim give it ("off" for FEC off), and
// link_mode_names' (what a verbose bitset carries).
struct FecEncoding {
  uint32_t link_mode_bit;
  std::string_view name;
  std::string_view link_mode_name;
};
inline constexpr FecEncoding kFecEncodings[] = {{kLinkModeFecNone, "off", "None"},
                                                {kLinkModeFecRs, "rs", "RS"},
                                                {kLinkModeFecBaser, "baser", "BASER"},
                                                {kLinkModeFecLlrs, "llrs", "LLRS"}};
// __ETHTOOL_LINK_MODE_MASK_NBITS of 6.1: the size of the FEC_GET reply's mode bitset (grows
// as kernels add link modes).
inline constexpr uint32_t kLinkModeBits61 = 93;

// ETHTOOL_A_STATS_*
inline constexpr uint16_t kStatsHeader = 2;  // nest
inline constexpr uint16_t kStatsGroups = 3;  // bitset over the ETH_SS_STATS_STD strings
inline constexpr uint16_t kStatsGrp = 4;     // nest, one per group asked for
// ETHTOOL_A_STATS_GRP_*
inline constexpr uint16_t kStatsGrpPad = 1;
inline constexpr uint16_t kStatsGrpId = 2;    // u32, an ETHTOOL_STATS_* group
inline constexpr uint16_t kStatsGrpSsId = 3;  // u32, the group's string set
inline constexpr uint16_t kStatsGrpStat = 4;  // nest of one u64 whose type is the stat's index
// The standard groups (enum ethtool_stats_grp, with the names stats_std_names of
// net/ethtool/stats.c: "eth-phy", "eth-mac", "eth-ctrl", "rmon").
inline constexpr uint32_t kStatsEthPhy = 0;      // ETHTOOL_STATS_ETH_PHY
inline constexpr uint32_t kStatsGroupCount = 4;  // __ETHTOOL_STATS_CNT of 6.1
inline constexpr uint32_t kSsStatsEthPhy = 17;   // ETH_SS_STATS_ETH_PHY (uapi/linux/ethtool.h)
// The eth-phy group's one statistic: SymbolErrorDuringCarrier, IEEE 802.3 30.3.2.1.5, at
// attribute type 0 (ETHTOOL_A_STATS_ETH_PHY_5_SYM_ERR).
inline constexpr uint16_t kStatEthPhySymbolErrors = 0;

// ETHTOOL_A_BITSET_* (a bitset nest) and ETHTOOL_A_BITSET_BIT_*.
inline constexpr uint16_t kBitsetNomask = 1;    // flag: a list, not a value and a mask
inline constexpr uint16_t kBitsetSize = 2;      // u32, in bits
inline constexpr uint16_t kBitsetBits = 3;      // nest of kBitsetBitsBit (verbose form)
inline constexpr uint16_t kBitsetValue = 4;     // binary, u32 words (compact form)
inline constexpr uint16_t kBitsetMask = 5;      // binary, u32 words (compact form)
inline constexpr uint16_t kBitsetBitsBit = 1;   // ETHTOOL_A_BITSET_BITS_BIT, nest
inline constexpr uint16_t kBitsetBitIndex = 1;  // u32
inline constexpr uint16_t kBitsetBitName = 2;   // string
inline constexpr uint16_t kBitsetBitValue = 3;  // flag

}  // namespace rdma_eventd::internal::ethtool_uapi
