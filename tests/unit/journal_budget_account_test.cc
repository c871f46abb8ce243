// The journal budget's promises over long runs: the journal and the summaries account for every
// record, and the defaults keep the daemon under journald's default rate limit.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "core/clock.h"
#include "core/journal_budget.h"

namespace rdma_eventd::daemon {
namespace {

Instant at(int64_t us) {
  return {.wall_us = 1795342530000000 + us, .mono_us = us};
}

struct Sent {
  uint64_t seq;
  std::string key;  // "mlx5_0/1", or "" for the host's records
  int64_t time_us;
  bool journaled;
};

using Records = std::vector<const Sent*>;  // one key's, in seq order

// The records of `records` with a seq in [first, last].
std::pair<Records::const_iterator, Records::const_iterator> span(const Records& records,
                                                                 uint64_t first, uint64_t last) {
  auto begin = std::lower_bound(records.begin(), records.end(), first,
                                [](const Sent* r, uint64_t seq) { return r->seq < seq; });
  auto end = std::upper_bound(begin, records.end(), last,
                              [](uint64_t seq, const Sent* r) { return seq < r->seq; });
  return {begin, end};
}

std::string key_of(const BudgetSummary& s) {
  return s.device.empty() ? "" : s.device + "/" + std::to_string(s.port);
}

Record make_record(uint64_t seq, int which) {
  Record r;
  r.seq = seq;
  r.stream = "stream-1";
  if (which == 4) {  // a device record: the host's
    r.event = EventKind::kDeviceAdded;
    r.device = "mlx5_1";
    return r;
  }
  r.event = EventKind::kPortErr;
  r.device = which < 2 ? "mlx5_0" : "mlx5_1";
  r.port = 1 + static_cast<uint32_t>(which % 2);
  r.port_info = PortInfo{};
  r.port_info->port = r.port;
  return r;
}

TEST(JournalBudgetAccounting, TheJournalAndTheSummariesAccountForEveryRecordOfALongStorm) {
  // 200,000 records on 4 ports and the host, in storms (gaps under 2 ms) with pauses of up to
  // 5 s now and then; the timer taken at each deadline, as the daemon arms it.
  const JournalBudgetConfig c{.port_rate = 5,
                              .port_burst = 20,
                              .host_rate = 50,
                              .host_burst = 100,
                              .summary_interval_s = 2};
  JournalBudget b(c, 0);
  std::mt19937_64 rng(20261122);
  std::vector<Sent> sent;
  std::vector<BudgetSummary> summaries;
  int64_t t = 0;
  for (uint64_t seq = 1; seq <= 200000; ++seq) {
    t += rng() % 100 == 0 ? static_cast<int64_t>(rng() % (5 * kMicrosPerSecond))
                          : static_cast<int64_t>(rng() % 2000);
    while (auto d = b.next_deadline()) {
      if (*d > t) break;
      b.take_due(at(*d), summaries);
    }
    const Record r = make_record(seq, static_cast<int>(rng() % 5));
    const bool journaled = b.admit(r, at(t));
    sent.push_back({seq, r.port_info ? r.device + "/" + std::to_string(r.port) : "", t, journaled});
  }
  b.take_all(at(t), summaries);
  EXPECT_FALSE(b.next_deadline().has_value());

  // Every record not journaled is in exactly one summary of its port: sum up per key.
  std::map<std::string, Records> by_key;
  uint64_t refused = 0;
  for (const Sent& s : sent) {
    by_key[s.key].push_back(&s);
    refused += !s.journaled;
  }
  ASSERT_GT(refused, 10000u);  // the storm did go over the budget
  std::map<std::string, uint64_t> covered;
  std::map<std::string, const BudgetSummary*> previous;
  uint64_t summarized = 0;
  for (const BudgetSummary& s : summaries) {
    const std::string key = key_of(s);
    summarized += s.not_journaled;
    // At most one summary per port per interval, and intervals never overlap.
    EXPECT_LE(s.duration_us, c.summary_interval_s * kMicrosPerSecond);
    if (const BudgetSummary* p = previous[key]) {
      EXPECT_GE(s.start.mono_us, p->start.mono_us + p->duration_us) << key;
      EXPECT_GT(s.first_seq, p->last_seq) << key;
    }
    previous[key] = &s;
    // The port's records in [first, last]: exactly not_journaled refused, journaled_between not.
    uint64_t in_refused = 0, in_journaled = 0;
    const auto [begin, end] = span(by_key[key], s.first_seq, s.last_seq);
    for (auto it = begin; it != end; ++it) {
      const Sent* r = *it;
      (r->journaled ? in_journaled : in_refused)++;
      if (!r->journaled) {
        EXPECT_GE(r->time_us, s.start.mono_us);
        EXPECT_LE(r->time_us, s.start.mono_us + s.duration_us);
      }
    }
    EXPECT_EQ(in_refused, s.not_journaled) << key << " " << s.first_seq;
    EXPECT_EQ(in_journaled, s.journaled_between) << key << " " << s.first_seq;
    covered[key] += in_refused;
    // Listed runs hold refused records of the port only, and complete lists hold them all.
    uint64_t in_ranges = 0;
    for (const SeqRange& range : s.ranges) {
      uint64_t n = 0;
      const auto [from, to] = span(by_key[key], range.first, range.last);
      for (auto it = from; it != to; ++it) {
        const Sent* r = *it;
        EXPECT_FALSE(r->journaled) << key << " seq " << r->seq;
        ++n;
      }
      EXPECT_EQ(n, range.count);
      in_ranges += n;
    }
    if (s.ranges_complete) {
      EXPECT_EQ(in_ranges, s.not_journaled);
    }
  }
  EXPECT_EQ(summarized, refused);
  for (const auto& [key, records] : by_key) {
    const auto not_journaled =
        std::count_if(records.begin(), records.end(), [](const Sent* r) { return !r->journaled; });
    EXPECT_EQ(covered[key], static_cast<uint64_t>(not_journaled)) << key;
  }
}

TEST(JournalBudgetDefaults, AStormOnEveryPortStaysUnderJournaldsDefaultRateLimit) {
  // journald's default: 10,000 entries per 30 s per unit. 16 ports (8 dual-port adapters) and
  // device records, each sending 1,000 records a second for two minutes, with the default
  // budget: in any 30 s, the journaled records and the summaries are at most the host's burst,
  // 30 s of its rate and 4 summaries per port and for the host, which leaves journald's limit
  // thousands of entries for the daemon's own log lines.
  const JournalBudgetConfig c;
  JournalBudget b(c, 0);
  std::vector<int64_t> entries;  // when each journal entry is written
  uint64_t seq = 0;
  for (int64_t t = 0; t < 120 * kMicrosPerSecond; t += 1000) {
    while (auto d = b.next_deadline()) {
      if (*d > t) break;
      std::vector<BudgetSummary> due;
      b.take_due(at(*d), due);
      entries.insert(entries.end(), due.size(), *d);
    }
    for (int which = 0; which < 17; ++which) {
      Record r = make_record(++seq, which == 16 ? 4 : 0);
      if (which < 16) {
        r.device = "mlx5_" + std::to_string(which / 2);
        r.port = 1 + static_cast<uint32_t>(which % 2);
        r.port_info->port = r.port;
      }
      if (b.admit(r, at(t))) entries.push_back(t);
    }
  }
  size_t most = 0;
  for (size_t first = 0, last = 0; first < entries.size(); ++first) {
    while (last < entries.size() && entries[last] <= entries[first] + 30 * kMicrosPerSecond)
      ++last;
    most = std::max(most, last - first);
  }
  const size_t bound = c.host_burst + 30 * c.host_rate + 4 * 17;
  EXPECT_LE(most, bound);
  EXPECT_EQ(bound, 5068u);  // docs/health.md has this arithmetic
  EXPECT_LE(most, 9000u);
  EXPECT_GT(most, 4000u);  // the storm did fill the budget
}

}  // namespace
}  // namespace rdma_eventd::daemon
