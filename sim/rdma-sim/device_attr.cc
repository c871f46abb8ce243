#include "device_attr.h"

#include <limits>

namespace rdmasim {

// ConnectX-6-like capabilities: what ibv_devinfo -v shows for a real adapter.
ibv_device_attr_ex default_device_attr() {
  ibv_device_attr_ex ex{};
  ibv_device_attr& a = ex.orig_attr;
  a.max_mr_size = 0xffffffffffffffffULL;
  a.page_size_cap = 0xfffffffffffff000ULL;
  a.vendor_id = 0x02c9;
  a.vendor_part_id = 4123;
  a.hw_ver = 0;
  a.max_qp = 262144;
  a.max_qp_wr = 32768;
  a.device_cap_flags = 0xed721c36;
  a.max_sge = 30;
  a.max_sge_rd = 30;
  a.max_cq = 16777216;
  a.max_cqe = 4194303;
  a.max_mr = 16777216;
  a.max_pd = 16777216;
  a.max_qp_rd_atom = 16;
  a.max_res_rd_atom = 4194304;
  a.max_qp_init_rd_atom = 16;
  a.atomic_cap = IBV_ATOMIC_HCA;
  a.max_mw = 16777216;
  a.max_mcast_grp = 2097152;
  a.max_mcast_qp_attach = 240;
  a.max_total_mcast_qp_attach = 503316480;
  a.max_ah = 2147483647;
  a.max_srq = 8388608;
  a.max_srq_wr = 32767;
  a.max_srq_sge = 31;
  a.max_pkeys = 128;
  a.local_ca_ack_delay = 16;
  ex.completion_timestamp_mask = 0x7fffffffffffffffULL;
  ex.hca_core_clock = 156250;
  ex.device_cap_flags_ex = a.device_cap_flags;
  return ex;
}

void parse_device_attr(JsonFields& o, ibv_device_attr_ex* ex) {
  ibv_device_attr& a = ex->orig_attr;
  constexpr uint64_t kI32 = std::numeric_limits<int32_t>::max();
  constexpr uint64_t kU64 = std::numeric_limits<uint64_t>::max();
#define DEV_INT(field) \
  a.field = static_cast<int>(o.num(#field, static_cast<uint64_t>(a.field), 0, kI32))
  a.max_mr_size = o.num("max_mr_size", a.max_mr_size, 0, kU64);
  a.page_size_cap = o.num("page_size_cap", a.page_size_cap, 0, kU64);
  DEV_INT(max_qp);
  DEV_INT(max_qp_wr);
  a.device_cap_flags =
      static_cast<unsigned>(o.num("device_cap_flags", a.device_cap_flags, 0, 0xffffffffu));
  DEV_INT(max_sge);
  DEV_INT(max_sge_rd);
  DEV_INT(max_cq);
  DEV_INT(max_cqe);
  DEV_INT(max_mr);
  DEV_INT(max_pd);
  DEV_INT(max_qp_rd_atom);
  DEV_INT(max_ee_rd_atom);
  DEV_INT(max_res_rd_atom);
  DEV_INT(max_qp_init_rd_atom);
  DEV_INT(max_ee_init_rd_atom);
  a.atomic_cap = static_cast<ibv_atomic_cap>(
      o.choice("atomic_cap", a.atomic_cap,
               {{"none", IBV_ATOMIC_NONE}, {"hca", IBV_ATOMIC_HCA}, {"glob", IBV_ATOMIC_GLOB}}));
  DEV_INT(max_ee);
  DEV_INT(max_rdd);
  DEV_INT(max_mw);
  DEV_INT(max_raw_ipv6_qp);
  DEV_INT(max_raw_ethy_qp);
  DEV_INT(max_mcast_grp);
  DEV_INT(max_mcast_qp_attach);
  DEV_INT(max_total_mcast_qp_attach);
  DEV_INT(max_ah);
  DEV_INT(max_fmr);
  DEV_INT(max_map_per_fmr);
  DEV_INT(max_srq);
  DEV_INT(max_srq_wr);
  DEV_INT(max_srq_sge);
  a.max_pkeys = static_cast<uint16_t>(o.num("max_pkeys", a.max_pkeys, 0, 0xffff));
  a.local_ca_ack_delay =
      static_cast<uint8_t>(o.num("local_ca_ack_delay", a.local_ca_ack_delay, 0, 0xff));
#undef DEV_INT
  ex->completion_timestamp_mask =
      o.num("completion_timestamp_mask", ex->completion_timestamp_mask, 0, kU64);
  ex->hca_core_clock = o.num("hca_core_clock", ex->hca_core_clock, 0, kU64);
  ex->device_cap_flags_ex = o.num("device_cap_flags_ex", ex->device_cap_flags_ex, 0, kU64);
  ex->max_dm_size = o.num("max_dm_size", ex->max_dm_size, 0, kU64);
  ex->max_wq_type_rq =
      static_cast<uint32_t>(o.num("max_wq_type_rq", ex->max_wq_type_rq, 0, 0xffffffffu));
  ex->raw_packet_caps =
      static_cast<uint32_t>(o.num("raw_packet_caps", ex->raw_packet_caps, 0, 0xffffffffu));
  o.check_unknown();
}

}  // namespace rdmasim
