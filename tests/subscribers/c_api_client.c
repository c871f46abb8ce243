/* A small program on the C API, compiled as C: the subscriber tests run it against the daemon.
 *
 *   c_api_client SOCKET N
 *
 * connects, subscribes to mlx5_0/1, takes a snapshot (blocking calls), then follows the live
 * records the way an event loop would (poll the fd, drain with rdmaev_next) until N records
 * came, pings, and exits. It prints one line per step. */
#define _POSIX_C_SOURCE 200809L

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rdma_eventd/client.h"

static int fail(const char* what, int rc, const struct rdmaev_client* c) {
  printf("%s: %s: %s\n", what, rdmaev_strerror(rc), rdmaev_last_error(c));
  return 1;
}

static const char* or_none(const char* s) {
  return s ? s : "none";
}

static void print_message(const struct rdmaev_message* m) {
  unsigned long long first = 0, last = 0, count = 0;
  uint64_t f, l, n;
  switch (rdmaev_message_kind(m)) {
    case RDMAEV_RECORD:
      printf("record seq=%llu %s %s/%u state=%s severity=%s\n",
             (unsigned long long)rdmaev_message_seq(m), rdmaev_message_event(m),
             rdmaev_message_device(m), rdmaev_message_port(m),
             or_none(rdmaev_message_port_state(m)), rdmaev_message_severity(m));
      break;
    case RDMAEV_SNAPSHOT:
      printf("snapshot seq=%llu %s/%u state=%s\n", (unsigned long long)rdmaev_message_seq(m),
             rdmaev_message_device(m), rdmaev_message_port(m), rdmaev_message_port_state(m));
      break;
    case RDMAEV_REPLY:
      printf("reply op=%s id=%llu seq=%llu\n", rdmaev_message_op(m),
             (unsigned long long)rdmaev_message_request_id(m),
             (unsigned long long)rdmaev_message_seq(m));
      break;
    case RDMAEV_ERROR:
      printf("error op=%s id=%llu %s: %s\n", or_none(rdmaev_message_op(m)),
             (unsigned long long)rdmaev_message_request_id(m), rdmaev_message_error(m),
             rdmaev_message_error_text(m));
      break;
    case RDMAEV_LOST:
      if (rdmaev_message_lost(m, &f, &l, &n) == RDMAEV_OK) {
        first = f;
        last = l;
        count = n;
      }
      printf("lost %llu records, seq %llu-%llu\n", count, first, last);
      break;
    default:
      printf("other: %s\n", rdmaev_message_json(m));
  }
  fflush(stdout);
}

int main(int argc, char** argv) {
  struct rdmaev_client* c = NULL;
  struct rdmaev_filter* f = NULL;
  const struct rdmaev_message* m = NULL;
  uint64_t id = 0;
  int rc, fd, got = 0, wanted;

  if (argc != 3) {
    fprintf(stderr, "usage: c_api_client SOCKET N\n");
    return 2;
  }
  wanted = atoi(argv[2]);

  /* Failures are codes and a message, never output of the library's own. */
  rc = rdmaev_connect("/nonexistent/events.sock", 1000, &c);
  printf("bad path: %s, client %s, %s\n", rdmaev_strerror(rc), c ? "set" : "NULL",
         strstr(rdmaev_last_error(NULL), "No such file or directory") ? "says why"
                                                                      : rdmaev_last_error(NULL));

  rc = rdmaev_connect(argv[1], 5000, &c);
  if (rc != RDMAEV_OK) return fail("connect", rc, NULL);
  printf("hello seq=%llu stream of %zu characters\n", (unsigned long long)rdmaev_hello_seq(c),
         strlen(rdmaev_stream(c)));

  if (rdmaev_filter_new(&f) != RDMAEV_OK) return fail("filter", RDMAEV_E_NOMEM, c);
  printf("unknown event: %s\n", rdmaev_strerror(rdmaev_filter_add_event(f, "port_down")));
  printf("bad port: %s\n", rdmaev_strerror(rdmaev_filter_add_port(f, "mlx5_0")));
  rc = rdmaev_filter_add_port(f, "mlx5_0/1");
  if (rc == RDMAEV_OK) rc = rdmaev_subscribe(c, f, &id);
  rdmaev_filter_delete(f);
  if (rc == RDMAEV_OK) rc = rdmaev_snapshot(c, &id);
  if (rc != RDMAEV_OK) return fail("requests", rc, c);

  /* Blocking style: the replies and the snapshot. */
  do {
    rc = rdmaev_next_wait(c, 5000, &m);
    if (rc != RDMAEV_OK) return fail("next_wait", rc, c);
    print_message(m);
  } while (rdmaev_message_kind(m) != RDMAEV_SNAPSHOT);
  printf("ready\n");
  fflush(stdout);

  /* Event-loop style: poll the fd, then take every complete message. */
  if (rdmaev_get_fd(c, &fd) != RDMAEV_OK) return fail("get_fd", RDMAEV_E_INVAL, c);
  while (got < wanted) {
    struct pollfd p;
    p.fd = fd;
    p.events = POLLIN;
    p.revents = 0;
    if (poll(&p, 1, 20000) <= 0) return fail("poll", RDMAEV_E_TIMEOUT, c);
    for (;;) {
      rc = rdmaev_next(c, &m);
      if (rc == RDMAEV_E_NO_MESSAGE) break; /* a partial line: normal */
      if (rc != RDMAEV_OK) return fail("next", rc, c);
      print_message(m);
      if (rdmaev_message_kind(m) == RDMAEV_RECORD) ++got;
    }
  }

  rc = rdmaev_ping(c, &id);
  if (rc != RDMAEV_OK) return fail("ping", rc, c);
  rc = rdmaev_next_wait(c, 5000, &m);
  if (rc != RDMAEV_OK) return fail("next_wait", rc, c);
  print_message(m);
  printf("nothing more: %s\n", rdmaev_strerror(rdmaev_next_wait(c, 50, &m)));
  rdmaev_close(c);
  return 0;
}
