// The Prometheus exposition text (format 0.0.4) of rdma-eventd's state: what
// `rdma-eventctl metrics` prints and writes for node_exporter's textfile collector
// (docs/metrics.md). Pure: made from the daemon's status and health replies.
#pragma once

#include <string>
#include <string_view>

#include "schema/health_reply.h"
#include "schema/status_reply.h"

namespace rdma_eventctl {

// Every metric: rdma_eventd_up 1, the daemon's counters, and per port its state, health and
// counters of events.
std::string metrics_text(const rdma_eventd::StatusReply& status,
                         const rdma_eventd::HealthReply& health);

// What is known while the daemon cannot be reached: rdma_eventd_up 0 only.
std::string metrics_text_daemon_down();

// A label value as the exposition format writes it between quotes: \ " and newline escaped.
std::string escape_label_value(std::string_view value);

}  // namespace rdma_eventctl
