// The journal budget (core/journal_budget.h) on the loop: decides for each record whether the
// journal gets it, and hands the summaries of what it did not get to a write function when they
// are due. Due means: at the end of their interval, from one one-shot timer armed only while a
// summary is pending (an idle daemon never wakes up for it); all of them, cut short, when the
// daemon stops (flush) or when a reload changes the budget's configuration.
//
// The gate reads the time only from the Clock it is given, once per timer callback; the daemon
// passes the time it read for its batch of records to admit() and after_batch().
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "core/clock.h"
#include "core/journal_budget.h"
#include "loop/deadline_timer.h"
#include "rdma_eventd/record.h"

namespace rdma_eventd::daemon {

struct JournalBudgetStats {
  uint64_t not_journaled = 0;  // records the budget kept out of the journal
  uint64_t summaries = 0;      // summaries handed to the write function
};

class JournalBudgetGate {
 public:
  // Writes one summary to the journal. It may fill in what the budget does not know (the
  // port's health verdict, `health`).
  using WriteSummary = std::function<void(BudgetSummary&)>;

  JournalBudgetGate(EventLoop& loop, const Clock& clock, JournalBudgetConfig config,
                    WriteSummary write);
  JournalBudgetGate(const JournalBudgetGate&) = delete;
  JournalBudgetGate& operator=(const JournalBudgetGate&) = delete;

  // Whether the journal gets the record. Records come in seq order.
  bool admit(const Record& r, Instant now);
  // After a batch of admit() calls: (re)arms the timer at the budget's next deadline.
  void after_batch(Instant now);

  // A reload. When the configuration changes, every pending summary is written first (its
  // interval cut short at `now`), so that no summary spans two budgets; the buckets start
  // full with the new rates.
  void set_config(const JournalBudgetConfig& config, Instant now);
  // Writes every pending summary, its interval cut short at `now` (the daemon stops, or the
  // journal is switched off).
  void flush(Instant now);

  const JournalBudgetStats& stats() const { return stats_; }
  const JournalBudgetConfig& config() const { return budget_.config(); }
  // When the timer fires next (CLOCK_MONOTONIC µs); none while it is not armed.
  std::optional<int64_t> armed_for() const { return timer_.armed_for(); }

 private:
  void on_timer();
  void write(std::vector<BudgetSummary>& summaries);
  void arm(Instant now);

  JournalBudget budget_;
  const Clock& clock_;
  WriteSummary write_;
  DeadlineTimer timer_;
  JournalBudgetStats stats_;
};

}  // namespace rdma_eventd::daemon
