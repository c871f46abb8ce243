/* Runs the C example of docs/protocol.md ("report") as an application would: opens DEVICE, then
 * hands its context to the example's function (report_example_run(), made by
 * report_example_extract.sh from the page), which reads the async events and reports them to the
 * daemon at the default socket. It runs until it is stopped.
 *
 *   report_example DEVICE
 *
 * Prints "ready pid=PID qp=ADDRESS" once its context is open: ADDRESS is where its QP lives, the
 * element a test gives `rdma-sim event ... --element` so that the event carries it. */
#include <infiniband/verbs.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "open_device.h"

void report_example_run(struct ibv_context* ctx);

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: report_example DEVICE\n");
    return 2;
  }
  struct ibv_context* ctx = open_device_named(argv[1]);
  if (!ctx) return 1;
  /* A stand-in for a QP the application created (the simulator has no verbs objects). */
  static struct ibv_qp qp;
  qp.context = ctx;
  qp.qp_num = 4660;
  printf("ready pid=%d qp=%" PRIuPTR "\n", (int)getpid(), (uintptr_t)&qp);
  fflush(stdout);
  report_example_run(ctx);
  ibv_close_device(ctx);
  return 0;
}
