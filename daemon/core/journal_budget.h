// The journal budget (docs/health.md): while a port behaves the journal gets every record;
// when one port, or the host as a whole, sends more than its token bucket allows, the excess
// is not journaled but counted, and the journal gets one summary per port per interval that
// says exactly which records it did not get. Subscribers get every record either way: the
// budget only decides for the journal. Pure: the caller passes the time and arms one timer at
// next_deadline(), which is none while no summary is pending.
//
// Every journaled record takes a token from its port's bucket and from the host's, so the
// daemon's total stays under the host's rate whatever the number of ports; records that are not
// about one port (device_fatal, device_added...) take only the host's and are summarized as the
// host's.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/token_bucket.h"
#include "rdma_eventd/record.h"

namespace rdma_eventd::daemon {

// The configuration's "journal.budget" section. Rates are records per second.
struct JournalBudgetConfig {
  bool enabled = true;
  uint32_t port_rate = 2;
  uint32_t port_burst = 200;
  uint32_t host_rate = 100;
  uint32_t host_burst = 2000;
  uint32_t summary_interval_s = 10;
  friend bool operator==(const JournalBudgetConfig&, const JournalBudgetConfig&) = default;
};

// Seqs [first, last] of one port: every record of that port in the range was not journaled,
// `count` of them (the range holds other ports' records too).
struct SeqRange {
  uint64_t first = 0;
  uint64_t last = 0;
  uint64_t count = 0;
  friend bool operator==(const SeqRange&, const SeqRange&) = default;
};

// What one port (or the host) did not get into the journal during one interval.
//
// Accounting: the records of this port with a seq in [first_seq, last_seq] are exactly
// not_journaled + journaled_between; the journal holds the journaled_between ones, and every
// record of the port within the interval that is not in the journal is in that range. `ranges`
// lists the runs of records not journaled one by one when there are at most kMaxRanges of
// them (ranges_complete); beyond that the range and the two counts still account for each.
struct BudgetSummary {
  static constexpr size_t kMaxRanges = 16;

  std::string device;  // "" for the host's records (those not about one port)
  std::string node_guid;
  uint32_t port = 0;
  std::string stream;  // seqs are numbers of this stream
  Instant start;       // when the first record of the interval was not journaled
  int64_t duration_us = 0;
  uint64_t not_journaled = 0;
  uint64_t first_seq = 0;
  uint64_t last_seq = 0;
  uint64_t journaled_between = 0;
  std::vector<SeqRange> ranges;
  bool ranges_complete = true;
  uint64_t over_port_budget = 0;  // refused by the port's bucket
  uint64_t over_host_budget = 0;  // the port's bucket had a token, the host's did not
  std::string health;             // the port's verdict ("flapping"), set by the caller; "" unknown
  friend bool operator==(const BudgetSummary&, const BudgetSummary&) = default;
};

class JournalBudget {
 public:
  JournalBudget(JournalBudgetConfig config, int64_t now_mono_us);

  // Whether the record goes to the journal. One that does not is counted for its summary.
  bool admit(const Record& r, Instant now);

  // Appends the summaries whose interval has ended by `now`, and forgets them.
  void take_due(Instant now, std::vector<BudgetSummary>& out);
  // Appends every pending summary, its interval cut short at `now` (the daemon stops).
  void take_all(Instant now, std::vector<BudgetSummary>& out);
  // When take_due() next has a summary to give (CLOCK_MONOTONIC µs); none while none is
  // pending. May be in the past.
  std::optional<int64_t> next_deadline() const;

  // A reload: buckets get the new rates, full; pending summaries keep their intervals.
  void set_config(JournalBudgetConfig config, Instant now);
  const JournalBudgetConfig& config() const { return config_; }

  // Ports with a bucket (bounded: idle ones are forgotten beyond kMaxPorts).
  size_t ports_tracked() const;
  static constexpr size_t kMaxPorts = 1024;

 private:
  struct Pending {
    BudgetSummary summary;
    bool run_listed = false;  // the current run is summary.ranges.back()
  };
  struct Entry {
    explicit Entry(TokenBucket b) : bucket(b) {}
    TokenBucket bucket;
    std::optional<Pending> pending;
    bool last_refused = false;  // the key's previous record in the interval was refused
    uint64_t journaled_since_refused = 0;
  };

  Entry& port_entry(std::string_view device, uint32_t port, int64_t now_us);
  void refuse(Entry& e, const Record& r, Instant now, bool by_host);
  void close_if_due(Entry& e, int64_t now_us);
  void close(Entry& e, int64_t end_us);
  void prune(int64_t now_us);
  int64_t interval_us() const;

  JournalBudgetConfig config_;
  TokenBucket host_bucket_;
  Entry host_;  // the records not about one port
  std::map<std::string, std::map<uint32_t, Entry>, std::less<>> ports_;
  std::vector<BudgetSummary> closed_;  // ended while a record came, before take_due()
};

// The MESSAGE_ID of summary entries.
inline constexpr std::string_view kBudgetSummaryMessageId = "a105a327ff284edaa9d0ced1b833b9d9";

// "mlx5_0 port 1: 4,812 records not journaled in the last 10 s (flapping); subscribers were
// sent all of them, seq 1200–6011 (20 journaled in between)"
std::string summary_message(const BudgetSummary& s);

// "KEY=value" strings for sd_journal_sendv: MESSAGE, PRIORITY (warning), MESSAGE_ID,
// SYSLOG_IDENTIFIER and the RDMA_* fields of the summary (docs/health.md lists them).
std::vector<std::string> summary_journal_fields(const BudgetSummary& s,
                                                std::string_view identifier);

}  // namespace rdma_eventd::daemon
