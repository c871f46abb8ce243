/* An RDMA application that reports the affiliated async events it reads with the waiting
 * rdmaev_report() (docs/protocol.md, "report"), so that each outcome is printed in order:
 * ibv_get_async_event(), rdmaev_report(), then ibv_ack_async_event(). Linked against
 * libibverbs (run on the simulator's stand-in) and librdma-eventd.
 *
 *   report_app SOCKET DEVICE COUNT
 *
 * Prints "ready pid=PID qp=ADDRESS cq=ADDRESS" once its context is open: ADDRESS is where its
 * QP and CQ live, the element a test gives `rdma-sim event ... --element` so that the event
 * carries them, as the kernel's carry the application's own objects. Then, for each of COUNT
 * events: "reported TYPE seq=SEQ", or "refused TYPE CODE: WHY". Exits 0 after COUNT events. */
#include <infiniband/verbs.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "open_device.h"
#include "rdma_eventd/report_verbs.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: report_app SOCKET DEVICE COUNT\n");
    return 2;
  }
  const char* socket_path = argv[1];
  int count = atoi(argv[3]);
  struct ibv_context* ctx = open_device_named(argv[2]);
  if (!ctx) return 1;
  /* Stand-ins for the objects the application created (the simulator has no verbs objects). */
  static struct ibv_qp qp;
  static struct ibv_cq cq;
  qp.context = ctx;
  qp.qp_num = 4660;
  cq.context = ctx;
  cq.handle = 77;
  printf("ready pid=%d qp=%" PRIuPTR " cq=%" PRIuPTR "\n", (int)getpid(), (uintptr_t)&qp,
         (uintptr_t)&cq);
  fflush(stdout);

  for (int i = 0; i < count; ++i) {
    struct ibv_async_event ev;
    if (ibv_get_async_event(ctx, &ev) != 0) {
      perror("ibv_get_async_event");
      return 1;
    }
    /* The three lines an application adds (docs/protocol.md) are these, with its socket. */
    struct rdmaev_event_report r = RDMAEV_EVENT_REPORT_INIT;
    rdmaev_report_from_verbs(ctx, &ev, "job 17 rank 3", &r);
    uint64_t seq = 0;
    const int rc = rdmaev_report(socket_path, &r, 5000, &seq);
    if (rc == RDMAEV_OK) {
      printf("reported %d seq=%" PRIu64 "\n", (int)ev.event_type, seq);
    } else {
      printf("refused %d %s: %s\n", (int)ev.event_type, rdmaev_strerror(rc),
             rdmaev_last_error(NULL));
    }
    fflush(stdout);
    ibv_ack_async_event(&ev);
  }
  ibv_close_device(ctx);
  return 0;
}
