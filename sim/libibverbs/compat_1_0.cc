// The IBVERBS_1.0 variants of the core calls. They use the pre-2006 ABI (struct ibv_device_1_0
// wrappers) that only programs linked against libibverbs 1.0 reference. They exist so such a
// program loads; its calls fail with EOPNOTSUPP, and its device list is NULL.
#include "standin.h"

using standin::unsupported;
using standin::unsupported_minus_one;
using standin::unsupported_rc;

#define STANDIN_COMPAT_PTR(sym)                                               \
  extern "C" STANDIN_COMPAT(sym, "IBVERBS_1.0") void* standin_##sym##_1_0() { \
    return unsupported<void>();                                               \
  }
#define STANDIN_COMPAT_INT(sym)                                             \
  extern "C" STANDIN_COMPAT(sym, "IBVERBS_1.0") int standin_##sym##_1_0() { \
    return unsupported_rc();                                                \
  }
#define STANDIN_COMPAT_MINUS_ONE(sym)                                       \
  extern "C" STANDIN_COMPAT(sym, "IBVERBS_1.0") int standin_##sym##_1_0() { \
    return unsupported_minus_one();                                         \
  }
#define STANDIN_COMPAT_VOID(sym) \
  extern "C" STANDIN_COMPAT(sym, "IBVERBS_1.0") void standin_##sym##_1_0() {}

STANDIN_COMPAT_PTR(ibv_get_device_list)
STANDIN_COMPAT_VOID(ibv_free_device_list)
STANDIN_COMPAT_PTR(ibv_get_device_name)
extern "C" STANDIN_COMPAT(ibv_get_device_guid, "IBVERBS_1.0") uint64_t
    standin_ibv_get_device_guid_1_0() {
  return 0;
}
STANDIN_COMPAT_PTR(ibv_open_device)
STANDIN_COMPAT_INT(ibv_close_device)
STANDIN_COMPAT_MINUS_ONE(ibv_get_async_event)
STANDIN_COMPAT_VOID(ibv_ack_async_event)
STANDIN_COMPAT_INT(ibv_query_device)
STANDIN_COMPAT_INT(ibv_query_port)
STANDIN_COMPAT_MINUS_ONE(ibv_query_gid)
STANDIN_COMPAT_MINUS_ONE(ibv_query_pkey)
STANDIN_COMPAT_PTR(ibv_alloc_pd)
STANDIN_COMPAT_INT(ibv_dealloc_pd)
STANDIN_COMPAT_PTR(ibv_reg_mr)
STANDIN_COMPAT_INT(ibv_dereg_mr)
STANDIN_COMPAT_PTR(ibv_create_cq)
STANDIN_COMPAT_INT(ibv_resize_cq)
STANDIN_COMPAT_INT(ibv_destroy_cq)
STANDIN_COMPAT_MINUS_ONE(ibv_get_cq_event)
STANDIN_COMPAT_VOID(ibv_ack_cq_events)
STANDIN_COMPAT_PTR(ibv_create_srq)
STANDIN_COMPAT_INT(ibv_modify_srq)
STANDIN_COMPAT_INT(ibv_query_srq)
STANDIN_COMPAT_INT(ibv_destroy_srq)
STANDIN_COMPAT_PTR(ibv_create_qp)
STANDIN_COMPAT_INT(ibv_query_qp)
STANDIN_COMPAT_INT(ibv_modify_qp)
STANDIN_COMPAT_INT(ibv_destroy_qp)
STANDIN_COMPAT_PTR(ibv_create_ah)
STANDIN_COMPAT_INT(ibv_destroy_ah)
STANDIN_COMPAT_INT(ibv_attach_mcast)
STANDIN_COMPAT_INT(ibv_detach_mcast)

// ibv_register_driver exists only as an old, non-default symbol (providers now register
// through the private verbs_register_driver_34).
extern "C" STANDIN_COMPAT(ibv_register_driver,
                          "IBVERBS_1.1") void standin_ibv_register_driver_1_1() {}
