#include "core/journal_budget.h"

#include <algorithm>
#include <iterator>

namespace rdma_eventd::daemon {

JournalBudget::JournalBudget(JournalBudgetConfig config, int64_t now_mono_us)
    : config_(config),
      host_bucket_(config.host_rate, config.host_burst, now_mono_us),
      // The host entry's own bucket is never used: its records take only host_bucket_.
      host_(TokenBucket(config.host_rate, config.host_burst, now_mono_us)) {}

int64_t JournalBudget::interval_us() const {
  return int64_t{config_.summary_interval_s} * kMicrosPerSecond;
}

bool JournalBudget::admit(const Record& r, Instant now) {
  // A port_health record has no port block but is about its port: it belongs to that port's
  // account.
  const bool verdict = r.event == EventKind::kPortHealth;
  const bool port_scoped = r.port_info.has_value() || verdict;
  Entry& e = port_scoped ? port_entry(r.device, r.port, now.mono_us) : host_;
  close_if_due(e, now.mono_us);
  if (!config_.enabled) return true;
  if (verdict) {
    // Verdicts are few by construction (a flapping port stays flapping until it is quiet) and
    // they are what an operator reads first in a storm: always journaled, taking no token,
    // and counted among the journaled records between the refused ones of their port.
    if (e.pending) ++e.journaled_since_refused;
    e.last_refused = false;
    return true;
  }
  // Both buckets must have a token before either gives one: a record refused by the host's
  // bucket does not use up its port's budget, nor the other way round.
  const bool port_ok = !port_scoped || e.bucket.has_token(now.mono_us);
  const bool host_ok = port_ok && host_bucket_.has_token(now.mono_us);
  if (port_ok && host_ok) {
    if (port_scoped) e.bucket.take_token();
    host_bucket_.take_token();
    if (e.pending) ++e.journaled_since_refused;
    e.last_refused = false;
    return true;
  }
  refuse(e, r, now, port_ok);
  return false;
}

void JournalBudget::refuse(Entry& e, const Record& r, Instant now, bool by_host) {
  if (!e.pending) {
    // Assigned rather than emplace()d: clang's is_constructible on a nested aggregate with
    // default member initializers is false inside its enclosing class.
    e.pending = Pending{};
    BudgetSummary& s = e.pending->summary;
    s.device = r.port_info ? r.device : "";
    s.port = r.port_info ? r.port : 0;
    s.start = now;
    s.first_seq = r.seq;
    e.journaled_since_refused = 0;
    e.last_refused = false;
  }
  Pending& p = *e.pending;
  BudgetSummary& s = p.summary;
  if (r.port_info) s.node_guid = r.node_guid;
  s.stream = r.stream;
  s.journaled_between += e.journaled_since_refused;
  e.journaled_since_refused = 0;
  ++s.not_journaled;
  s.last_seq = r.seq;
  ++(by_host ? s.over_host_budget : s.over_port_budget);
  if (e.last_refused) {  // the run goes on
    if (p.run_listed) {
      s.ranges.back().last = r.seq;
      ++s.ranges.back().count;
    }
  } else if (s.ranges.size() < BudgetSummary::kMaxRanges) {
    s.ranges.push_back({r.seq, r.seq, 1});
    p.run_listed = true;
  } else {
    s.ranges_complete = false;
    p.run_listed = false;
  }
  e.last_refused = true;
}

void JournalBudget::close_if_due(Entry& e, int64_t now_us) {
  if (e.pending && now_us >= e.pending->summary.start.mono_us + interval_us()) {
    close(e, e.pending->summary.start.mono_us + interval_us());
  }
}

void JournalBudget::close(Entry& e, int64_t end_us) {
  BudgetSummary& s = e.pending->summary;
  s.duration_us = std::max<int64_t>(end_us - s.start.mono_us, 0);
  closed_.push_back(std::move(s));
  e.pending.reset();
  e.last_refused = false;
  e.journaled_since_refused = 0;
}

void JournalBudget::take_due(Instant now, std::vector<BudgetSummary>& out) {
  close_if_due(host_, now.mono_us);
  for (auto& [device, ports] : ports_) {
    for (auto& [port, e] : ports)
      close_if_due(e, now.mono_us);
  }
  std::stable_sort(closed_.begin(), closed_.end(),
                   [](const auto& a, const auto& b) { return a.start.mono_us < b.start.mono_us; });
  std::move(closed_.begin(), closed_.end(), std::back_inserter(out));
  closed_.clear();
  prune(now.mono_us);
}

void JournalBudget::take_all(Instant now, std::vector<BudgetSummary>& out) {
  take_due(now, out);
  const size_t first = out.size();
  if (host_.pending) close(host_, now.mono_us);
  for (auto& [device, ports] : ports_) {
    for (auto& [port, e] : ports) {
      if (e.pending) close(e, now.mono_us);
    }
  }
  std::move(closed_.begin(), closed_.end(), std::back_inserter(out));
  closed_.clear();
  std::stable_sort(out.begin() + static_cast<ptrdiff_t>(first), out.end(),
                   [](const auto& a, const auto& b) { return a.start.mono_us < b.start.mono_us; });
}

std::optional<int64_t> JournalBudget::next_deadline() const {
  std::optional<int64_t> deadline;
  auto consider = [&](int64_t t) {
    if (!deadline || t < *deadline) deadline = t;
  };
  for (const BudgetSummary& s : closed_)
    consider(s.start.mono_us + s.duration_us);
  if (host_.pending) consider(host_.pending->summary.start.mono_us + interval_us());
  for (const auto& [device, ports] : ports_) {
    for (const auto& [port, e] : ports) {
      if (e.pending) consider(e.pending->summary.start.mono_us + interval_us());
    }
  }
  return deadline;
}

void JournalBudget::set_config(JournalBudgetConfig config, Instant now) {
  config_ = config;
  host_bucket_ = TokenBucket(config_.host_rate, config_.host_burst, now.mono_us);
  for (auto& [device, ports] : ports_) {
    for (auto& [port, e] : ports)
      e.bucket = TokenBucket(config_.port_rate, config_.port_burst, now.mono_us);
  }
}

size_t JournalBudget::ports_tracked() const {
  size_t n = 0;
  for (const auto& [device, ports] : ports_)
    n += ports.size();
  return n;
}

JournalBudget::Entry& JournalBudget::port_entry(std::string_view device, uint32_t port,
                                                int64_t now_us) {
  if (auto it = ports_.find(device); it != ports_.end()) {
    if (auto pit = it->second.find(port); pit != it->second.end()) return pit->second;
  }
  prune(now_us);
  auto it = ports_.find(device);
  if (it == ports_.end())
    it = ports_.emplace(std::string(device), std::map<uint32_t, Entry>{}).first;
  return it->second.emplace(port, Entry(TokenBucket(config_.port_rate, config_.port_burst, now_us)))
      .first->second;
}

// A port whose bucket is full again and that owes no summary is just like one never seen: it
// can go. Only done past the bound, so a host's ports are normally kept for good.
void JournalBudget::prune(int64_t now_us) {
  if (ports_tracked() < kMaxPorts) return;
  for (auto& [device, ports] : ports_) {
    std::erase_if(ports,
                  [&](auto& e) { return !e.second.pending && e.second.bucket.full(now_us); });
  }
  std::erase_if(ports_, [](const auto& e) { return e.second.empty(); });
}

}  // namespace rdma_eventd::daemon
