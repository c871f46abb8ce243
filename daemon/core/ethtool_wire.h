// The ethtool generic-netlink messages that give a RoCE port's PHY error counters (docs/health.md,
// "Link quality"): the netdev's FEC statistics (ETHTOOL_MSG_FEC_GET with ETHTOOL_FLAG_STATS) and
// its IEEE 802.3 PHY group (ETHTOOL_MSG_STATS_GET, eth-phy: SymbolErrorDuringCarrier). On an
// Ethernet link these are where the PHY's errors are; the IB PMA's counters/symbol_error of a
// RoCE port come from an InfiniBand counter group and are 16 bits wide. Pure, so every byte the
// kernel (or anything else) hands over is checked here, unit-tested and fuzzed without a socket.
//
// Layouts are Linux 6.1's: net/ethtool/fec.c (fec_fill_reply, fec_put_stats, fec_stats_recalc),
// net/ethtool/stats.c (stats_fill_reply, stat_put), net/ethtool/netlink.c
// (ethnl_fill_reply_header); the numbers are in rdma_eventd/internal/ethtool_uapi.h, shared with
// rdma-sim's stand-in. The family's id is given at run time: resolve it by name first.
//
// Framing is core/netlink_wire.h's: a message whose length does not fit ends the datagram, an
// attribute whose length does not fit makes its message malformed. Unknown message types,
// commands and attributes are skipped (newer kernels add FEC histograms, a stats source); of an
// attribute that comes twice the first counts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "rdma_eventd/internal/ethtool_uapi.h"

namespace rdma_eventd::daemon::ethtool {

using namespace internal::ethtool_uapi;

// A netdev's PHY statistics as one FEC_GET reply and one STATS_GET reply give them. A counter
// the device does not report is nullopt, never 0: the FEC arrays are empty when the driver has
// no FEC statistics or FEC is off, and SymbolErrorDuringCarrier is left out when the driver does
// not fill it. Where a driver counts per lane the kernel sums the lanes: the totals are what is
// kept.
struct PhyStats {
  std::optional<uint64_t> fec_corrected_blocks;      // ETHTOOL_A_FEC_STAT_CORRECTED[0]
  std::optional<uint64_t> fec_uncorrectable_blocks;  // ETHTOOL_A_FEC_STAT_UNCORR[0]
  std::optional<uint64_t> fec_corrected_bits;        // ETHTOOL_A_FEC_STAT_CORR_BITS[0]
  std::optional<uint64_t> symbol_errors;             // eth-phy SymbolErrorDuringCarrier
  // The active FEC encoding: "rs", "baser", "llrs", "off", or "" when the reply names none (or
  // one this code does not know).
  std::string fec_mode;
  friend bool operator==(const PhyStats&, const PhyStats&) = default;
};

struct Family {
  uint16_t id = 0;
  uint32_t monitor_group = 0;  // 0: the family has no "monitor" group
};

enum class MessageKind : uint8_t {
  kFamily,     // the controller's answer about the family (CTRL_CMD_NEWFAMILY)
  kFec,        // a FEC_GET reply: stats' FEC fields and fec_mode
  kPhyStats,   // a STATS_GET reply: stats.symbol_errors (nullopt: no eth-phy group or statistic)
  kDone,       // NLMSG_DONE: the end of a dump
  kError,      // NLMSG_ERROR: error is the errno (positive; EOPNOTSUPP for a netdev without FEC
               // operations, ENODEV for none with that ifindex), 0 for an acknowledgement
  kOverrun,    // NLMSG_OVERRUN
  kIgnored,    // a message of another type or command
  kMalformed,  // bytes that are not what their type says: `problem` tells what
};

struct Message {
  MessageKind kind = MessageKind::kIgnored;
  uint16_t type = 0;  // nlmsg_type
  uint16_t flags = 0;
  uint32_t seq = 0;
  uint32_t pid = 0;
  uint8_t command = 0;
  Family family;
  uint32_t ifindex = 0;  // the reply header's netdev
  std::string ifname;
  PhyStats stats;
  int error = 0;
  std::string problem;
};

// Decodes every message of `datagram`, appending to `out`. `ethtool_family` is the family id the
// controller gave (0 before it is known: then only controller and control messages decode).
void decode(std::span<const uint8_t> datagram, uint16_t ethtool_family, std::vector<Message>& out);

// The requests, each one message with NLM_F_REQUEST (no NLM_F_ACK: a reply or an error answers
// it), `seq` and the sender's netlink port id `port_id` in its header.
// CTRL_CMD_GETFAMILY for "ethtool".
std::vector<uint8_t> family_request(uint32_t seq, uint32_t port_id);
// A netdev by its ifindex, or by its name (what a RoCE GID's sysfs ndevs file gives).
using Netdev = std::variant<uint32_t, std::string>;
// ETHTOOL_MSG_FEC_GET of `netdev` with ETHTOOL_FLAG_STATS.
std::vector<uint8_t> fec_request(uint16_t ethtool_family, const Netdev& netdev, uint32_t seq,
                                 uint32_t port_id);
// ETHTOOL_MSG_STATS_GET of `netdev` for the eth-phy group (a compact list bitset).
std::vector<uint8_t> phy_stats_request(uint16_t ethtool_family, const Netdev& netdev, uint32_t seq,
                                       uint32_t port_id);

// "rs", "baser", "llrs", "off" for ETHTOOL_A_FEC_ACTIVE's link-mode bit; "" for another.
std::string fec_mode_name(uint32_t link_mode_bit);

}  // namespace rdma_eventd::daemon::ethtool
