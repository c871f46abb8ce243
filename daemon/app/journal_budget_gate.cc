#include "app/journal_budget_gate.h"

#include <utility>

namespace rdma_eventd::daemon {

JournalBudgetGate::JournalBudgetGate(EventLoop& loop, const Clock& clock,
                                     JournalBudgetConfig config, WriteSummary write)
    : budget_(config, clock.now().mono_us),
      clock_(clock),
      write_(std::move(write)),
      timer_(loop, [this] { on_timer(); }) {}

bool JournalBudgetGate::admit(const Record& r, Instant now) {
  if (budget_.admit(r, now)) return true;
  ++stats_.not_journaled;
  return false;
}

void JournalBudgetGate::after_batch(Instant now) {
  arm(now);
}

void JournalBudgetGate::set_config(const JournalBudgetConfig& config, Instant now) {
  if (config == budget_.config()) return;
  flush(now);
  budget_.set_config(config, now);
}

void JournalBudgetGate::flush(Instant now) {
  std::vector<BudgetSummary> summaries;
  budget_.take_all(now, summaries);
  write(summaries);
  arm(now);  // nothing is pending any more: the timer goes
}

void JournalBudgetGate::on_timer() {
  const Instant now = clock_.now();
  std::vector<BudgetSummary> summaries;
  budget_.take_due(now, summaries);
  write(summaries);
  arm(now);
}

void JournalBudgetGate::write(std::vector<BudgetSummary>& summaries) {
  for (BudgetSummary& s : summaries) {
    write_(s);
    ++stats_.summaries;
  }
}

// One timer for every port, at the earliest deadline. A batch that leaves the deadline as it
// was does not touch the timer.
void JournalBudgetGate::arm(Instant now) {
  timer_.arm_at(budget_.next_deadline(), now.mono_us);
}

}  // namespace rdma_eventd::daemon
