#include "core/link_quality.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <utility>

#include "core/counter_width.h"
#include "rdma_eventd/internal/enum_names.h"
#include "rdma_eventd/internal/pma_counter_widths.h"

namespace rdma_eventd::daemon {
namespace {

// In LinkFault's order: on the wire and in the state document.
constexpr std::array<std::string_view, kLinkFaultCount> kLinkFaultNames = {
    "bit_errors", "link_recoveries", "transport_errors"};

uint64_t add_saturating(uint64_t a, uint64_t b) {
  return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

constexpr size_t index_of(LinkFault f) {
  return static_cast<size_t>(f);
}

// ber * bits is a product of decimal figures (1e-15 * 400e9 * 7500): it may land a hair below
// the integer it means (2.9999999999999996 for 3), which would make the 3rd error of UFM's
// "more than 3" bad. A figure within a billionth of an integer is that integer.
double allowance(double ber, double bits) {
  const double allowed = ber * bits;
  const double nearest = std::round(allowed);
  return std::abs(allowed - nearest) <= 1e-9 * std::max(1.0, nearest) ? nearest : allowed;
}

uint32_t longest_ber_window_s(const LinkQualityConfig& config) {
  uint32_t longest = 0;
  for (const BerWindow& w : config.symbol_error) {
    longest = std::max(longest, w.window_s);
  }
  return longest;
}

uint32_t longest_window_s(const LinkQualityConfig& config) {
  uint32_t longest = std::max(config.link_error_recovery.window_s, longest_ber_window_s(config));
  for (const GrowthRule& r : config.transport) {
    longest = std::max(longest, r.window_s);
  }
  return longest;
}

// Whether a rule reads `name`: only those counters keep their growth over time.
bool read_by_a_rule(const LinkQualityConfig& config, std::string_view name) {
  if ((name == kSymbolError || name == kFecUncorrectable) && !config.symbol_error.empty())
    return true;
  if (name == config.link_error_recovery.counter) return true;
  return std::any_of(config.transport.begin(), config.transport.end(),
                     [&](const GrowthRule& r) { return r.counter == name; });
}

}  // namespace

// The data and packet counters are read as the extended (64-bit) PMA attributes and are left to
// the default.
uint8_t counter_bits(std::string_view name) {
  for (const internal::CounterWidth& w : internal::kPmaErrorCounterWidths) {
    if (w.name == name) return w.bits;
  }
  if (name == internal::kPortXmitWaitWidth.name) return internal::kPortXmitWaitWidth.bits;
  return 64;
}

std::string_view link_fault_name(LinkFault f) {
  return internal::enum_name(kLinkFaultNames, f, "unknown");
}

std::optional<LinkFault> link_fault_from_name(std::string_view name) {
  return internal::enum_from_name<LinkFault>(kLinkFaultNames, name);
}

void PortLinkQuality::sample(const LinkQualityConfig& config, const PortSample& s, Instant now,
                             std::vector<LinkQualityChange>& out) {
  if (!sampled_) {
    sampled_ = true;
    since_ = now;
    first_sample_ = now;
  }
  changed_ = s.downs_seen > 0;
  const size_t changes_before = out.size();
  // The first sample of a link that came up: what its rule counters gathered while it was down
  // or training is no error of the link that is up now (a reseat, a peer's reboot), so it is a
  // baseline for them, as the first read is.
  bit_counter_ = s.ethernet ? kFecUncorrectable : kSymbolError;
  const bool came_up = s.link_up && (!last_link_up_ || s.went_down);
  if (!s.link_up && last_link_up_) downs_.emplace_back(now.mono_us, INT64_MAX);
  if (came_up && !downs_.empty() && downs_.back().second == INT64_MAX)
    downs_.back().second = now.mono_us;
  if (downs_.size() > kMaxSteps) {
    // The oldest two as one: more time down than there was, never less (an allowance too
    // large by the time between them, rather than a link called bad for time it was down).
    downs_[1].first = downs_[0].first;
    downs_.pop_front();
  }
  last_link_up_ = s.link_up;
  if (came_up) {
    for (auto& [name, k] : counters_) {
      if (read_by_a_rule(config, name)) k.has_baseline = false;
    }
  }
  for (auto& [name, k] : counters_)
    k.last_growth.reset();
  std::map<std::string, Read> reads;
  for (const CounterValue& c : s.counters) {
    const bool keep_steps = read_by_a_rule(config, c.name);
    reads[c.name] = read_counter(c, s.link_up, keep_steps, now, out);
  }
  judge_hidden_down(reads, s.downs_seen, out);
  trim_steps(config, now.mono_us);
  if (s.link_up) {
    if (s.rate.known() && reads.count(std::string(bit_counter_)) &&
        judgeable(std::string(bit_counter_), reads)) {
      judge_bit_errors(config, s, now, out);
    }
    const GrowthRule& recoveries = config.link_error_recovery;
    if (judgeable(recoveries.counter, reads)) {
      judge_growth_rule(recoveries, LinkFault::kLinkRecoveries, now, out);
    }
    for (const GrowthRule& rule : config.transport) {
      if (judgeable(rule.counter, reads)) {
        judge_growth_rule(rule, LinkFault::kTransportErrors, now, out);
      }
    }
  }
  advance(config, now, out);
  last_sample_ = now;
  last_rate_ = s.rate;
  ber_window_s_ = longest_ber_window_s(config);
  const std::string_view unknown = unknown_after(config, s, reads, counters_);
  unknown_ = unknown;  // not kept across a restart: no revision
  if (changed_ || out.size() != changes_before) ++revision_;
}

// In the order of what an operator can do about it: a link down says more than a counter.
std::string_view PortLinkQuality::unknown_after(const LinkQualityConfig& config,
                                                const PortSample& s,
                                                const std::map<std::string, Read>& reads,
                                                const std::map<std::string, Counter>& counters) {
  if (!s.link_up) return "link_down";
  bool any_rule_counter = false;
  bool baseline = false;
  for (const auto& [name, read] : reads) {
    if (!read_by_a_rule(config, name)) continue;
    any_rule_counter = true;
    const auto k = counters.find(name);
    if (k != counters.end() && k->second.pegged) return "pegged";
    if (!read.known) baseline = true;
  }
  // A RoCE port whose netdev gives no FEC statistics (FEC off, a driver without them, a read
  // that failed): its bit errors are unknown.
  if (s.ethernet && !config.symbol_error.empty() && !reads.count(std::string(kFecUncorrectable)))
    return "no_fec_statistics";
  if (!any_rule_counter) return "no_error_counters";
  if (!s.rate.known() && !config.symbol_error.empty() &&
      reads.count(std::string(s.ethernet ? kFecUncorrectable : kSymbolError)))
    return "rate_unknown";
  return baseline ? "baseline" : "";
}

PortLinkQuality::Read PortLinkQuality::read_counter(const CounterValue& c, bool link_up,
                                                    bool keep_steps, Instant now,
                                                    std::vector<LinkQualityChange>& out) {
  Counter& k = counters_[c.name];
  const uint64_t max = counter_max(c.bits);
  const uint64_t previous = k.value;
  const bool had_baseline = std::exchange(k.has_baseline, true);
  const bool was_pegged = k.pegged;
  const bool across_restart = std::exchange(k.restored, false);
  if (!had_baseline || c.value != previous) changed_ = true;
  k.value = c.value;
  auto report = [&](LinkQualityChange::Kind kind) {
    LinkQualityChange change;
    change.kind = kind;
    change.counter = c.name;
    change.value = c.value;
    out.push_back(std::move(change));
  };
  auto peg = [&] {
    changed_ = true;
    k.pegged = true;
    k.pegged_since_wall_us = now.wall_us;
    report(LinkQualityChange::Kind::kPegged);
  };

  // A counter that wraps is never pegged: at all ones it goes on from 0. Below its last value,
  // near its maximum, it wrapped: the growth across the wrap counts (core/counter_width). Not
  // across a restart: the time away is unknown, it may have wrapped more than once.
  const bool at_max = !c.wraps && c.value >= max;
  const std::optional<uint64_t> wrapped = had_baseline && c.wraps && !across_restart && !was_pegged
                                              ? growth_across_wrap(previous, c.value, c.bits)
                                              : std::nullopt;
  // A baseline (the first read, or the first after forget_baseline()), a reset, or a counter
  // that stays pegged: the errors since the last read are unknown. That restarts the clean
  // period of a bad fault of this counter, and counts nothing. Below its value before a
  // restart, it was reset or its driver reloaded while nobody watched: a baseline, no record.
  if (!had_baseline || (c.value < previous && !wrapped) || was_pegged) {
    k.last_growth_mono_us = now.mono_us;
    if (had_baseline && c.value < previous && !across_restart) {
      report(LinkQualityChange::Kind::kReset);
    }
    if (k.pegged != (was_pegged && at_max)) changed_ = true;
    k.pegged = was_pegged && at_max;  // one pegged before a reopen is reported once
    if (!was_pegged && at_max) peg();
    return {.across_restart = across_restart};
  }

  Read r;
  r.known = true;
  r.growth = wrapped ? *wrapped : c.value - previous;
  r.across_restart = across_restart;
  k.last_growth = r.growth;
  // A link that is down counts nothing against its bit rate: its counters give a baseline only.
  if (r.growth > 0 && link_up) {
    // Growth across a restart happened at an unknown time since the saved read: dated at the
    // earliest, so that an hour's slow growth while the daemon was away is no burst in a
    // 12-minute window, and still counts in the windows that reach back that far; and, at an
    // unknown time, it is no quiet time: the clean period counts from now.
    const int64_t at_us = across_restart ? restored_sample_mono_us_ : now.mono_us;
    if (across_restart) k.last_growth_mono_us = now.mono_us;
    if (keep_steps) add_step(k.steps, at_us, r.growth);
  }
  if (at_max) {
    peg();
    r.pegged_now = true;
  }
  return r;
}

void PortLinkQuality::add_step(std::deque<Step>& steps, int64_t mono_us, uint64_t growth) {
  if (!steps.empty() && steps.back().mono_us == mono_us) {
    steps.back().growth = add_saturating(steps.back().growth, growth);
    return;
  }
  steps.push_back({mono_us, growth});
  if (steps.size() > kMaxSteps) {
    // The oldest growth is moved later, never dropped: a window's count is never too small.
    steps[1].growth = add_saturating(steps[1].growth, steps[0].growth);
    steps.pop_front();
  }
}

void PortLinkQuality::judge_hidden_down(const std::map<std::string, Read>& reads,
                                        uint32_t downs_seen, std::vector<LinkQualityChange>& out) {
  downs_seen_pending_ = static_cast<uint32_t>(
      std::min<uint64_t>(uint64_t{downs_seen_pending_} + downs_seen, UINT32_MAX));
  // counters/link_downed once the port has had it, so that a failed read of it never sets
  // hw_counters/link_downed's growth against downs already counted.
  const std::string name(counters_.count(std::string(kLinkDowned)) ? kLinkDowned : kHwLinkDowned);
  const auto read = reads.find(name);
  if (read == reads.end()) return;  // not read: the port_errs seen wait for its next read
  const uint32_t seen = std::exchange(downs_seen_pending_, 0);
  // Downs while the daemon was away: their events were never its to see, so none is hidden.
  if (!read->second.known || read->second.across_restart || read->second.growth <= seen) return;
  LinkQualityChange change;
  change.kind = LinkQualityChange::Kind::kHiddenDown;
  change.counter = name;
  change.count = read->second.growth - seen;
  change.value = value_of(name);
  out.push_back(std::move(change));
}

// A counter pegged before this sample says nothing: its rule is not judged.
bool PortLinkQuality::judgeable(const std::string& counter,
                                const std::map<std::string, Read>& reads) const {
  const auto k = counters_.find(counter);
  if (k == counters_.end() || !k->second.pegged) return true;
  const auto read = reads.find(counter);
  return read != reads.end() && read->second.pegged_now;
}

// Over a window's allowance: ber x the bits the link carried up within the window. Judged at
// every sample, bad or not: a bad link is clean only once no window has been over for clean_s.
void PortLinkQuality::judge_bit_errors(const LinkQualityConfig& config, const PortSample& s,
                                       Instant now, std::vector<LinkQualityChange>& out) {
  const LinkRate& rate = s.rate;
  // FEC's uncorrectable blocks are what FEC left at any speed; symbol_error only from HDR on.
  if (!s.ethernet && lane_gbps(rate.speed) < lane_gbps(config.bit_errors_min_speed)) return;
  Fault& f = faults_[index_of(LinkFault::kBitErrors)];
  const std::string counter(bit_counter_);
  for (const BerWindow& w : config.symbol_error) {
    const double bits = rate.gbps() * 1e9 * up_within(now.mono_us, w.window_s);
    if (bits <= 0) continue;
    const double allowed = allowance(w.ber, bits);
    const uint64_t growth = growth_within(counter, now.mono_us, w.window_s);
    if (static_cast<double>(growth) <= allowed) continue;
    f.last_over_mono_us = now.mono_us;
    if (f.bad) return;
    LinkQualityChange change;
    change.count = growth;
    change.allowed = static_cast<uint64_t>(std::floor(allowed));
    change.window_s = w.window_s;
    change.ber = static_cast<double>(growth) / bits;
    make_bad(LinkFault::kBitErrors, counter, now, std::move(change), out);
    return;
  }
}

double PortLinkQuality::up_within(int64_t now_mono_us, uint32_t window_s) const {
  const int64_t from_us = now_mono_us - int64_t{window_s} * kMicrosPerSecond;
  int64_t down_us = 0;
  for (const auto& [start, end] : downs_) {
    const int64_t a = std::max(start, from_us);
    const int64_t b = std::min(end, now_mono_us);
    if (b > a) down_us += b - a;
  }
  return static_cast<double>(int64_t{window_s} * kMicrosPerSecond - down_us) / kMicrosPerSecond;
}

void PortLinkQuality::judge_growth_rule(const GrowthRule& rule, LinkFault fault, Instant now,
                                        std::vector<LinkQualityChange>& out) {
  if (rule.count == 0) return;  // a rule that nothing could pass is no rule
  Fault& f = faults_[index_of(fault)];
  const uint64_t growth = growth_within(rule.counter, now.mono_us, rule.window_s);
  if (growth < rule.count) return;
  f.last_over_mono_us = now.mono_us;
  if (std::find(f.counters.begin(), f.counters.end(), rule.counter) != f.counters.end()) return;
  if (f.bad) {
    // Bad already for another counter (two transport rules): it too must stay quiet now.
    f.counters.push_back(rule.counter);
    return;
  }
  LinkQualityChange change;
  change.count = growth;
  change.allowed = rule.count - 1;
  change.window_s = rule.window_s;
  make_bad(fault, rule.counter, now, std::move(change), out);
}

void PortLinkQuality::make_bad(LinkFault fault, const std::string& counter, Instant now,
                               LinkQualityChange change, std::vector<LinkQualityChange>& out) {
  if (!bad()) since_ = now;
  Fault& f = faults_[index_of(fault)];
  f.bad = true;
  f.counters = {counter};
  f.last_over_mono_us = now.mono_us;
  change.kind = LinkQualityChange::Kind::kBad;
  change.counter = counter;
  change.fault = fault;
  change.value = value_of(counter);
  out.push_back(std::move(change));
}

std::optional<uint64_t> PortLinkQuality::last_value(const std::string& counter) const {
  const auto k = counters_.find(counter);
  if (k == counters_.end() || !k->second.has_baseline) return std::nullopt;
  return k->second.value;
}

std::optional<uint64_t> PortLinkQuality::last_growth(const std::string& counter) const {
  const auto k = counters_.find(counter);
  return k == counters_.end() ? std::nullopt : k->second.last_growth;
}

uint64_t PortLinkQuality::value_of(const std::string& counter) const {
  const auto k = counters_.find(counter);
  return k == counters_.end() ? 0 : k->second.value;
}

uint64_t PortLinkQuality::growth_within(const std::string& counter, int64_t now_mono_us,
                                        uint32_t window_s) const {
  const auto k = counters_.find(counter);
  if (k == counters_.end()) return 0;
  const int64_t from_us = now_mono_us - int64_t{window_s} * kMicrosPerSecond;
  uint64_t growth = 0;
  for (auto step = k->second.steps.rbegin(); step != k->second.steps.rend(); ++step) {
    if (step->mono_us <= from_us) break;  // the window is (now - window_s, now]
    growth = add_saturating(growth, step->growth);
  }
  return growth;
}

void PortLinkQuality::trim_steps(const LinkQualityConfig& config, int64_t now_mono_us) {
  const int64_t from_us = now_mono_us - int64_t{longest_window_s(config)} * kMicrosPerSecond;
  for (auto& [name, k] : counters_) {
    while (!k.steps.empty() && k.steps.front().mono_us <= from_us) {
      k.steps.pop_front();
    }
  }
  while (!downs_.empty() && downs_.front().second <= from_us)
    downs_.pop_front();
}

// clean_s after the last sample its rule was over its allowance, or after the last read of its
// counters that could not tell when their errors were, whichever is later. None while a counter
// of the fault is pegged: its errors are unknown, never "no new errors".
std::optional<int64_t> PortLinkQuality::clean_deadline(const Fault& f,
                                                       const LinkQualityConfig& config) const {
  if (!f.bad) return std::nullopt;
  int64_t last_us = f.last_over_mono_us;
  for (const std::string& name : f.counters) {
    const auto k = counters_.find(name);
    if (k == counters_.end()) continue;
    if (k->second.pegged) return std::nullopt;
    last_us = std::max(last_us, k->second.last_growth_mono_us);
  }
  return last_us + int64_t{config.clean_s} * kMicrosPerSecond;
}

void PortLinkQuality::advance(const LinkQualityConfig& config, Instant now,
                              std::vector<LinkQualityChange>& out) {
  for (size_t i = 0; i < faults_.size(); ++i) {
    Fault& f = faults_[i];
    const std::optional<int64_t> deadline = clean_deadline(f, config);
    if (!deadline || *deadline > now.mono_us) continue;
    LinkQualityChange change;
    change.kind = LinkQualityChange::Kind::kClean;
    change.fault = static_cast<LinkFault>(i);
    change.counter = f.counters.front();
    change.value = value_of(change.counter);
    out.push_back(std::move(change));
    // Forgiven: growth older than the clean period (a window longer than clean_s) does not
    // make it bad again at the next sample.
    for (const std::string& name : f.counters) {
      const auto k = counters_.find(name);
      if (k != counters_.end()) k->second.steps.clear();
    }
    f.bad = false;
    f.counters.clear();
    if (!bad()) since_ = now;
    ++revision_;
  }
}

std::optional<int64_t> PortLinkQuality::next_deadline(const LinkQualityConfig& config) const {
  std::optional<int64_t> next;
  for (const Fault& f : faults_) {
    const std::optional<int64_t> deadline = clean_deadline(f, config);
    if (deadline && (!next || *deadline < *next)) next = deadline;
  }
  return next;
}

void PortLinkQuality::forget_baseline() {
  // Pegged stays until the counter's next read says otherwise: a pegged fault stays unknown.
  for (auto& [name, k] : counters_) {
    k.has_baseline = false;
  }
  downs_seen_pending_ = 0;
  ++revision_;
}

LinkQualityState PortLinkQuality::export_state() const {
  LinkQualityState st;
  for (const auto& [name, k] : counters_) {
    st.counters.push_back({name,
                           k.value,
                           k.has_baseline,
                           k.pegged,
                           k.pegged_since_wall_us,
                           k.last_growth_mono_us,
                           {k.steps.begin(), k.steps.end()}});
  }
  for (size_t i = 0; i < faults_.size(); ++i) {
    if (faults_[i].bad) {
      st.faults.push_back(
          {static_cast<LinkFault>(i), faults_[i].counters, faults_[i].last_over_mono_us});
    }
  }
  st.sampled = sampled_;
  st.since = since_;
  st.first_sample = first_sample_;
  st.last_sample = last_sample_;
  st.last_rate = last_rate_;
  st.ber_window_s = ber_window_s_;
  st.downs_seen_pending = downs_seen_pending_;
  return st;
}

void PortLinkQuality::restore(const LinkQualityState& st) {
  counters_.clear();
  for (const LinkQualityState::Counter& c : st.counters) {
    Counter& k = counters_[c.name];
    k.has_baseline = c.has_baseline;
    k.restored = true;
    k.value = c.value;
    k.pegged = c.pegged;
    k.pegged_since_wall_us = c.pegged_since_wall_us;
    k.last_growth_mono_us = c.last_growth_mono_us;
    k.steps.assign(c.steps.begin(), c.steps.end());
  }
  faults_ = {};
  for (const LinkQualityState::Fault& f : st.faults) {
    Fault& to = faults_[index_of(f.fault)];
    to.bad = true;
    to.counters = f.counters;
    to.last_over_mono_us = f.last_over_mono_us;
  }
  sampled_ = st.sampled;
  since_ = st.since;
  first_sample_ = st.first_sample;
  last_sample_ = st.last_sample;
  last_rate_ = st.last_rate;
  ber_window_s_ = st.ber_window_s;
  downs_seen_pending_ = st.downs_seen_pending;
  restored_sample_mono_us_ = st.last_sample.mono_us;
  // Not judged until its first read since the restart; a link up then is no link come up.
  unknown_ = "not_read";
  last_link_up_ = true;
  downs_.clear();
  ++revision_;
}

bool PortLinkQuality::bad() const {
  return std::any_of(faults_.begin(), faults_.end(), [](const Fault& f) { return f.bad; });
}

LinkQualityView PortLinkQuality::view() const {
  LinkQualityView v;
  v.bad = bad();
  for (size_t i = 0; i < faults_.size(); ++i) {
    if (faults_[i].bad) v.faults.push_back(static_cast<LinkFault>(i));
  }
  v.since = since_;
  v.unknown = std::string(unknown_);
  const double observed_s = std::min<double>(
      ber_window_s_,
      static_cast<double>(last_sample_.mono_us - first_sample_.mono_us) / kMicrosPerSecond);
  const double bits = last_rate_.gbps() * 1e9 * observed_s;
  const auto symbols = counters_.find(std::string(bit_counter_));
  if (bits > 0 && symbols != counters_.end() && symbols->second.has_baseline &&
      !symbols->second.pegged) {
    const uint64_t growth =
        growth_within(std::string(bit_counter_), last_sample_.mono_us, ber_window_s_);
    v.ber_estimate = static_cast<double>(growth) / bits;
  }
  for (const auto& [name, k] : counters_) {
    v.values[name] = k.value;
    if (!k.pegged) continue;
    v.pegged.push_back(name);
    v.pegged_since_wall_us[name] = k.pegged_since_wall_us;
  }
  return v;
}

}  // namespace rdma_eventd::daemon
