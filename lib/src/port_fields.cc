#include "port_fields.h"

#include <climits>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>

#include "schema/record_text.h"

namespace rdma_eventd {
namespace {

using nlohmann::json;

std::string width_name(uint32_t lanes) {
  return lanes == 0 ? std::string("unknown") : std::to_string(lanes) + "x";
}

// An enumerated field: written as its wire name, shown with `Text` (the wire name, or the
// capitalised form a sentence uses).
template <typename Enum, Enum PortInfo::*M, std::string_view (*Name)(Enum),
          std::optional<Enum> (*FromName)(std::string_view), std::string_view (*Text)(Enum)>
PortField enum_field(std::string_view name) {
  return PortField{
      name,
      [](JsonWriter& w, const PortInfo& p) { w.value(Name(p.*M)); },
      [](const PortInfo& a, const PortInfo& b) { return a.*M == b.*M; },
      [](const json& v, PortInfo& p) {
        if (!v.is_string()) return false;
        const auto e = FromName(v.get_ref<const std::string&>());
        if (e) p.*M = *e;
        return e.has_value();
      },
      [](const PortInfo& p) { return std::string(Text(p.*M)); },
  };
}

template <uint32_t PortInfo::*M>
PortField u32_field(std::string_view name) {
  return PortField{
      name,
      [](JsonWriter& w, const PortInfo& p) { w.value(p.*M); },
      [](const PortInfo& a, const PortInfo& b) { return a.*M == b.*M; },
      [](const json& v, PortInfo& p) { return read_u32(v, p.*M); },
      [](const PortInfo& p) { return std::to_string(p.*M); },
  };
}

PortField width_field() {
  return PortField{
      "width",
      [](JsonWriter& w, const PortInfo& p) { w.value(width_name(p.lanes)); },
      [](const PortInfo& a, const PortInfo& b) { return a.lanes == b.lanes; },
      [](const json& v, PortInfo& p) {
        if (!v.is_string()) return false;
        const auto lanes = lanes_from_name(v.get_ref<const std::string&>());
        if (lanes) p.lanes = *lanes;
        return lanes.has_value();
      },
      [](const PortInfo& p) { return width_name(p.lanes); },
  };
}

// Derived from width and speed: written for readers, checked on read, never stored.
PortField rate_field() {
  return PortField{
      "rate_gbps",
      [](JsonWriter& w, const PortInfo& p) { w.value(p.rate_gbps()); },
      [](const PortInfo& a, const PortInfo& b) { return a.rate_gbps() == b.rate_gbps(); },
      [](const json& v, PortInfo&) { return v.is_number(); },
      [](const PortInfo& p) { return gbps_text(p.rate_gbps()); },
  };
}

}  // namespace

bool read_u32(const json& v, uint32_t& out) {
  if (!v.is_number_unsigned()) return false;
  const auto n = v.get<uint64_t>();
  if (n > UINT32_MAX) return false;
  out = static_cast<uint32_t>(n);
  return true;
}

const std::array<PortField, kPortFieldCount>& port_fields() {
  static const std::array<PortField, kPortFieldCount> fields = {
      enum_field<LinkLayer, &PortInfo::link_layer, link_layer_name, link_layer_from_name,
                 link_layer_name>("link_layer"),
      enum_field<PortState, &PortInfo::state, port_state_name, port_state_from_name,
                 port_state_display>("state"),
      enum_field<PhysState, &PortInfo::phys_state, phys_state_name, phys_state_from_name,
                 phys_state_name>("phys_state"),
      u32_field<&PortInfo::lid>("lid"),
      u32_field<&PortInfo::sm_lid>("sm_lid"),
      u32_field<&PortInfo::sm_sl>("sm_sl"),
      u32_field<&PortInfo::lmc>("lmc"),
      u32_field<&PortInfo::active_mtu>("active_mtu"),
      width_field(),
      enum_field<LinkSpeed, &PortInfo::speed, link_speed_name, link_speed_from_name,
                 link_speed_name>("speed"),
      rate_field(),
  };
  return fields;
}

const PortField* find_port_field(std::string_view name) {
  for (const auto& f : port_fields()) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

}  // namespace rdma_eventd
