// sysfs helpers, fork-safety calls and the historical marshalling helpers.
#include <errno.h>
#include <fcntl.h>
#include <infiniband/sa.h>
#include <rdma/ib_user_sa.h>
#include <rdma/ib_user_verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "standin.h"

namespace standin {

int read_sysfs_file(const char* dir, const char* file, char* buf, size_t size) {
  char path[PATH_MAX];
  if (snprintf(path, sizeof path, "%s/%s", dir, file) >= static_cast<int>(sizeof path)) {
    errno = ENAMETOOLONG;
    return -1;
  }
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t len = read(fd, buf, size);
  close(fd);
  if (len > 0) {
    // One trailing newline is dropped; a value that fills the buffer without one would be
    // truncated, which rdma-core refuses.
    if (buf[len - 1] == '\n')
      buf[--len] = '\0';
    else if (static_cast<size_t>(len) < size)
      buf[len] = '\0';
    else
      return -1;
  }
  return static_cast<int>(len);
}

}  // namespace standin

extern "C" {

STANDIN_EXPORT int ibv_read_sysfs_file(const char* dir, const char* file, char* buf, size_t size) {
  return standin::read_sysfs_file(dir, file, buf, size);
}

STANDIN_EXPORT const char* ibv_get_sysfs_path(void) {
  // rdma-core honours SYSFS_PATH (unless set-uid); with a simulated fabric the default is its
  // sysfs tree, so paths built from this agree with the devices' ibdev_path.
  static char path[PATH_MAX];
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, [] {
    const char* env = getuid() == geteuid() ? getenv("SYSFS_PATH") : nullptr;
    const char* root = standin::fabric_sysfs_root();
    snprintf(path, sizeof path, "%s", env ? env : root ? root : "/sys");
    for (size_t len = strlen(path); len > 0 && path[len - 1] == '/';)
      path[--len] = '\0';
  });
  return path;
}

// ibv_read_ibdev_sysfs_file() takes rdma-core's private struct verbs_sysfs_dev, which only a
// provider library has; the stand-in has no providers.
STANDIN_EXPORT int ibv_read_ibdev_sysfs_file(char*, size_t, void* sysfs_dev, const char*, ...) {
  errno = sysfs_dev ? EOPNOTSUPP : EINVAL;
  return -1;
}

// Copy-on-fork is what current kernels give; nothing needs registering.
STANDIN_EXPORT int ibv_fork_init(void) {
  return 0;
}
STANDIN_EXPORT ibv_fork_status ibv_is_fork_initialized(void) {
  return IBV_FORK_UNNEEDED;
}
STANDIN_EXPORT int ibv_dontfork_range(void*, size_t) {
  return 0;
}
STANDIN_EXPORT int ibv_dofork_range(void*, size_t) {
  return 0;
}

// Historical helpers that translate kernel ABI structs; kept for programs built against them.
STANDIN_EXPORT void ibv_copy_ah_attr_from_kern(ibv_ah_attr* dst, const ib_uverbs_ah_attr* src) {
  memcpy(dst->grh.dgid.raw, src->grh.dgid, sizeof dst->grh.dgid.raw);
  dst->grh.flow_label = src->grh.flow_label;
  dst->grh.sgid_index = src->grh.sgid_index;
  dst->grh.hop_limit = src->grh.hop_limit;
  dst->grh.traffic_class = src->grh.traffic_class;
  dst->dlid = src->dlid;
  dst->sl = src->sl;
  dst->src_path_bits = src->src_path_bits;
  dst->static_rate = src->static_rate;
  dst->is_global = src->is_global;
  dst->port_num = src->port_num;
}

STANDIN_EXPORT void ibv_copy_qp_attr_from_kern(ibv_qp_attr* dst, const ib_uverbs_qp_attr* src) {
  dst->cur_qp_state = static_cast<ibv_qp_state>(src->cur_qp_state);
  dst->path_mtu = static_cast<ibv_mtu>(src->path_mtu);
  dst->path_mig_state = static_cast<ibv_mig_state>(src->path_mig_state);
  dst->qkey = src->qkey;
  dst->rq_psn = src->rq_psn;
  dst->sq_psn = src->sq_psn;
  dst->dest_qp_num = src->dest_qp_num;
  dst->qp_access_flags = src->qp_access_flags;
  dst->cap.max_send_wr = src->max_send_wr;
  dst->cap.max_recv_wr = src->max_recv_wr;
  dst->cap.max_send_sge = src->max_send_sge;
  dst->cap.max_recv_sge = src->max_recv_sge;
  dst->cap.max_inline_data = src->max_inline_data;
  ibv_copy_ah_attr_from_kern(&dst->ah_attr, &src->ah_attr);
  ibv_copy_ah_attr_from_kern(&dst->alt_ah_attr, &src->alt_ah_attr);
  dst->pkey_index = src->pkey_index;
  dst->alt_pkey_index = src->alt_pkey_index;
  dst->en_sqd_async_notify = src->en_sqd_async_notify;
  dst->sq_draining = src->sq_draining;
  dst->max_rd_atomic = src->max_rd_atomic;
  dst->max_dest_rd_atomic = src->max_dest_rd_atomic;
  dst->min_rnr_timer = src->min_rnr_timer;
  dst->port_num = src->port_num;
  dst->timeout = src->timeout;
  dst->retry_cnt = src->retry_cnt;
  dst->rnr_retry = src->rnr_retry;
  dst->alt_port_num = src->alt_port_num;
  dst->alt_timeout = src->alt_timeout;
}

#define STANDIN_COPY_PATH_FIELDS(dst, src)                               \
  do {                                                                   \
    (dst)->dlid = (src)->dlid;                                           \
    (dst)->slid = (src)->slid;                                           \
    (dst)->raw_traffic = (src)->raw_traffic;                             \
    (dst)->flow_label = (src)->flow_label;                               \
    (dst)->hop_limit = (src)->hop_limit;                                 \
    (dst)->traffic_class = (src)->traffic_class;                         \
    (dst)->reversible = (src)->reversible;                               \
    (dst)->numb_path = (src)->numb_path;                                 \
    (dst)->pkey = (src)->pkey;                                           \
    (dst)->sl = (src)->sl;                                               \
    (dst)->mtu_selector = (src)->mtu_selector;                           \
    (dst)->mtu = (src)->mtu;                                             \
    (dst)->rate_selector = (src)->rate_selector;                         \
    (dst)->rate = (src)->rate;                                           \
    (dst)->packet_life_time = (src)->packet_life_time;                   \
    (dst)->preference = (src)->preference;                               \
    (dst)->packet_life_time_selector = (src)->packet_life_time_selector; \
  } while (0)

STANDIN_EXPORT void ibv_copy_path_rec_from_kern(ibv_sa_path_rec* dst, const ib_user_path_rec* src) {
  memcpy(dst->dgid.raw, src->dgid, sizeof dst->dgid.raw);
  memcpy(dst->sgid.raw, src->sgid, sizeof dst->sgid.raw);
  STANDIN_COPY_PATH_FIELDS(dst, src);
}

STANDIN_EXPORT void ibv_copy_path_rec_to_kern(ib_user_path_rec* dst, const ibv_sa_path_rec* src) {
  memcpy(dst->dgid, src->dgid.raw, sizeof dst->dgid);
  memcpy(dst->sgid, src->sgid.raw, sizeof dst->sgid);
  STANDIN_COPY_PATH_FIELDS(dst, src);
}

}  // extern "C"
