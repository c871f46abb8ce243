/* The C API of the rdma-eventd subscriber client, for C programs and for other languages'
 * bindings; rdma_eventd/client.hpp wraps it for C++, header-only. It follows librpma's
 * completion queue: one pollable fd (rdmaev_get_fd), a non-blocking rdmaev_next() that may
 * return RDMAEV_E_NO_MESSAGE (spurious wakeups are normal), and a blocking rdmaev_wait() /
 * rdmaev_next_wait() with a timeout.
 *
 *   struct rdmaev_client *c;
 *   if (rdmaev_connect(NULL, 5000, &c) != RDMAEV_OK) { puts(rdmaev_last_error(NULL)); ... }
 *   const struct rdmaev_message *m;
 *   while (rdmaev_next_wait(c, 1000, &m) == RDMAEV_OK)
 *     puts(rdmaev_message_json(m));
 *   rdmaev_close(c);
 *
 * Every function returns RDMAEV_OK (0) or a negative RDMAEV_E_* code; rdmaev_last_error() says
 * what went wrong. Nothing is printed. A message returned by rdmaev_next() / rdmaev_next_wait()
 * stays valid until the next call of either on the same client, or rdmaev_close(). Strings
 * returned by accessors live as long as their message (or client). A client is not thread-safe.
 * Link with -lrdma-eventd (pkg-config: rdma-eventd). The protocol: docs/protocol.md. */
#ifndef RDMA_EVENTD_CLIENT_H
#define RDMA_EVENTD_CLIENT_H

#include <stdint.h>

#include "rdma_eventd/export.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RDMAEV_DEFAULT_SOCKET "/run/rdma-eventd/events.sock"

enum rdmaev_status {
  RDMAEV_OK = 0,
  RDMAEV_E_NO_MESSAGE = -1, /* nothing complete to return now: not an error */
  RDMAEV_E_TIMEOUT = -2,
  RDMAEV_E_INVAL = -3,    /* a bad argument */
  RDMAEV_E_CONNECT = -4,  /* cannot connect to the socket */
  RDMAEV_E_IO = -5,       /* reading or writing the socket failed */
  RDMAEV_E_CLOSED = -6,   /* the daemon closed the connection */
  RDMAEV_E_PROTOCOL = -7, /* the daemon sent something this library does not understand */
  RDMAEV_E_REFUSED = -8,  /* the daemon answered with an error line */
  RDMAEV_E_NOMEM = -9,
  RDMAEV_E_FULL = -10 /* a reporter's queue is full: the report was not sent */
};

/* What a message is. */
enum rdmaev_kind {
  RDMAEV_RECORD = 0,   /* a record: an event, exactly as the journal's RDMA_RECORD */
  RDMAEV_SNAPSHOT = 1, /* a snapshot record: one port's current state */
  RDMAEV_HELLO = 2,
  RDMAEV_REPLY = 3, /* the reply to a request */
  RDMAEV_ERROR = 4, /* a request was refused */
  RDMAEV_LOST = 5   /* records were dropped because this client read too slowly */
};

struct rdmaev_client;
struct rdmaev_filter;
struct rdmaev_message;

/* "RDMAEV_E_TIMEOUT" and friends. */
RDMA_EVENTD_EXPORT const char* rdmaev_strerror(int status);

/* Connects to the socket (NULL: RDMAEV_DEFAULT_SOCKET) and reads the daemon's hello, waiting up
 * to timeout_ms (negative: no limit). On failure *client is NULL and rdmaev_last_error(NULL)
 * says why (per thread). */
RDMA_EVENTD_EXPORT int rdmaev_connect(const char* path, int timeout_ms,
                                      struct rdmaev_client** client);
RDMA_EVENTD_EXPORT void rdmaev_close(struct rdmaev_client* client);
/* The client's last error; with NULL, this thread's last rdmaev_connect() error. */
RDMA_EVENTD_EXPORT const char* rdmaev_last_error(const struct rdmaev_client* client);

/* The fd to poll for POLLIN. */
RDMA_EVENTD_EXPORT int rdmaev_get_fd(const struct rdmaev_client* client, int* fd);
/* The next message without blocking: RDMAEV_E_NO_MESSAGE when none is complete yet. */
RDMA_EVENTD_EXPORT int rdmaev_next(struct rdmaev_client* client, const struct rdmaev_message** msg);
/* Blocks until rdmaev_next() has something to return, or timeout_ms passes (negative: no
 * limit): RDMAEV_OK, RDMAEV_E_TIMEOUT, RDMAEV_E_CLOSED. */
RDMA_EVENTD_EXPORT int rdmaev_wait(struct rdmaev_client* client, int timeout_ms);
/* The next message, waiting up to timeout_ms for it. */
RDMA_EVENTD_EXPORT int rdmaev_next_wait(struct rdmaev_client* client, int timeout_ms,
                                        const struct rdmaev_message** msg);

/* The hello: the daemon's stream id, the seq when this client connected, the daemon's version. */
RDMA_EVENTD_EXPORT const char* rdmaev_stream(const struct rdmaev_client* client);
RDMA_EVENTD_EXPORT uint64_t rdmaev_hello_seq(const struct rdmaev_client* client);
RDMA_EVENTD_EXPORT const char* rdmaev_daemon_version(const struct rdmaev_client* client);

/* Filters for rdmaev_subscribe(): each add_* call widens its list; the lists combine with AND.
 * The adders check their argument (RDMAEV_E_INVAL for an unknown event name, a bad DEV/PORT). */
RDMA_EVENTD_EXPORT int rdmaev_filter_new(struct rdmaev_filter** filter);
RDMA_EVENTD_EXPORT void rdmaev_filter_delete(struct rdmaev_filter* filter);
RDMA_EVENTD_EXPORT int rdmaev_filter_add_event(struct rdmaev_filter* filter, const char* name);
RDMA_EVENTD_EXPORT int rdmaev_filter_add_device(struct rdmaev_filter* filter, const char* pattern);
RDMA_EVENTD_EXPORT int rdmaev_filter_add_port(struct rdmaev_filter* filter, const char* dev_port);
RDMA_EVENTD_EXPORT int rdmaev_filter_set_min_severity(struct rdmaev_filter* filter,
                                                      const char* severity);

/* Requests. They never block. *id (when not NULL) receives the id echoed in the reply. */
RDMA_EVENTD_EXPORT int rdmaev_subscribe(struct rdmaev_client* client,
                                        const struct rdmaev_filter* filter, uint64_t* id);
RDMA_EVENTD_EXPORT int rdmaev_snapshot(struct rdmaev_client* client, uint64_t* id);
/* stream NULL or "": the daemon's current stream. */
RDMA_EVENTD_EXPORT int rdmaev_since(struct rdmaev_client* client, const char* stream, uint64_t seq,
                                    uint64_t* id);
RDMA_EVENTD_EXPORT int rdmaev_status(struct rdmaev_client* client, uint64_t* id);
RDMA_EVENTD_EXPORT int rdmaev_ping(struct rdmaev_client* client, uint64_t* id);

/* Messages. */
RDMA_EVENTD_EXPORT int rdmaev_message_kind(const struct rdmaev_message* msg);
/* The line as received (one JSON object, no newline). */
RDMA_EVENTD_EXPORT const char* rdmaev_message_json(const struct rdmaev_message* msg);
/* Records and snapshot records: seq, event name ("snapshot" for snapshot records), severity,
 * device, port, and the port's state name ("active"...; NULL when the record has no port
 * block). Replies: seq is the reply's seq. NULL / 0 where a message has no such field. */
RDMA_EVENTD_EXPORT uint64_t rdmaev_message_seq(const struct rdmaev_message* msg);
RDMA_EVENTD_EXPORT const char* rdmaev_message_event(const struct rdmaev_message* msg);
RDMA_EVENTD_EXPORT const char* rdmaev_message_severity(const struct rdmaev_message* msg);
RDMA_EVENTD_EXPORT const char* rdmaev_message_device(const struct rdmaev_message* msg);
RDMA_EVENTD_EXPORT uint32_t rdmaev_message_port(const struct rdmaev_message* msg);
RDMA_EVENTD_EXPORT const char* rdmaev_message_port_state(const struct rdmaev_message* msg);
/* RDMAEV_LOST: the seq range and how many records of it were dropped (RDMAEV_E_INVAL for
 * another kind). */
RDMA_EVENTD_EXPORT int rdmaev_message_lost(const struct rdmaev_message* msg, uint64_t* first_seq,
                                           uint64_t* last_seq, uint64_t* records);
/* Replies and errors: the request's id (0 when it had none), its op, and for errors the code
 * ("bad_filter") and the message. */
RDMA_EVENTD_EXPORT uint64_t rdmaev_message_request_id(const struct rdmaev_message* msg);
RDMA_EVENTD_EXPORT const char* rdmaev_message_op(const struct rdmaev_message* msg);
RDMA_EVENTD_EXPORT const char* rdmaev_message_error(const struct rdmaev_message* msg);
RDMA_EVENTD_EXPORT const char* rdmaev_message_error_text(const struct rdmaev_message* msg);

/* Application reports (docs/protocol.md, "report"): an affiliated async event the application
 * read with ibv_get_async_event(), which the daemon cannot see. rdmaev_report_verbs() in
 * rdma_eventd/report_verbs.h fills this from the struct ibv_async_event itself.
 *
 * The struct carries its size, so that later versions of the library can add members at its end
 * without breaking programs built against this header: start from RDMAEV_EVENT_REPORT_INIT
 * (size = sizeof, no port, no object, no detail) and set the members you have. The library reads
 * only the members that fit in size, and ignores any it does not know. */
struct rdmaev_event_report {
  uint32_t size;      /* sizeof(struct rdmaev_event_report), as the caller was built */
  int event_type;     /* enum ibv_event_type: IBV_EVENT_QP_FATAL... (docs/protocol.md) */
  const char* device; /* ibv_get_device_name(context->device) */
  uint32_t port;      /* 0: none */
  int64_t object_id;  /* the QP number, or the CQ/SRQ/WQ handle; -1: none */
  const char* detail; /* NULL or "": none; at most 256 bytes, no control characters */
};
#define RDMAEV_EVENT_REPORT_INIT \
  { (uint32_t)sizeof(struct rdmaev_event_report), 0, 0, 0, -1, 0 }

/* Sends the report over a connection of its own, opened and closed within the call, and waits
 * at most timeout_ms in all for the daemon's reply (negative: no limit; do not). For scripts
 * and tools: it waits, so an application's async-event loop uses a reporter (below) instead.
 * A daemon that is not running is RDMAEV_E_CONNECT at once; a refusal (report_denied,
 * rate_limited, bad_report, bad_request) is RDMAEV_E_REFUSED. A report whose size does not
 * reach its detail member (the members above, all of them) is RDMAEV_E_INVAL. *seq (when not
 * NULL) receives the app_report record's seq. On failure rdmaev_last_error(NULL) says why (per
 * thread). path NULL: RDMAEV_DEFAULT_SOCKET. */
RDMA_EVENTD_EXPORT int rdmaev_report(const char* path, const struct rdmaev_event_report* report,
                                     int timeout_ms, uint64_t* seq);

/* A reporter: reports that never wait, for an application's async-event loop.
 * rdmaev_report() waits for the daemon's reply; a reporter sends and returns at once, and the
 * replies, for those who want them, come through an fd to poll.
 *
 *   struct rdmaev_reporter *r;
 *   rdmaev_reporter_open(NULL, &r);         (once; RDMAEV_E_CONNECT: no daemon running)
 *   rdmaev_reporter_send(r, &report, &id);  (per event, after ibv_ack_async_event)
 *   rdmaev_reporter_close(r);
 *
 * No call blocks, and each does a bounded amount of work (it reads at most 2 KiB of what the
 * daemon sent). A reporter connects to the daemon's report socket, which sends it no records
 * (docs/protocol.md, "The report socket"). rdmaev_reporter_send() writes the report to the
 * socket, or, when the socket takes no more (the daemon is stopped or busy), keeps it in a
 * queue of RDMAEV_REPORTER_QUEUE_BYTES that later calls write out; a full queue is
 * RDMAEV_E_FULL. A report written to the socket is published by the daemon when it reads it,
 * also after the reporter is closed or the application has exited; a report still in the
 * queue when the reporter is closed is dropped. Replies: rdmaev_reporter_next_reply(). Reading
 * them is optional: the reporter keeps the last RDMAEV_REPORTER_KEPT_REPLIES replies not yet
 * read (a caller that reads each as it comes loses none). A reporter is not thread-safe: one
 * per thread that reports (the async-event thread).
 * rdmaev_reporter_last_error() says why a call failed; for rdmaev_reporter_open(),
 * rdmaev_last_error(NULL) does (per thread). Nothing is printed, no signal is raised. */
struct rdmaev_reporter;

#define RDMAEV_REPORTER_QUEUE_BYTES 65536
#define RDMAEV_REPORTER_KEPT_REPLIES 64

/* Connects to the report socket of the socket `path` names (NULL: RDMAEV_DEFAULT_SOCKET), at
 * its path with ".report", without waiting: a daemon listening, even stopped, takes the
 * connection at once. Where nobody listens there (a daemon without a report socket), it
 * connects to `path` itself, and skips the records that daemon sends. Nobody listening (or a
 * full backlog) is RDMAEV_E_CONNECT. On failure *reporter is NULL. A connection the daemon
 * refuses is RDMAEV_E_REFUSED with id 0 from rdmaev_reporter_next_reply(). */
RDMA_EVENTD_EXPORT int rdmaev_reporter_open(const char* path, struct rdmaev_reporter** reporter);
/* Writes what the socket takes of the queue, without waiting, and closes. NULL: nothing. */
RDMA_EVENTD_EXPORT void rdmaev_reporter_close(struct rdmaev_reporter* reporter);
RDMA_EVENTD_EXPORT const char* rdmaev_reporter_last_error(const struct rdmaev_reporter* reporter);
/* The fd to poll and the events to poll it for (POLLIN, and POLLOUT while reports are queued;
 * events may be NULL). Ask again after each call: the events change, the fd does not. When
 * poll says the fd is ready, call rdmaev_reporter_next_reply(): it also writes the queue. */
RDMA_EVENTD_EXPORT int rdmaev_reporter_get_fd(const struct rdmaev_reporter* reporter, int* fd,
                                              short* events);
/* Sends the report, never waiting: RDMAEV_OK (written, or queued), RDMAEV_E_FULL,
 * RDMAEV_E_CLOSED (the daemon closed the connection, as when it restarts: close the reporter
 * and open a new one), RDMAEV_E_INVAL. *id (when not NULL) receives the id its reply carries. */
RDMA_EVENTD_EXPORT int rdmaev_reporter_send(struct rdmaev_reporter* reporter,
                                            const struct rdmaev_event_report* report, uint64_t* id);
/* The next reply, without waiting: RDMAEV_OK (*id: the report's id, *seq: its app_report
 * record's seq), RDMAEV_E_REFUSED (*id: the report's id, 0 when the daemon refused the
 * connection itself; rdmaev_reporter_last_error() gives the daemon's code and message),
 * RDMAEV_E_NO_MESSAGE (none yet: spurious wakeups are normal), RDMAEV_E_CLOSED (none left and
 * the daemon closed the connection). id and seq may be NULL. Replies come in the order of the
 * reports. */
RDMA_EVENTD_EXPORT int rdmaev_reporter_next_reply(struct rdmaev_reporter* reporter, uint64_t* id,
                                                  uint64_t* seq);

#ifdef __cplusplus
}
#endif

#endif /* RDMA_EVENTD_CLIENT_H */
