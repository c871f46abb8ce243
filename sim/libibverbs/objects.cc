// Verbs objects (PD, MR, CQ, SRQ, QP, AH, completion channels, imports). The simulator models
// devices, ports and async events only: every constructor fails with EOPNOTSUPP, so no object
// ever exists, and the destructors and operations (which could only be given an object a program
// did not get from us) fail the same way without touching their argument.
#include <errno.h>

#include "standin.h"

#undef ibv_reg_mr
#undef ibv_reg_mr_iova

using standin::unsupported;
using standin::unsupported_minus_one;
using standin::unsupported_rc;

extern "C" {

// --- symbols that also have an IBVERBS_1.0 variant (compat_1_0.cc) ---------------------------

STANDIN_EXPORT STANDIN_LATEST(ibv_alloc_pd,
                              "IBVERBS_1.1") ibv_pd* standin_alloc_pd_1_1(ibv_context*) {
  return unsupported<ibv_pd>();
}
STANDIN_EXPORT STANDIN_LATEST(ibv_dealloc_pd, "IBVERBS_1.1") int standin_dealloc_pd_1_1(ibv_pd*) {
  return unsupported_rc();
}
STANDIN_EXPORT STANDIN_LATEST(ibv_reg_mr, "IBVERBS_1.1") ibv_mr* standin_reg_mr_1_1(ibv_pd*, void*,
                                                                                    size_t, int) {
  return unsupported<ibv_mr>();
}
STANDIN_EXPORT STANDIN_LATEST(ibv_dereg_mr, "IBVERBS_1.1") int standin_dereg_mr_1_1(ibv_mr*) {
  return unsupported_rc();
}
STANDIN_EXPORT STANDIN_LATEST(ibv_create_cq,
                              "IBVERBS_1.1") ibv_cq* standin_create_cq_1_1(ibv_context*, int, void*,
                                                                           ibv_comp_channel*, int) {
  return unsupported<ibv_cq>();
}
STANDIN_EXPORT STANDIN_LATEST(ibv_resize_cq, "IBVERBS_1.1") int standin_resize_cq_1_1(ibv_cq*,
                                                                                      int) {
  return unsupported_rc();
}
STANDIN_EXPORT STANDIN_LATEST(ibv_destroy_cq, "IBVERBS_1.1") int standin_destroy_cq_1_1(ibv_cq*) {
  return unsupported_rc();
}
STANDIN_EXPORT STANDIN_LATEST(ibv_get_cq_event,
                              "IBVERBS_1.1") int standin_get_cq_event_1_1(ibv_comp_channel*,
                                                                          ibv_cq**, void**) {
  return unsupported_minus_one();
}
STANDIN_EXPORT STANDIN_LATEST(ibv_ack_cq_events,
                              "IBVERBS_1.1") void standin_ack_cq_events_1_1(ibv_cq*, unsigned int) {
}
STANDIN_EXPORT STANDIN_LATEST(ibv_create_srq,
                              "IBVERBS_1.1") ibv_srq* standin_create_srq_1_1(ibv_pd*,
                                                                             ibv_srq_init_attr*) {
  return unsupported<ibv_srq>();
}
STANDIN_EXPORT STANDIN_LATEST(ibv_modify_srq,
                              "IBVERBS_1.1") int standin_modify_srq_1_1(ibv_srq*, ibv_srq_attr*,
                                                                        int) {
  return unsupported_rc();
}
STANDIN_EXPORT STANDIN_LATEST(ibv_query_srq,
                              "IBVERBS_1.1") int standin_query_srq_1_1(ibv_srq*, ibv_srq_attr*) {
  return unsupported_rc();
}
STANDIN_EXPORT STANDIN_LATEST(ibv_destroy_srq,
                              "IBVERBS_1.1") int standin_destroy_srq_1_1(ibv_srq*) {
  return unsupported_rc();
}
STANDIN_EXPORT STANDIN_LATEST(ibv_create_qp,
                              "IBVERBS_1.1") ibv_qp* standin_create_qp_1_1(ibv_pd*,
                                                                           ibv_qp_init_attr*) {
  return unsupported<ibv_qp>();
}
STANDIN_EXPORT STANDIN_LATEST(ibv_query_qp,
                              "IBVERBS_1.1") int standin_query_qp_1_1(ibv_qp*, ibv_qp_attr*, int,
                                                                      ibv_qp_init_attr*) {
  return unsupported_rc();
}
STANDIN_EXPORT STANDIN_LATEST(ibv_modify_qp,
                              "IBVERBS_1.1") int standin_modify_qp_1_1(ibv_qp*, ibv_qp_attr*, int) {
  return unsupported_rc();
}
STANDIN_EXPORT STANDIN_LATEST(ibv_destroy_qp, "IBVERBS_1.1") int standin_destroy_qp_1_1(ibv_qp*) {
  return unsupported_rc();
}
STANDIN_EXPORT STANDIN_LATEST(ibv_create_ah,
                              "IBVERBS_1.1") ibv_ah* standin_create_ah_1_1(ibv_pd*, ibv_ah_attr*) {
  return unsupported<ibv_ah>();
}
STANDIN_EXPORT STANDIN_LATEST(ibv_destroy_ah, "IBVERBS_1.1") int standin_destroy_ah_1_1(ibv_ah*) {
  return unsupported_rc();
}
STANDIN_EXPORT STANDIN_LATEST(ibv_attach_mcast,
                              "IBVERBS_1.1") int standin_attach_mcast_1_1(ibv_qp*, const ibv_gid*,
                                                                          uint16_t) {
  return unsupported_rc();
}
STANDIN_EXPORT STANDIN_LATEST(ibv_detach_mcast,
                              "IBVERBS_1.1") int standin_detach_mcast_1_1(ibv_qp*, const ibv_gid*,
                                                                          uint16_t) {
  return unsupported_rc();
}

// --- single-version symbols ---------------------------------------------------------------------

STANDIN_EXPORT ibv_comp_channel* ibv_create_comp_channel(ibv_context*) {
  return unsupported<ibv_comp_channel>();
}
STANDIN_EXPORT int ibv_destroy_comp_channel(ibv_comp_channel*) {
  return unsupported_rc();
}
STANDIN_EXPORT int ibv_rereg_mr(ibv_mr*, int, ibv_pd*, void*, size_t, int) {
  errno = EOPNOTSUPP;
  return IBV_REREG_MR_ERR_INPUT;
}
STANDIN_EXPORT ibv_mr* ibv_reg_mr_iova(ibv_pd*, void*, size_t, uint64_t, int) {
  return unsupported<ibv_mr>();
}
STANDIN_EXPORT ibv_mr* ibv_reg_mr_iova2(ibv_pd*, void*, size_t, uint64_t, unsigned int) {
  return unsupported<ibv_mr>();
}
STANDIN_EXPORT ibv_mr* ibv_reg_dmabuf_mr(ibv_pd*, uint64_t, size_t, uint64_t, int, int) {
  return unsupported<ibv_mr>();
}
STANDIN_EXPORT int ibv_init_ah_from_wc(ibv_context*, uint8_t, ibv_wc*, ibv_grh*, ibv_ah_attr*) {
  return unsupported_minus_one();
}
STANDIN_EXPORT ibv_ah* ibv_create_ah_from_wc(ibv_pd*, ibv_wc*, ibv_grh*, uint8_t) {
  return unsupported<ibv_ah>();
}
STANDIN_EXPORT int ibv_resolve_eth_l2_from_gid(ibv_context*, ibv_ah_attr*, uint8_t*, uint16_t*) {
  return unsupported_minus_one();
}
STANDIN_EXPORT ibv_qp_ex* ibv_qp_to_qp_ex(ibv_qp*) {
  return unsupported<ibv_qp_ex>();
}
STANDIN_EXPORT ibv_context* ibv_import_device(int) {
  return unsupported<ibv_context>();
}
STANDIN_EXPORT ibv_pd* ibv_import_pd(ibv_context*, uint32_t) {
  return unsupported<ibv_pd>();
}
STANDIN_EXPORT void ibv_unimport_pd(ibv_pd*) {}
STANDIN_EXPORT ibv_mr* ibv_import_mr(ibv_pd*, uint32_t) {
  return unsupported<ibv_mr>();
}
STANDIN_EXPORT void ibv_unimport_mr(ibv_mr*) {}
STANDIN_EXPORT ibv_dm* ibv_import_dm(ibv_context*, uint32_t) {
  return unsupported<ibv_dm>();
}
STANDIN_EXPORT void ibv_unimport_dm(ibv_dm*) {}
STANDIN_EXPORT int ibv_query_ece(ibv_qp*, ibv_ece*) {
  return unsupported_rc();
}
STANDIN_EXPORT int ibv_set_ece(ibv_qp*, ibv_ece*) {
  return unsupported_rc();
}
STANDIN_EXPORT int ibv_query_qp_data_in_order(ibv_qp*, ibv_wr_opcode, uint32_t) {
  return 0;
}

}  // extern "C"
