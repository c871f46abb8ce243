/* Reporting an affiliated async event from the struct ibv_async_event the application just
 * read (docs/protocol.md, "report"). For programs that use libibverbs: this header includes
 * <infiniband/verbs.h>; librdma-eventd itself does not link libibverbs.
 *
 *   struct ibv_async_event ev;
 *   if (ibv_get_async_event(ctx, &ev) == 0) {
 *     struct rdmaev_event_report r;
 *     rdmaev_report_from_verbs(ctx, &ev, NULL, &r);  // plain values: still valid after the ack
 *     ibv_ack_async_event(&ev);
 *     rdmaev_reporter_send(reporter, &r, NULL);      // never waits (client.h)
 *   }
 *
 * rdmaev_report_verbs() waits for the daemon's reply (RDMAEV_REPORT_TIMEOUT_MS at most): for
 * tools, not for an async-event loop, whose ack (and every destroy waiting on it) it holds. */
#ifndef RDMA_EVENTD_REPORT_VERBS_H
#define RDMA_EVENTD_REPORT_VERBS_H

#include <infiniband/verbs.h>
#include <stddef.h>

#include "rdma_eventd/client.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How long rdmaev_report_verbs() waits for the daemon at most, in all. */
#define RDMAEV_REPORT_TIMEOUT_MS 200

/* Fills *out from the event, its size included: its type, the device's name, the port (port
 * events) and the QP number or the CQ/SRQ handle or WQ number (the object the event is about).
 * The port stays 0: no reportable event is a port event, and the QP's port is the application's
 * to add. */
static inline void rdmaev_report_from_verbs(struct ibv_context* context,
                                            const struct ibv_async_event* event, const char* detail,
                                            struct rdmaev_event_report* out) {
  out->size = (uint32_t)sizeof(*out);
  out->event_type = (int)event->event_type;
  out->device = ibv_get_device_name(context->device);
  out->port = 0;
  out->object_id = -1;
  out->detail = detail;
  switch (event->event_type) {
    case IBV_EVENT_QP_FATAL:
    case IBV_EVENT_QP_REQ_ERR:
    case IBV_EVENT_QP_ACCESS_ERR:
    case IBV_EVENT_PATH_MIG_ERR:
      if (event->element.qp) out->object_id = event->element.qp->qp_num;
      break;
    case IBV_EVENT_CQ_ERR:
      if (event->element.cq) out->object_id = event->element.cq->handle;
      break;
    case IBV_EVENT_SRQ_ERR:
      if (event->element.srq) out->object_id = event->element.srq->handle;
      break;
    case IBV_EVENT_WQ_FATAL:
      if (event->element.wq) out->object_id = event->element.wq->wq_num;
      break;
    default:
      break;
  }
}

/* Reports the event to the daemon at the default socket, waiting RDMAEV_REPORT_TIMEOUT_MS at
 * most: rdmaev_report()'s return codes (RDMAEV_OK, RDMAEV_E_CONNECT when the daemon is not
 * running, RDMAEV_E_REFUSED for a type the daemon does not take...). */
static inline int rdmaev_report_verbs(struct ibv_context* context,
                                      const struct ibv_async_event* event, const char* detail) {
  struct rdmaev_event_report r = RDMAEV_EVENT_REPORT_INIT;
  if (!context || !event) return RDMAEV_E_INVAL;
  rdmaev_report_from_verbs(context, event, detail, &r);
  return rdmaev_report(NULL, &r, RDMAEV_REPORT_TIMEOUT_MS, NULL);
}

/* Reports the event through a reporter (client.h), never waiting: rdmaev_reporter_send()'s
 * return codes. */
static inline int rdmaev_reporter_send_verbs(struct rdmaev_reporter* reporter,
                                             struct ibv_context* context,
                                             const struct ibv_async_event* event,
                                             const char* detail, uint64_t* id) {
  struct rdmaev_event_report r;
  if (!context || !event) return RDMAEV_E_INVAL;
  rdmaev_report_from_verbs(context, event, detail, &r);
  return rdmaev_reporter_send(reporter, &r, id);
}

#ifdef __cplusplus
}
#endif

#endif /* RDMA_EVENTD_REPORT_VERBS_H */
