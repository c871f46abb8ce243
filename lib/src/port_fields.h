// The port block's fields, one table: the wire name of each, how to write it, compare it, read
// it back and show it to a person. The flat port block, "changes", the "ports" array, the status
// reply's ports and the readable texts all go through it, so they can never disagree on names,
// types or order. Private to lib/src.
#pragma once

#include <array>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

#include "rdma_eventd/record.h"
#include "schema/json_writer.h"

namespace rdma_eventd {

struct PortField {
  std::string_view name;
  void (*write)(JsonWriter& w, const PortInfo& p);
  bool (*equal)(const PortInfo& a, const PortInfo& b);
  // false when the JSON value has the wrong type or an unknown name. rate_gbps is derived from
  // width and speed: its reader only checks the type.
  bool (*read)(const nlohmann::json& v, PortInfo& p);
  std::string (*text)(const PortInfo& p);  // for people: "ACTIVE", "link_up", "4x", "200"
};

inline constexpr size_t kPortFieldCount = 11;

// In wire order: link_layer, state, phys_state, lid, sm_lid, sm_sl, lmc, active_mtu, width,
// speed, rate_gbps.
const std::array<PortField, kPortFieldCount>& port_fields();

// nullptr for a name that is not a port-block field.
const PortField* find_port_field(std::string_view name);

bool read_u32(const nlohmann::json& v, uint32_t& out);

}  // namespace rdma_eventd
