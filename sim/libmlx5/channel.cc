// DEVX event channels: mlx5dv_devx_create_event_channel, _destroy_event_channel,
// _subscribe_devx_event(_fd) and mlx5dv_devx_get_event.
//
// In rdma-core the channel is the kernel's fd and mlx5dv_devx_get_event a plain read(). Here the
// fd is the client's end of a SOCK_SEQPACKET socket the simulator writes records into (one
// record per read, readable while one is pending), and get_event adds what a read() on a socket
// cannot do (devx.c devx_async_event_read): EOVERFLOW once after a lost event, ahead of the
// records still queued; EINVAL for a buffer smaller than the record, which stays; EAGAIN, or EIO
// when blocking, once the channel is destroyed. See docs/simulator.md, "DEVX".
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>

#include "standin_mlx5.h"

namespace mlx5standin {
namespace {

struct Channel {
  mlx5dv_devx_event_channel dv;  // first: the program holds a pointer to it
  ibv_context* context;
  uint64_t id;
  rdmasim::ShmChannel* rec;  // the channel's record in the fabric's state file
  pthread_mutex_t lock;      // one taker at a time, as the kernel's ev_file->lock
};

Channel* to_channel(mlx5dv_devx_event_channel* dv) {
  return reinterpret_cast<Channel*>(dv);
}

bool nonblocking(int fd) {
  const int flags = fcntl(fd, F_GETFL);
  return flags >= 0 && (flags & O_NONBLOCK);
}

// After destroy the kernel's read finds no event: EAGAIN, or EIO for a reader that would wait.
ssize_t destroyed(int fd) {
  errno = nonblocking(fd) ? EAGAIN : EIO;
  return -1;
}

}  // namespace
}  // namespace mlx5standin

using mlx5standin::Channel;
using mlx5standin::fail;

MLX5_STANDIN_EXPORT mlx5dv_devx_event_channel* mlx5dv_devx_create_event_channel(
    ibv_context* context, mlx5dv_devx_create_event_channel_flags flags) {
  if (!mlx5standin::is_mlx5(context->device)) {
    errno = EOPNOTSUPP;
    return nullptr;
  }
  RdmaSimDevice device;
  if (rdma_sim_device(context->device, &device) != 0 || !device.writable) {
    // The reader's half of the channel's state lives in the state file; without write access
    // the overflow bit could never be taken.
    errno = EACCES;
    return nullptr;
  }
  char request[64], reply[64];
  snprintf(request, sizeof request, "%s %u", rdmasim::kChannelVerb, static_cast<unsigned>(flags));
  int fd = -1;
  if (int err = mlx5standin::command(context, request, -1, reply, sizeof reply, &fd)) {
    errno = err;
    return nullptr;
  }
  unsigned long long id = 0;
  unsigned slot = 0;
  auto* c = static_cast<Channel*>(calloc(1, sizeof(Channel)));
  if (fd < 0 || !c || sscanf(reply, "%llu %u", &id, &slot) != 2 ||
      slot >= static_cast<unsigned>(rdmasim::kMaxChannels)) {
    if (fd >= 0) close(fd);
    free(c);
    errno = c ? EIO : ENOMEM;
    return nullptr;
  }
  c->dv.fd = fd;
  c->context = context;
  c->id = id;
  c->rec = &device.shm->channels[slot];
  pthread_mutex_init(&c->lock, nullptr);
  return &c->dv;
}

MLX5_STANDIN_EXPORT void mlx5dv_devx_destroy_event_channel(mlx5dv_devx_event_channel* channel) {
  // As rdma-core: close the fd (the kernel releases the channel with its last reference) and
  // free the struct.
  Channel* c = mlx5standin::to_channel(channel);
  close(c->dv.fd);
  pthread_mutex_destroy(&c->lock);
  free(c);
}

MLX5_STANDIN_EXPORT int mlx5dv_devx_subscribe_devx_event(mlx5dv_devx_event_channel* channel,
                                                         mlx5dv_devx_obj* obj, uint16_t events_sz,
                                                         uint16_t events_num[], uint64_t cookie) {
  Channel* c = mlx5standin::to_channel(channel);
  if (!mlx5standin::is_mlx5(c->context->device)) return EOPNOTSUPP;
  // The stand-in creates no DEVX objects: no handle a program holds can name one.
  if (obj) return fail(EINVAL);
  if (events_sz && !events_num) return fail(EFAULT);
  // The kernel copies the whole list and refuses more than 16 events: sending 17 says as much.
  char request[rdmasim::kMaxContextRequest];
  int len = snprintf(request, sizeof request, "%s %llu %llu %u", rdmasim::kSubscribeVerb,
                     static_cast<unsigned long long>(c->id),
                     static_cast<unsigned long long>(cookie), static_cast<unsigned>(events_sz));
  const size_t count = events_sz / 2 < rdmasim::devx::kMaxEventsPerSubscribe + 1
                           ? events_sz / 2
                           : rdmasim::devx::kMaxEventsPerSubscribe + 1;
  for (size_t i = 0; i < count; ++i)
    len += snprintf(request + len, sizeof request - static_cast<size_t>(len), " %u",
                    static_cast<unsigned>(events_num[i]));
  char reply[16];
  int fd = -1;
  if (int err = mlx5standin::command(c->context, request, -1, reply, sizeof reply, &fd))
    return fail(err);
  return 0;
}

MLX5_STANDIN_EXPORT int mlx5dv_devx_subscribe_devx_event_fd(mlx5dv_devx_event_channel* channel,
                                                            int fd, mlx5dv_devx_obj* obj,
                                                            uint16_t event_num) {
  Channel* c = mlx5standin::to_channel(channel);
  if (!mlx5standin::is_mlx5(c->context->device)) return EOPNOTSUPP;
  if (obj) return fail(EINVAL);
  char request[64], reply[16];
  snprintf(request, sizeof request, "%s %llu %u", rdmasim::kSubscribeFdVerb,
           static_cast<unsigned long long>(c->id), static_cast<unsigned>(event_num));
  int passed = -1;
  if (int err = mlx5standin::command(c->context, request, fd, reply, sizeof reply, &passed))
    return fail(err);
  return 0;
}

MLX5_STANDIN_EXPORT ssize_t mlx5dv_devx_get_event(mlx5dv_devx_event_channel* channel,
                                                  mlx5dv_devx_async_event_hdr* event_data,
                                                  size_t event_resp_len) {
  Channel* c = mlx5standin::to_channel(channel);
  rdmasim::ShmChannel& rec = *c->rec;
  // devx_async_event_read(): a lost event is reported first, once.
  if (std::atomic_ref<uint32_t>(rec.overflow).exchange(0, std::memory_order_acq_rel)) {
    errno = EOVERFLOW;
    return -1;
  }
  if (rdmasim::load_acquire(rec.destroyed)) return mlx5standin::destroyed(c->dv.fd);
  for (;;) {
    // Wait as the fd says (blocking or not) for a record, and learn its size without taking it.
    const ssize_t size = recv(c->dv.fd, nullptr, 0, MSG_PEEK | MSG_TRUNC);
    if (size < 0) return -1;  // EAGAIN, EINTR: as the kernel's read
    // End of stream: the simulator shut the channel down (destroyed), or it is gone.
    if (size == 0) {
      if (rdmasim::load_acquire(rec.destroyed)) return mlx5standin::destroyed(c->dv.fd);
      errno = EIO;
      return -1;
    }
    if (static_cast<size_t>(size) > event_resp_len) {
      errno = EINVAL;  // the event stays queued
      return -1;
    }
    pthread_mutex_lock(&c->lock);
    // Another thread may have taken it meanwhile, or the channel been destroyed.
    const ssize_t still = recv(c->dv.fd, nullptr, 0, MSG_PEEK | MSG_TRUNC | MSG_DONTWAIT);
    if (rdmasim::load_acquire(rec.destroyed)) {
      pthread_mutex_unlock(&c->lock);
      return mlx5standin::destroyed(c->dv.fd);
    }
    if (still != size) {
      pthread_mutex_unlock(&c->lock);
      continue;
    }
    // Counted before it is taken: from now on the simulator may queue its subscription again
    // (OMIT_EV_DATA), as the kernel may once list_del_init() has run.
    rdmasim::fetch_add(rec.read, uint64_t{1});
    const ssize_t n = recv(c->dv.fd, event_data, event_resp_len, MSG_DONTWAIT);
    pthread_mutex_unlock(&c->lock);
    if (n < 0) return -1;
    if (static_cast<size_t>(n) < sizeof(event_data->cookie)) {
      errno = EINVAL;  // rdma-core: the cookie always exists
      return -1;
    }
    return n;
  }
}
