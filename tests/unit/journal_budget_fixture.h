// What the journal budget's unit tests share (journal_budget_test.cc, journal_budget_gate_test.cc).
#pragma once

#include "core/journal_budget.h"

namespace rdma_eventd::daemon {

// Small numbers, so that the counts are easy to follow: 5 records at once, then 1 a second,
// per port; 100 and 100 for the host; a summary every 10 s.
inline JournalBudgetConfig small_budget() {
  return {.port_rate = 1,
          .port_burst = 5,
          .host_rate = 100,
          .host_burst = 100,
          .summary_interval_s = 10};
}

}  // namespace rdma_eventd::daemon
