/* rdma-eventd-bench-raw COUNT DEVICE...
 *
 * The least a program can do with RDMA async events: open the devices, then only
 * ibv_get_async_event + ibv_ack_async_event until COUNT events have been read, no decoding,
 * no queries, no output. The ceiling for any consumer of the same storm (bench/run.sh).
 * One device: blocking reads. Several: their async fds non-blocking in one epoll set, each
 * drained when ready. Exits 0 after COUNT events. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#define MAX_DEVICES 64

static struct ibv_context* open_named(struct ibv_device** list, const char* name) {
  for (int i = 0; list[i]; ++i)
    if (strcmp(ibv_get_device_name(list[i]), name) == 0) return ibv_open_device(list[i]);
  errno = ENODEV;
  return NULL;
}

int main(int argc, char** argv) {
  if (argc < 3 || argc - 2 > MAX_DEVICES) {
    fprintf(stderr, "usage: %s COUNT DEVICE...\n", argv[0]);
    return 64;
  }
  const unsigned long long count = strtoull(argv[1], NULL, 10);
  const int ndev = argc - 2;
  struct ibv_device** list = ibv_get_device_list(NULL);
  if (!list) {
    perror("ibv_get_device_list");
    return 1;
  }
  struct ibv_context* ctx[MAX_DEVICES];
  for (int i = 0; i < ndev; ++i) {
    ctx[i] = open_named(list, argv[i + 2]);
    if (!ctx[i]) {
      fprintf(stderr, "%s: cannot open %s: %s\n", argv[0], argv[i + 2], strerror(errno));
      return 1;
    }
  }

  unsigned long long got = 0;
  struct ibv_async_event ev;
  if (ndev == 1) {
    while (got < count) {
      if (ibv_get_async_event(ctx[0], &ev) != 0) {
        perror("ibv_get_async_event");
        return 1;
      }
      ibv_ack_async_event(&ev);
      ++got;
    }
  } else {
    const int ep = epoll_create1(EPOLL_CLOEXEC);
    for (int i = 0; i < ndev; ++i) {
      const int fd = ctx[i]->async_fd;
      fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
      struct epoll_event e = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
      epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e);
    }
    struct epoll_event ready[MAX_DEVICES];
    while (got < count) {
      const int n = epoll_wait(ep, ready, MAX_DEVICES, -1);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        perror("epoll_wait");
        return 1;
      }
      for (int i = 0; i < n && got < count; ++i) {
        struct ibv_context* c = ctx[ready[i].data.u32];
        while (got < count && ibv_get_async_event(c, &ev) == 0) {
          ibv_ack_async_event(&ev);
          ++got;
        }
      }
    }
  }
  for (int i = 0; i < ndev; ++i)
    ibv_close_device(ctx[i]);
  ibv_free_device_list(list);
  printf("%llu events\n", got);
  return 0;
}
