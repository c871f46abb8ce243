// The generic-netlink bytes of the ethtool family as Linux 6.1 takes and builds them
// (docs/simulator.md, "RoCE PHY statistics"): a request's attributes checked as the family's
// strict policies check them (ethnl_fec_get_policy, ethnl_stats_get_policy, the header
// policies of net/ethtool/netlink.c, the bitsets of net/ethtool/bitset.c), the controller's
// NEWFAMILY answer (ctrl_fill_info), and the FEC_GET and STATS_GET replies (fec_fill_reply,
// stats_fill_reply). Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ethtool_phy.h"

namespace rdmasim::ethtool_wire {

// The ids the stand-in's kernel gave: a real one assigns them at boot, so programs resolve them
// by name (devlink has 0x14 and group 2 here).
inline constexpr uint16_t kFamilyId = 0x15;
inline constexpr uint32_t kMonitorGroup = 3;

// A FEC_GET or STATS_GET request as the kernel's policies let it through.
struct Request {
  uint8_t command = 0;
  std::optional<uint32_t> ifindex;  // ETHTOOL_A_HEADER_DEV_INDEX
  std::optional<std::string> name;  // ETHTOOL_A_HEADER_DEV_NAME
  uint32_t flags = 0;               // ETHTOOL_A_HEADER_FLAGS
  uint32_t groups = 0;              // STATS_GET: the ETHTOOL_STATS_* groups asked for, by bit
};

// Checks and reads the attributes of a FEC_GET or STATS_GET `message` (whole, with its headers)
// in the kernel's order: the policy (EINVAL: a nest without NLA_F_NESTED, an unknown attribute,
// a wrong length, a flag outside the command's mask, trailing bytes), then the header (EINVAL
// without one, or with neither an ifindex nor a name). Returns 0 or the errno. The groups'
// bitset is read by parse_groups, after the device is found, as ethnl_default_parse does.
int parse_request(std::span<const uint8_t> message, Request* r);
// STATS_GET's ETHTOOL_A_STATS_GROUPS: 0, or EINVAL (a malformed bitset, no group asked for),
// EOPNOTSUPP (a bit index or name the kernel does not have).
int parse_groups(std::span<const uint8_t> message, Request* r);

// A netdev as the replies describe it.
struct Netdev {
  uint32_t ifindex = 0;
  std::string name;
  EthtoolPhy phy;
  unsigned lanes = 4;  // the BASE-R lanes (fec_lanes)
};

// Appends one message to `out`.
void put_family(std::vector<uint8_t>& out, uint32_t pid, uint32_t seq, uint16_t flags);
// FEC_GET_REPLY for a netdev whose driver has FEC operations (n.phy.supported()); the request's
// flags choose compact bitsets and the statistics.
void put_fec_reply(std::vector<uint8_t>& out, const Netdev& n, const Request& r, uint32_t pid,
                   uint32_t seq, uint16_t flags);
// STATS_GET_REPLY: one group nest per group asked for, with SymbolErrorDuringCarrier in
// eth-phy's when the driver reports it.
void put_stats_reply(std::vector<uint8_t>& out, const Netdev& n, const Request& r, uint32_t pid,
                     uint32_t seq, uint16_t flags);

}  // namespace rdmasim::ethtool_wire
