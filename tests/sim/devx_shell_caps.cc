// QUERY_HCA_CAP through mlx5dv_devx_general_cmd, read the way a program reads firmware output:
// with mlx5dv.h's DEVX_SET/DEVX_GET over its own PRM layouts. These layouts are written here from
// rdma-core v44 (providers/mlx5/mlx5_ifc.h: query_hca_cap_in/out, cmd_hca_cap's
// port_module_event, port_type, num_ports, temp_warn_event and general_notification_event;
// tests/mlx5_prm_structs.py CmdHcaCap for event_cap and log_max_uctx) and from the kernel's
// mlx5_ifc.h (device_event_cap), independently of the simulator's encoder.
#include <endian.h>

#include <cerrno>
#include <cstring>

#include "devx_shell.h"

using u8 = uint8_t;

struct mlx5_ifc_query_hca_cap_in_bits {
  u8 opcode[0x10];
  u8 uid[0x10];
  u8 reserved_at_20[0x10];
  u8 op_mod[0x10];
  u8 other_function[0x1];
  u8 reserved_at_41[0xf];
  u8 function_id[0x10];
  u8 reserved_at_60[0x20];
};

struct mlx5_ifc_query_hca_cap_out_bits {
  u8 status[0x8];
  u8 reserved_at_8[0x18];
  u8 syndrome[0x20];
  u8 reserved_at_40[0x40];
  u8 capability[0x8000];
};

struct mlx5_ifc_cmd_hca_cap_bits {
  u8 reserved_at_0[0x90];
  u8 event_cap[0x1];
  u8 reserved_at_91[0x11f];
  u8 port_module_event[0x1];
  u8 reserved_at_1b1[0x5];
  u8 port_type[0x2];
  u8 num_ports[0x8];
  u8 reserved_at_1c0[0x10];
  u8 temp_warn_event[0x1];
  u8 dcbx[0x1];
  u8 general_notification_event[0x1];
  u8 reserved_at_1d3[0x290];
  u8 log_max_uctx[0x5];
  u8 reserved_at_468[0x398];
};

struct mlx5_ifc_device_event_cap_bits {
  u8 user_affiliated_events[4][0x40];
  u8 user_unaffiliated_events[4][0x40];
};

namespace devx_shell {

using nlohmann::json;

namespace {

constexpr uint16_t kQueryHcaCap = 0x100;

// Event numbers whose bit is set, as the kernel's is_valid_events() reads the mask: big-endian
// 64-bit words, event n at bit n % 64 of word n / 64.
json events_of(const void* mask) {
  json events = json::array();
  for (int w = 0; w < 4; ++w) {
    uint64_t word;
    std::memcpy(&word, static_cast<const uint8_t*>(mask) + 8 * w, 8);
    word = be64toh(word);
    for (int b = 0; b < 64; ++b)
      if (word >> b & 1) events.push_back(64 * w + b);
  }
  return events;
}

}  // namespace

json cmd_caps(ibv_context* ctx, uint16_t cap_type, size_t outlen) {
  uint32_t in[DEVX_ST_SZ_DW(query_hca_cap_in)] = {};
  std::vector<uint8_t> out(outlen, 0xee);  // not zero: the call must write every byte
  DEVX_SET(query_hca_cap_in, in, opcode, kQueryHcaCap);
  DEVX_SET(query_hca_cap_in, in, op_mod, cap_type << 1 | 1);  // current capabilities
  errno = 0;
  const int ret = mlx5dv_devx_general_cmd(ctx, in, sizeof in, out.data(), out.size());
  json j = result(ret, ret != 0);
  if (ret != 0 && ret != EREMOTEIO) return j;
  const void* o = out.data();
  j["status"] = DEVX_GET(query_hca_cap_out, o, status);
  j["syndrome"] = DEVX_GET(query_hca_cap_out, o, syndrome);
  if (ret != 0) return j;
  const void* cap = DEVX_ADDR_OF(query_hca_cap_out, o, capability);
  j["page_hex"] = hex(cap, 64);
  // Every byte written (none of the filler left), and nothing set past the fields read here (the
  // general page's end at byte 0x8d, the event page's at 64).
  size_t unwritten = 0, set_after = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    unwritten += out[i] == 0xee;
    set_after += i >= 16 + (cap_type == 0 ? 0x8d : 64) && out[i] != 0;
  }
  j["unwritten"] = unwritten;
  j["set_after_fields"] = set_after;
  if (cap_type == 0) {
    j["event_cap"] = DEVX_GET(cmd_hca_cap, cap, event_cap);
    j["port_module_event"] = DEVX_GET(cmd_hca_cap, cap, port_module_event);
    j["port_type"] = DEVX_GET(cmd_hca_cap, cap, port_type);
    j["num_ports"] = DEVX_GET(cmd_hca_cap, cap, num_ports);
    j["temp_warn_event"] = DEVX_GET(cmd_hca_cap, cap, temp_warn_event);
    j["general_notification_event"] = DEVX_GET(cmd_hca_cap, cap, general_notification_event);
    j["log_max_uctx"] = DEVX_GET(cmd_hca_cap, cap, log_max_uctx);
  } else if (cap_type == 0x14) {
    j["user_affiliated_events"] =
        events_of(DEVX_ADDR_OF(device_event_cap, cap, user_affiliated_events));
    j["user_unaffiliated_events"] =
        events_of(DEVX_ADDR_OF(device_event_cap, cap, user_unaffiliated_events));
  }
  return j;
}

json cmd_general(ibv_context* ctx, uint16_t opcode, size_t inlen, size_t outlen) {
  std::vector<uint8_t> in(inlen, 0), out(outlen, 0);
  if (inlen >= 2) {
    in[0] = static_cast<uint8_t>(opcode >> 8);
    in[1] = static_cast<uint8_t>(opcode);
  }
  errno = 0;
  const int ret = mlx5dv_devx_general_cmd(ctx, in.data(), inlen, out.data(), outlen);
  json j = result(ret, ret != 0);
  j["ret_is_errno"] = ret == 0 || ret == errno;
  if (outlen >= 8) j["status"] = out[0];
  return j;
}

}  // namespace devx_shell
