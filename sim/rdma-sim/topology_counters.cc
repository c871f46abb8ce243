#include "topology_counters.h"

namespace rdmasim {

using nlohmann::json;

CounterSets default_counter_sets(devx::Provider provider) {
  switch (provider) {
    case devx::Provider::kMlx5:
      return {PmaCounters::kExtended, HwCounters::kMlx5};
    case devx::Provider::kMlx4:
    case devx::Provider::kOcrdma:
      return {PmaCounters::kBasic, HwCounters::kNone};
    case devx::Provider::kRxe:
      return {PmaCounters::kNone, HwCounters::kRxe};
    default:
      return {};
  }
}

CounterSets parse_counter_sets(JsonFields& device, devx::Provider provider) {
  CounterSets sets = default_counter_sets(provider);
  const std::string pma = device.str("counters", pma_counters_name(sets.pma), 16);
  if (!parse_pma_counters(pma, &sets.pma))
    device.fail("counters", "\"" + pma + "\" is not one of: extended, basic, none");
  const std::string hw = device.str("hw_counters", hw_counters_name(sets.hw), 16);
  if (!parse_hw_counters(hw, &sets.hw))
    device.fail("hw_counters", "\"" + hw + "\" is not one of: mlx5, rxe, none");
  return sets;
}

std::vector<Counter> parse_port_counters(JsonFields& port_fields, CounterSets sets,
                                         const std::string& port) {
  std::vector<Counter> counters = make_port_counters(sets);
  const json* values = port_fields.get("counter_values");
  if (!values) return counters;
  JsonFields v(*values, port_fields.path("counter_values"), port_fields.file());
  for (const auto& item : values->items()) {
    if (is_ethtool_counter(item.key())) continue;  // parse_port_phy's
    std::string error;
    Counter* c = find_counter(counters, item.key(), port, &error);
    if (!c) v.fail(item.key(), error);
    c->value = v.num(item.key(), 0, 0, c->max());
  }
  return counters;
}

EthtoolPhy parse_port_phy(JsonFields& port_fields, bool ethernet, devx::Provider provider) {
  EthtoolPhy phy;
  if (!ethernet) {
    if (port_fields.get("fec"))
      port_fields.fail("fec", "an InfiniBand port has no netdev, so no FEC mode");
  } else {
    const std::string mode = port_fields.str("fec", fec_mode_name(default_fec_mode(provider)), 16);
    if (!parse_fec_mode(mode, &phy.fec))
      port_fields.fail("fec", "\"" + mode + "\" is not one of: " + kFecModeNames);
  }
  const json* values = port_fields.get("counter_values");
  if (!values) return phy;
  JsonFields v(*values, port_fields.path("counter_values"), port_fields.file());
  for (const auto& item : values->items()) {
    if (!is_ethtool_counter(item.key())) continue;
    if (!ethernet) v.fail(item.key(), "an InfiniBand port has no netdev, so no ethtool counters");
    if (!phy.supported())
      v.fail(item.key(), "the port's netdev reports no PHY statistics (fec \"unsupported\")");
    uint64_t* c = find_ethtool_counter(phy, item.key());
    if (!c) v.fail(item.key(), "no such counter (" + std::string(kEthtoolCounterNames) + ")");
    *c = v.num(item.key(), 0, 0, UINT64_MAX);
  }
  return phy;
}

}  // namespace rdmasim
