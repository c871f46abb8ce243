// The PHY statistics of a RoCE port's netdev, which the ethtool netlink family reports
// (docs/simulator.md, "RoCE PHY statistics"): the FEC mode and counters (ETHTOOL_MSG_FEC_GET)
// and SymbolErrorDuringCarrier (ETHTOOL_MSG_STATS_GET, eth-phy). Plain data; the generic
// netlink stand-in (ethtool_standin.h) answers from it, the counter commands change it.
#pragma once

#include <cstdint>
#include <string>

#include "common/devx.h"

namespace rdmasim {

// What the netdev's driver has. kUnsupported: no get_fecparam (a Soft-RoCE netdev such as veth
// or virtio_net, a VF representor), so FEC_GET fails with EOPNOTSUPP and the eth-phy group is
// empty. The others are mlx5e's active modes (PPLM fec_mode_active): kOff is no FEC, whose
// statistics mlx5e leaves unset.
enum class FecMode : uint8_t { kUnsupported, kOff, kRs, kBaser, kLlrs };

struct EthtoolPhy {
  FecMode fec = FecMode::kUnsupported;
  // 64-bit counters, totals over the lanes.
  uint64_t fec_corrected_blocks = 0;
  uint64_t fec_uncorrectable_blocks = 0;
  uint64_t fec_corrected_bits = 0;
  uint64_t symbol_errors = 0;  // SymbolErrorDuringCarrier

  bool supported() const { return fec != FecMode::kUnsupported; }
};

// What the counter commands and topology files call them: "ethtool/" and a counter name.
inline constexpr const char* kEthtoolPrefix = "ethtool/";
inline constexpr const char* kEthtoolCounterNames =
    "ethtool/fec_corrected_blocks, ethtool/fec_uncorrectable_blocks, ethtool/fec_corrected_bits, "
    "ethtool/symbol_errors";
bool is_ethtool_counter(const std::string& name);  // starts with "ethtool/"
// The counter a full name ("ethtool/symbol_errors") names; nullptr for none.
uint64_t* find_ethtool_counter(EthtoolPhy& phy, const std::string& name);

// "unsupported", "off", "rs", "baser", "llrs".
const char* fec_mode_name(FecMode mode);
bool parse_fec_mode(const std::string& name, FecMode* mode);
inline constexpr const char* kFecModeNames = "rs, baser, llrs, off, unsupported";
// An Ethernet port's mode when the topology does not say: RS for mlx5 (what a 25G and faster
// link runs), none for the other providers, whose netdevs are not modelled.
FecMode default_fec_mode(devx::Provider provider);

// The lanes mlx5e reports BASE-R (FireCode) counters for: the port's width in lanes (PMLP
// width), at most 4. `active_width` is ibv_port_attr's code (1x 1, 2x 16, 4x 2, 8x 4, 12x 8).
unsigned fec_lanes(uint8_t active_width);

}  // namespace rdmasim
