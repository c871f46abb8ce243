/* The test applications' (report_app.c, report_example_main.c) first step, as an application
 * takes it: the context of the RDMA device named NAME, or NULL, said on stderr. */
#ifndef RDMA_EVENTD_TESTS_OPEN_DEVICE_H
#define RDMA_EVENTD_TESTS_OPEN_DEVICE_H

#include <infiniband/verbs.h>
#include <stdio.h>
#include <string.h>

static inline struct ibv_context* open_device_named(const char* name) {
  int n = 0;
  struct ibv_device** list = ibv_get_device_list(&n);
  struct ibv_context* ctx = NULL;
  for (int i = 0; list && i < n && !ctx; ++i) {
    if (strcmp(ibv_get_device_name(list[i]), name) == 0) ctx = ibv_open_device(list[i]);
  }
  if (list) ibv_free_device_list(list);
  if (!ctx) fprintf(stderr, "cannot open %s\n", name);
  return ctx;
}

#endif
