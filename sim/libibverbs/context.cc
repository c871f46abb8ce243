// ibv_open_device / ibv_close_device and the async event calls.
//
// A context is a connection to the simulator: the socket is the context's cmd_fd (closing it, or
// the process dying, closes the context in the simulator) and the simulator hands back, over that
// socket, the read end of a pipe that becomes the context's async_fd.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/devx.h"
#include "common/protocol.h"
#include "rdma_eventd/internal/fd_message.h"
#include "standin.h"

extern "C" int standin_query_port_1_1(ibv_context* ctx, uint8_t port, _compat_ibv_port_attr* attr);
extern "C" int standin_query_device_1_1(ibv_context* ctx, ibv_device_attr* attr);

namespace standin {
namespace {

int connect_simulator(const Fabric* f) {
  sockaddr_un addr;
  memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  if (snprintf(addr.sun_path, sizeof addr.sun_path, "%s/%s", f->dir, rdmasim::kSocketFile) >=
      static_cast<int>(sizeof addr.sun_path)) {
    errno = ENAMETOOLONG;
    return -1;
  }
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  int rc;
  do {
    rc = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    const int saved = errno;
    close(fd);
    errno = saved;
    return -1;
  }
  return fd;
}

int device_status(const Device* d, uint32_t* num_comp_vectors) {
  int err = read_device(
      d, [&](const rdmasim::ShmDevice& rec) { *num_comp_vectors = rec.num_comp_vectors; });
  // A device whose removal is pending has lost its character device: it cannot be opened.
  if (!err && rdmasim::load_relaxed(d->fabric->shm->devices[d->slot].state) !=
                  static_cast<uint32_t>(rdmasim::SlotState::kLive))
    err = EIO;
  return err;
}

int vctx_query_port(ibv_context* ctx, uint8_t port, ibv_port_attr* attr, size_t len) {
  return query_port(ctx, port, attr, len);
}

}  // namespace

bool send_all(int fd, const char* buf, size_t len) {
  while (len > 0) {
    const ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    buf += n;
    len -= static_cast<size_t>(n);
  }
  return true;
}

// Reads the one-line reply; the async fd, if any, arrives with its first bytes.
bool recv_reply(int fd, char* line, size_t size, int* passed_fd) {
  size_t used = 0;
  *passed_fd = -1;
  while (used + 1 < size) {
    rdma_eventd::internal::FdMessage msg(line + used, size - 1 - used);
    msg.make_room();
    const ssize_t n = recvmsg(fd, msg.get(), MSG_CMSG_CLOEXEC);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    if (*passed_fd < 0) *passed_fd = msg.received_fd();
    used += static_cast<size_t>(n);
    line[used] = '\0';
    if (memchr(line, '\n', used)) return true;
  }
  return false;
}

ibv_context* open_context(Device* d, int devx_mode) {
  uint32_t num_comp_vectors = 0;
  if (int err = device_status(d, &num_comp_vectors)) {
    errno = err;
    return nullptr;
  }
  const int sock = connect_simulator(d->fabric);
  if (sock < 0) {
    errno = EIO;
    return nullptr;
  }
  char line[rdmasim::kMaxOpenLine];
  snprintf(line, sizeof line, "%s %d %d %d\n", rdmasim::kOpenVerb, d->index,
           static_cast<int>(getpid()), devx_mode);
  int async_fd = -1;
  unsigned long long id = 0;
  unsigned slot = 0, uid = 0;
  int err = EIO;
  if (send_all(sock, line, strlen(line)) && recv_reply(sock, line, sizeof line, &async_fd)) {
    if (sscanf(line, "OK %llu %u %u", &id, &slot, &uid) == 3 && async_fd >= 0 &&
        slot < static_cast<unsigned>(rdmasim::kMaxContexts))
      err = 0;
    else if (sscanf(line, "ERR %d", &err) != 1 || err <= 0)
      err = EIO;
  }
  auto* c = err ? nullptr : static_cast<Context*>(calloc(1, sizeof(Context)));
  if (!c) {
    if (async_fd >= 0) close(async_fd);
    close(sock);
    errno = err ? err : ENOMEM;
    return nullptr;
  }
  device_ref(d);
  c->device = d;
  c->id = id;
  c->ctx_slot = slot;
  c->devx_uid = uid;
  pthread_mutex_init(&c->cmd_lock, nullptr);

  verbs_context& v = c->vctx;
  ibv_context& ctx = v.context;
  ctx.device = &d->dev;
  ctx.cmd_fd = sock;
  ctx.async_fd = async_fd;
  ctx.num_comp_vectors = static_cast<int>(num_comp_vectors);
  pthread_mutex_init(&ctx.mutex, nullptr);
  ctx.abi_compat = __VERBS_ABI_IS_EXTENDED;
  v.sz = sizeof(verbs_context);
  v.query_port = vctx_query_port;
  v.query_device_ex = query_device_ex;
  // What rdma-core's set_lib_ops() puts in the legacy ops table.
  ctx.ops._compat_query_port = standin_query_port_1_1;
  ctx.ops._compat_query_device = standin_query_device_1_1;
  register_ack_context(c);
  return &ctx;
}

}  // namespace standin

using standin::Context;
using standin::Device;

extern "C" {

STANDIN_EXPORT STANDIN_LATEST(ibv_open_device, "IBVERBS_1.1")
    ibv_context* standin_open_device_1_1(ibv_device* device) {
  // rdma-core's mlx5 provider asks for a DEVX context and falls back to a plain one when the
  // kernel refuses (mlx5_alloc_context, always_devx); the other providers ask for none.
  Device* d = standin::to_device(device);
  return standin::open_context(
      d, d->provider == static_cast<uint32_t>(rdmasim::devx::Provider::kMlx5) ? rdmasim::kDevxTry
                                                                              : rdmasim::kDevxNone);
}

STANDIN_EXPORT STANDIN_LATEST(ibv_close_device,
                              "IBVERBS_1.1") int standin_close_device_1_1(ibv_context* context) {
  // Like verbs_uninit_context(): close both fds and drop the device; never wait for anything.
  // Events still queued are discarded with the pipe.
  Context* c = standin::to_context(context);
  standin::unregister_ack_context(c);
  if (context->cmd_fd >= 0) close(context->cmd_fd);
  if (context->async_fd >= 0) close(context->async_fd);
  pthread_mutex_destroy(&context->mutex);
  pthread_mutex_destroy(&c->cmd_lock);
  standin::device_unref(c->device);
  free(c);
  return 0;
}

STANDIN_EXPORT STANDIN_LATEST(ibv_get_async_event, "IBVERBS_1.1") int standin_get_async_event_1_1(
    ibv_context* context, ibv_async_event* event) {
  rdmasim::AsyncEventDesc ev;
  // errno comes from read(); a short read fails without touching errno, as in rdma-core.
  if (read(context->async_fd, &ev, sizeof ev) != static_cast<ssize_t>(sizeof ev)) return -1;
  event->event_type = static_cast<ibv_event_type>(ev.event_type);
  switch (event->event_type) {
    case IBV_EVENT_CQ_ERR:
      event->element.cq = reinterpret_cast<ibv_cq*>(static_cast<uintptr_t>(ev.element));
      break;
    case IBV_EVENT_QP_FATAL:
    case IBV_EVENT_QP_REQ_ERR:
    case IBV_EVENT_QP_ACCESS_ERR:
    case IBV_EVENT_COMM_EST:
    case IBV_EVENT_SQ_DRAINED:
    case IBV_EVENT_PATH_MIG:
    case IBV_EVENT_PATH_MIG_ERR:
    case IBV_EVENT_QP_LAST_WQE_REACHED:
      event->element.qp = reinterpret_cast<ibv_qp*>(static_cast<uintptr_t>(ev.element));
      break;
    case IBV_EVENT_SRQ_ERR:
    case IBV_EVENT_SRQ_LIMIT_REACHED:
      event->element.srq = reinterpret_cast<ibv_srq*>(static_cast<uintptr_t>(ev.element));
      break;
    case IBV_EVENT_WQ_FATAL:
      event->element.wq = reinterpret_cast<ibv_wq*>(static_cast<uintptr_t>(ev.element));
      break;
    default:
      event->element.port_num = static_cast<int>(ev.element);
      break;
  }
  Context* c = standin::to_context(context);
  const uint32_t token = standin::ack_token(c);
  static_assert(sizeof(ibv_async_event) == 16 && offsetof(ibv_async_event, event_type) == 8);
  memcpy(reinterpret_cast<char*>(event) + 12, &token, sizeof token);
  standin::count_event_read(c);
  return 0;
}

STANDIN_EXPORT STANDIN_LATEST(ibv_ack_async_event, "IBVERBS_1.1") void standin_ack_async_event_1_1(
    ibv_async_event* event) {
  // The real ack completes an event on its CQ/QP/SRQ/WQ object and is a no-op for port and device
  // events. The stand-in has no such objects, so it never dereferences the element (a raw
  // affiliated event injected for a test carries a made-up value); it only counts the ack.
  uint32_t token;
  memcpy(&token, reinterpret_cast<const char*>(event) + 12, sizeof token);
  standin::count_event_acked(token);
  // Counted once: a second ack of the same struct counts nothing.
  memset(reinterpret_cast<char*>(event) + 12, 0, sizeof token);
}

}  // extern "C"
