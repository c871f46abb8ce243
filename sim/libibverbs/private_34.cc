// IBVERBS_PRIVATE_34: the interface between libibverbs and its provider libraries (libmlx5 and
// friends). No provider is ever loaded with the stand-in; these exist so that anything linked
// against them loads, and they fail if called. ibv_query_gid_type and ibv_read_ibdev_sysfs_file,
// which utilities do call, are real (queries.cc, sysfs_misc.cc).
//
// The provider interface's types live in rdma-core's private headers, which are not installed;
// C linkage does not encode parameter types, so these are declared without them.
#include <errno.h>
#include <stddef.h>

#define STANDIN_PRIVATE_CMD(sym)                                \
  extern "C" __attribute__((visibility("default"))) int sym() { \
    return EOPNOTSUPP;                                          \
  }

extern "C" {

__attribute__((visibility("default"))) bool verbs_allow_disassociate_destroy = false;

__attribute__((visibility("default"))) void __verbs_log(void*, const char*, ...) {}
__attribute__((visibility("default"))) void* _verbs_init_and_alloc_context(void*, int, size_t,
                                                                           void*, unsigned) {
  errno = EOPNOTSUPP;
  return nullptr;
}
__attribute__((visibility("default"))) void* verbs_open_device(void*, void*) {
  errno = EOPNOTSUPP;
  return nullptr;
}
__attribute__((visibility("default"))) void verbs_register_driver_34(void*) {}
__attribute__((visibility("default"))) void verbs_set_ops(void*, const void*) {}
__attribute__((visibility("default"))) void verbs_uninit_context(void*) {}
__attribute__((visibility("default"))) void verbs_init_cq(void*, void*, void*, void*) {}
__attribute__((visibility("default"))) unsigned int __ioctl_final_num_attrs(unsigned int num_attrs,
                                                                            void*) {
  return num_attrs;
}

}  // extern "C"

STANDIN_PRIVATE_CMD(execute_ioctl)
STANDIN_PRIVATE_CMD(ibv_cmd_advise_mr)
STANDIN_PRIVATE_CMD(ibv_cmd_alloc_dm)
STANDIN_PRIVATE_CMD(ibv_cmd_alloc_mw)
STANDIN_PRIVATE_CMD(ibv_cmd_alloc_pd)
STANDIN_PRIVATE_CMD(ibv_cmd_attach_mcast)
STANDIN_PRIVATE_CMD(ibv_cmd_close_xrcd)
STANDIN_PRIVATE_CMD(ibv_cmd_create_ah)
STANDIN_PRIVATE_CMD(ibv_cmd_create_counters)
STANDIN_PRIVATE_CMD(ibv_cmd_create_cq)
STANDIN_PRIVATE_CMD(ibv_cmd_create_cq_ex)
STANDIN_PRIVATE_CMD(ibv_cmd_create_flow)
STANDIN_PRIVATE_CMD(ibv_cmd_create_flow_action_esp)
STANDIN_PRIVATE_CMD(ibv_cmd_create_qp)
STANDIN_PRIVATE_CMD(ibv_cmd_create_qp_ex)
STANDIN_PRIVATE_CMD(ibv_cmd_create_qp_ex2)
STANDIN_PRIVATE_CMD(ibv_cmd_create_rwq_ind_table)
STANDIN_PRIVATE_CMD(ibv_cmd_create_srq)
STANDIN_PRIVATE_CMD(ibv_cmd_create_srq_ex)
STANDIN_PRIVATE_CMD(ibv_cmd_create_wq)
STANDIN_PRIVATE_CMD(ibv_cmd_dealloc_mw)
STANDIN_PRIVATE_CMD(ibv_cmd_dealloc_pd)
STANDIN_PRIVATE_CMD(ibv_cmd_dereg_mr)
STANDIN_PRIVATE_CMD(ibv_cmd_destroy_ah)
STANDIN_PRIVATE_CMD(ibv_cmd_destroy_counters)
STANDIN_PRIVATE_CMD(ibv_cmd_destroy_cq)
STANDIN_PRIVATE_CMD(ibv_cmd_destroy_flow)
STANDIN_PRIVATE_CMD(ibv_cmd_destroy_flow_action)
STANDIN_PRIVATE_CMD(ibv_cmd_destroy_qp)
STANDIN_PRIVATE_CMD(ibv_cmd_destroy_rwq_ind_table)
STANDIN_PRIVATE_CMD(ibv_cmd_destroy_srq)
STANDIN_PRIVATE_CMD(ibv_cmd_destroy_wq)
STANDIN_PRIVATE_CMD(ibv_cmd_detach_mcast)
STANDIN_PRIVATE_CMD(ibv_cmd_free_dm)
STANDIN_PRIVATE_CMD(ibv_cmd_get_context)
STANDIN_PRIVATE_CMD(ibv_cmd_modify_cq)
STANDIN_PRIVATE_CMD(ibv_cmd_modify_flow_action_esp)
STANDIN_PRIVATE_CMD(ibv_cmd_modify_qp)
STANDIN_PRIVATE_CMD(ibv_cmd_modify_qp_ex)
STANDIN_PRIVATE_CMD(ibv_cmd_modify_srq)
STANDIN_PRIVATE_CMD(ibv_cmd_modify_wq)
STANDIN_PRIVATE_CMD(ibv_cmd_open_qp)
STANDIN_PRIVATE_CMD(ibv_cmd_open_xrcd)
STANDIN_PRIVATE_CMD(ibv_cmd_poll_cq)
STANDIN_PRIVATE_CMD(ibv_cmd_post_recv)
STANDIN_PRIVATE_CMD(ibv_cmd_post_send)
STANDIN_PRIVATE_CMD(ibv_cmd_post_srq_recv)
STANDIN_PRIVATE_CMD(ibv_cmd_query_context)
STANDIN_PRIVATE_CMD(ibv_cmd_query_device_any)
STANDIN_PRIVATE_CMD(ibv_cmd_query_mr)
STANDIN_PRIVATE_CMD(ibv_cmd_query_port)
STANDIN_PRIVATE_CMD(ibv_cmd_query_qp)
STANDIN_PRIVATE_CMD(ibv_cmd_query_srq)
STANDIN_PRIVATE_CMD(ibv_cmd_read_counters)
STANDIN_PRIVATE_CMD(ibv_cmd_reg_dm_mr)
STANDIN_PRIVATE_CMD(ibv_cmd_reg_dmabuf_mr)
STANDIN_PRIVATE_CMD(ibv_cmd_reg_mr)
STANDIN_PRIVATE_CMD(ibv_cmd_req_notify_cq)
STANDIN_PRIVATE_CMD(ibv_cmd_rereg_mr)
STANDIN_PRIVATE_CMD(ibv_cmd_resize_cq)
