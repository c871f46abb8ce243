// verbs_shell: the port, device, GID and P_Key queries, each answered with its exact return
// value and errno.
#include <arpa/inet.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "verbs_shell.h"

extern "C" int ibv_query_gid_type(ibv_context* ctx, uint8_t port, unsigned int index, int* type);
#undef ibv_query_port
extern "C" int ibv_query_port(ibv_context* ctx, uint8_t port, struct _compat_ibv_port_attr* attr);

namespace verbs_shell {

using nlohmann::json;

json port_attr_json(const ibv_port_attr& a) {
  return {{"state", a.state},
          {"max_mtu", a.max_mtu},
          {"active_mtu", a.active_mtu},
          {"gid_tbl_len", a.gid_tbl_len},
          {"port_cap_flags", a.port_cap_flags},
          {"max_msg_sz", a.max_msg_sz},
          {"bad_pkey_cntr", a.bad_pkey_cntr},
          {"qkey_viol_cntr", a.qkey_viol_cntr},
          {"pkey_tbl_len", a.pkey_tbl_len},
          {"lid", a.lid},
          {"sm_lid", a.sm_lid},
          {"lmc", a.lmc},
          {"max_vl_num", a.max_vl_num},
          {"sm_sl", a.sm_sl},
          {"subnet_timeout", a.subnet_timeout},
          {"init_type_reply", a.init_type_reply},
          {"active_width", a.active_width},
          {"active_speed", a.active_speed},
          {"phys_state", a.phys_state},
          {"link_layer", a.link_layer},
          {"flags", a.flags},
          {"port_cap_flags2", a.port_cap_flags2}};
}

json gid_entry_json(const ibv_gid_entry& e) {
  char text[INET6_ADDRSTRLEN] = "";
  inet_ntop(AF_INET6, e.gid.raw, text, sizeof text);
  return {{"gid", hex(e.gid.raw, 16)}, {"gid_text", text},       {"gid_index", e.gid_index},
          {"port_num", e.port_num},    {"gid_type", e.gid_type}, {"ndev_ifindex", e.ndev_ifindex}};
}

std::optional<json> run_query(Ctx& c, const std::vector<std::string>& w) {
  const std::string& cmd = w.at(0);
  auto arg = [&](size_t i) -> const std::string& { return w.at(i); };
  auto num = [&](size_t i) { return std::stoull(arg(i), nullptr, 0); };
  if (cmd == "query_port") {
    ibv_port_attr a;
    memset(&a, 0xaa, sizeof a);
    errno = 0;
    const int ret = ___ibv_query_port(c.ctx, static_cast<uint8_t>(num(2)), &a);
    return with_errno(ret ? json{} : json{{"attr", port_attr_json(a)}}, ret);
  }
  if (cmd == "query_port_compat") {
    ibv_port_attr a;
    memset(&a, 0xaa, sizeof a);
    errno = 0;
    const int ret = ibv_query_port(c.ctx, static_cast<uint8_t>(num(2)),
                                   reinterpret_cast<_compat_ibv_port_attr*>(&a));
    json j = ret ? json{} : json{{"attr", port_attr_json(a)}};
    j["bytes_after_48"] = hex(reinterpret_cast<char*>(&a) + 48, sizeof a - 48);
    return with_errno(j, ret);
  }
  if (cmd == "query_device") {
    ibv_device_attr a;
    memset(&a, 0, sizeof a);
    errno = 0;
    const int ret = ibv_query_device(c.ctx, &a);
    return with_errno({{"fw_ver", a.fw_ver},
                       {"node_guid", hex(&a.node_guid, 8)},
                       {"phys_port_cnt", a.phys_port_cnt},
                       {"vendor_id", a.vendor_id},
                       {"vendor_part_id", a.vendor_part_id},
                       {"max_qp", a.max_qp},
                       {"max_pkeys", a.max_pkeys}},
                      ret);
  }
  if (cmd == "query_device_ex") {
    ibv_device_attr_ex a;
    memset(&a, 0xaa, sizeof a);
    ibv_query_device_ex_input in{};
    in.comp_mask = w.size() > 2 ? static_cast<uint32_t>(num(2)) : 0;
    errno = 0;
    const int ret = ibv_query_device_ex(c.ctx, &in, &a);
    return with_errno({{"phys_port_cnt", a.orig_attr.phys_port_cnt},
                       {"fw_ver", ret ? "" : a.orig_attr.fw_ver},
                       {"completion_timestamp_mask", a.completion_timestamp_mask},
                       {"hca_core_clock", a.hca_core_clock}},
                      ret);
  }
  if (cmd == "query_gid") {
    ibv_gid g;
    memset(&g, 0xaa, sizeof g);
    errno = 0;
    const int ret = ibv_query_gid(c.ctx, static_cast<uint8_t>(num(2)),
                                  static_cast<int>(std::stoll(arg(3))), &g);
    return with_errno({{"gid", hex(g.raw, 16)}}, ret);
  }
  if (cmd == "query_gid_type") {
    int type = -7;
    errno = 0;
    const int ret = ibv_query_gid_type(c.ctx, static_cast<uint8_t>(num(2)),
                                       static_cast<unsigned>(num(3)), &type);
    return with_errno({{"type", type}}, ret);
  }
  if (cmd == "query_gid_ex") {
    const size_t entry_size = w.size() > 5 ? num(5) : sizeof(ibv_gid_entry);
    std::vector<uint8_t> buf(std::max<size_t>(entry_size, sizeof(ibv_gid_entry)) + 16, 0xaa);
    errno = 0;
    const int ret =
        _ibv_query_gid_ex(c.ctx, static_cast<uint32_t>(num(2)), static_cast<uint32_t>(num(3)),
                          reinterpret_cast<ibv_gid_entry*>(buf.data()),
                          w.size() > 4 ? static_cast<uint32_t>(num(4)) : 0, entry_size);
    json j;
    if (ret == 0) j["entry"] = gid_entry_json(*reinterpret_cast<ibv_gid_entry*>(buf.data()));
    j["bytes"] = hex(buf.data(), buf.size());
    j["errno_value"] = errno;
    j["ret"] = ret;  // a positive errno itself, not -1
    return j;
  }
  if (cmd == "query_gid_table") {
    const size_t max = num(2);
    const size_t entry_size = w.size() > 4 ? num(4) : sizeof(ibv_gid_entry);
    std::vector<uint8_t> buf(max * entry_size + 16, 0xaa);
    errno = 0;
    const ssize_t ret =
        _ibv_query_gid_table(c.ctx, reinterpret_cast<ibv_gid_entry*>(buf.data()), max,
                             w.size() > 3 ? static_cast<uint32_t>(num(3)) : 0, entry_size);
    json entries = json::array();
    for (ssize_t i = 0; i < ret; ++i) {
      ibv_gid_entry e{};
      memcpy(&e, buf.data() + i * entry_size, std::min(entry_size, sizeof e));
      entries.push_back(gid_entry_json(e));
    }
    return json{{"ret", ret}, {"entries", entries}, {"bytes", hex(buf.data(), buf.size())}};
  }
  if (cmd == "query_pkey") {
    __be16 pkey = 0xaaaa;
    errno = 0;
    const int ret =
        ibv_query_pkey(c.ctx, static_cast<uint8_t>(num(2)), static_cast<int>(num(3)), &pkey);
    return with_errno({{"pkey", be16toh(pkey)}, {"raw", hex(&pkey, 2)}}, ret);
  }
  if (cmd == "get_pkey_index") {
    errno = 0;
    const int ret = ibv_get_pkey_index(c.ctx, static_cast<uint8_t>(num(2)),
                                       htobe16(static_cast<uint16_t>(num(3))));
    json j = with_errno({}, ret < 0 ? ret : 0);
    j["ret"] = ret;
    return j;
  }
  return std::nullopt;
}

}  // namespace verbs_shell
