// RDMA_SIM_PRIVATE_1: what the stand-in libmlx5.so.1 needs of this library (see
// common/standin_private.h).
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "common/protocol.h"
#include "common/standin_private.h"
#include "rdma_eventd/internal/fd_message.h"
#include "standin.h"

namespace {

bool send_command(int sock, const char* request, int send_fd) {
  char line[rdmasim::kMaxContextRequest];
  const int len = snprintf(line, sizeof line, "%s\n", request);
  if (len <= 0 || len >= static_cast<int>(sizeof line)) return false;
  if (send_fd < 0) return standin::send_all(sock, line, static_cast<size_t>(len));
  rdma_eventd::internal::FdMessage msg(line, static_cast<size_t>(len));
  msg.attach(send_fd);
  ssize_t n;
  do {
    n = sendmsg(sock, msg.get(), MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  // A command line is far shorter than the socket buffer: all of it goes, or the simulator is gone.
  return n == len;
}

}  // namespace

using standin::Context;
using standin::Device;

extern "C" {

__attribute__((visibility("default"))) int rdma_sim_device(ibv_device* device, RdmaSimDevice* out) {
  const Device* d = standin::to_device(device);
  if (!device || d->magic != standin::kDeviceMagic) return ENODEV;
  *out = RdmaSimDevice{d->fabric->shm, d->fabric->writable, d->slot, d->index, d->provider};
  return 0;
}

__attribute__((visibility("default"))) int rdma_sim_devx_caps(ibv_device* device,
                                                              rdmasim::ShmDevx* caps,
                                                              uint32_t* num_ports) {
  return standin::read_device(standin::to_device(device), [&](const rdmasim::ShmDevice& rec) {
    *caps = rec.devx;
    *num_ports = rec.phys_port_cnt;
  });
}

__attribute__((visibility("default"))) ibv_context* rdma_sim_open_device(ibv_device* device,
                                                                         int devx_mode) {
  return standin::open_context(standin::to_device(device), devx_mode);
}

__attribute__((visibility("default"))) uint32_t rdma_sim_context_uid(ibv_context* context) {
  return standin::to_context(context)->devx_uid;
}

__attribute__((visibility("default"))) int rdma_sim_context_command(ibv_context* context,
                                                                    const char* request,
                                                                    int send_fd, char* reply,
                                                                    size_t reply_size,
                                                                    int* recv_fd) {
  Context* c = standin::to_context(context);
  *recv_fd = -1;
  pthread_mutex_lock(&c->cmd_lock);
  const bool ok = send_command(context->cmd_fd, request, send_fd) &&
                  standin::recv_reply(context->cmd_fd, reply, reply_size, recv_fd);
  pthread_mutex_unlock(&c->cmd_lock);
  if (!ok) return EIO;
  if (char* nl = strchr(reply, '\n')) *nl = '\0';
  return 0;
}

__attribute__((visibility("default"))) void rdma_sim_model_latency(ibv_context* context) {
  standin::model_query_latency(standin::to_context(context)->device->fabric);
}

}  // extern "C"
