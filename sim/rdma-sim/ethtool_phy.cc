#include "ethtool_phy.h"

#include <iterator>

namespace rdmasim {
namespace {

constexpr const char* kModeNames[] = {"unsupported", "off", "rs", "baser", "llrs"};  // by FecMode

}  // namespace

bool is_ethtool_counter(const std::string& name) {
  return name.rfind(kEthtoolPrefix, 0) == 0;
}

uint64_t* find_ethtool_counter(EthtoolPhy& phy, const std::string& name) {
  if (!is_ethtool_counter(name)) return nullptr;
  const std::string n = name.substr(std::string(kEthtoolPrefix).size());
  if (n == "fec_corrected_blocks") return &phy.fec_corrected_blocks;
  if (n == "fec_uncorrectable_blocks") return &phy.fec_uncorrectable_blocks;
  if (n == "fec_corrected_bits") return &phy.fec_corrected_bits;
  if (n == "symbol_errors") return &phy.symbol_errors;
  return nullptr;
}

const char* fec_mode_name(FecMode mode) {
  return kModeNames[static_cast<size_t>(mode)];
}

bool parse_fec_mode(const std::string& name, FecMode* mode) {
  for (size_t i = 0; i < std::size(kModeNames); ++i)
    if (name == kModeNames[i]) {
      *mode = static_cast<FecMode>(i);
      return true;
    }
  return false;
}

FecMode default_fec_mode(devx::Provider provider) {
  return provider == devx::Provider::kMlx5 ? FecMode::kRs : FecMode::kUnsupported;
}

unsigned fec_lanes(uint8_t active_width) {
  switch (active_width) {
    case 1:  // 1x
      return 1;
    case 16:  // 2x
      return 2;
    default:  // 4x and wider: PMLP width is at most 4 lanes on the ports mlx5e reports
      return 4;
  }
}

}  // namespace rdmasim
