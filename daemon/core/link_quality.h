// Link quality from a port's error counters (docs/health.md, "Link quality"): what a link that
// stays up says before it goes down. Pure: the caller reads the counters (app/port_counters)
// and hands each port's sample here with the time; nothing here reads a file or a clock.
//
// The rules (defaults from NVIDIA UFM's, docs/health.md says why):
//  - bit errors, rate-scaled: `symbol_error` growing by more than ber * rate_bps * window_s
//    within a window (1e-14 over 12 minutes, 1e-15 over 125 minutes) makes the link bad; the
//    rate is the port's own at each sample, so a link that retrains to another rate is judged
//    at the new one from then on;
//  - `link_error_recovery` growing by link_error_recovery.count within its window;
//  - transport counters of hw_counters/: a rule of their own each, none by default;
//  - below bit_errors_min_speed (HDR: the lane speeds whose symbol_error counts what FEC left)
//    the bit error rule is not applied: below it symbol_error is the raw count;
//  - a window's allowance scales with the time the link was up within it;
//  - a bad link is clean again after clean_s in which no window of its rule was over its
//    allowance, as reads show (and none of its counters' errors was at an unknown time);
//  - `link_downed` growth the daemon saw no port_err for is a down too brief for an event: the
//    caller counts it as a down (a flap) and says so in the record.
// What never raises a verdict: the first sample of a port (the counters count from the driver's
// load, the daemon does not know over what time: a reboot, a driver reload, a restarted daemon
// without its saved state all start here), a counter that went down (someone reset it: a new
// baseline, reported once; but a counter that wraps and went down from near its maximum wrapped:
// its growth counts), a counter that saturates at its width's maximum (pegged: it counts nothing
// more, so the port's errors of that counter are unknown since then, reported once, and never
// read as "no new errors").
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/port_health_types.h"

namespace rdma_eventd::daemon {

// One counter's value as read. `name` is the file's name in counters/ ("symbol_error"), or
// "hw_counters/NAME" for the driver's group. `bits`: its width (16 for symbol_error, 8 for
// link_downed and link_error_recovery, 4 for local_link_integrity_errors; for hw_counters/ the
// driver's: 32 for mlx5's Q counters, else 64; core/counter_width). A counter that saturates is
// pegged at all ones; one that `wraps` (mlx5's Q counters) goes on from 0, and a drop from near
// its maximum is growth across the wrap, not a reset (docs/health.md, "Counter widths and
// wraps").
struct CounterValue {
  std::string name;
  uint8_t bits = 64;
  uint64_t value = 0;
  bool wraps = false;
  friend bool operator==(const CounterValue&, const CounterValue&) = default;
};

// The width of a counters/ file by its name (Linux drivers/infiniband/core/sysfs.c), 64 for
// hw_counters/ and for a name it does not know (core/counter_width has hw_counters/' by driver).
uint8_t counter_bits(std::string_view name);
inline uint64_t counter_max(uint8_t bits) {
  return bits >= 64 ? UINT64_MAX : (uint64_t{1} << bits) - 1;
}

// Where a port's link_downed is read: counters/link_downed when the device has counters/, else
// hw_counters/link_downed (rxe has only that one).
inline constexpr std::string_view kSymbolError = "symbol_error";
inline constexpr std::string_view kLinkDowned = "link_downed";
inline constexpr std::string_view kHwLinkDowned = "hw_counters/link_downed";
inline constexpr std::string_view kLinkErrorRecovery = "link_error_recovery";
// A RoCE port's PHY counters, its netdev's (ethtool netlink; netlink/ethtool_reader): on an
// Ethernet link the IB PMA's counters/ are not where the PHY's errors are. The bit error rule
// reads the FEC's uncorrectable blocks there (each holds at least one bit error FEC left, as
// symbol_error counts them on InfiniBand); the others are shown, not judged.
inline constexpr std::string_view kFecUncorrectable = "ethtool/fec_uncorrectable_blocks";
inline constexpr std::string_view kFecCorrected = "ethtool/fec_corrected_blocks";
inline constexpr std::string_view kFecCorrectedBits = "ethtool/fec_corrected_bits";
inline constexpr std::string_view kPhySymbolErrors = "ethtool/symbol_errors";

struct BerWindow {
  double ber = 1e-14;
  uint32_t window_s = 720;
  friend bool operator==(const BerWindow&, const BerWindow&) = default;
};

// `counter` growing by `count` or more within `window_s` makes the link bad.
struct GrowthRule {
  std::string counter;  // as CounterValue::name
  uint64_t count = 1;
  uint32_t window_s = 60;
  friend bool operator==(const GrowthRule&, const GrowthRule&) = default;
};

// The configuration's "link_health" section (docs/configuration.md).
struct LinkQualityConfig {
  // false: no counter is read, no timer is armed.
  bool enabled = true;
  // The coarse timer: every port that is up is sampled this often (and on each of its events).
  uint32_t interval_s = 60;
  // A read of a device's counters that has not returned after this long is reported (its ports'
  // link quality unknown: read_hung); the device is not read again until it returns.
  uint32_t read_deadline_s = 10;
  std::vector<BerWindow> symbol_error = {{1e-14, 720}, {1e-15, 7500}};
  // The slowest lane speed the bit error rule applies at: from HDR on, symbol_error counts
  // the errors FEC left; below it, raw symbol errors (docs/health.md says what to set there).
  LinkSpeed bit_errors_min_speed = LinkSpeed::kHdr;
  GrowthRule link_error_recovery = {"link_error_recovery", 5, 720};
  std::vector<GrowthRule> transport;  // hw_counters/ rules: none by default
  uint32_t clean_s = 7560;            // 126 minutes
  // Devices never read (names, shell globs or node GUIDs, as devices.include).
  std::vector<DevicePattern> exclude;
  friend bool operator==(const LinkQualityConfig&, const LinkQualityConfig&) = default;
};

// Why a link is bad; a port's health reason of the same name (docs/health.md).
enum class LinkFault : uint8_t {
  kBitErrors,        // symbol_error over a BER window's allowance
  kLinkRecoveries,   // link_error_recovery over its rule
  kTransportErrors,  // a transport rule of hw_counters/
};
inline constexpr size_t kLinkFaultCount = 3;
std::string_view link_fault_name(LinkFault f);  // "bit_errors", "link_recoveries", ...
std::optional<LinkFault> link_fault_from_name(std::string_view name);

// One sample of one port.
struct PortSample {
  LinkRate rate;            // the port's rate now, from the daemon's own port state
  bool link_up = false;     // only a port that is up is judged (a down port's counters rest)
  uint32_t downs_seen = 0;  // port_err records the daemon had for the port since the last sample
  std::vector<CounterValue> counters;  // those read; one that failed to read is absent
  // A port_err since the last sample: the link went down and came back between two samples
  // (events come faster than reads), so this one is its first since it came up.
  bool went_down = false;
  // An Ethernet (RoCE) port: its bit errors are kFecUncorrectable's, not symbol_error's.
  bool ethernet = false;
};

// Of the port_errs a read of link_downed was set against (`fresh`, those since the sample
// before, and `carried`, those that sample's read did not show yet), the ones its growth did
// not show either: they may show in the next read. The counter shows the oldest downs first,
// so these are the newest: at most the fresh ones, and the carried ones only while they may
// still lag (`carried_may_lag`: the read began too soon after their events were read for the
// counter to show them, as a driver's cached hw_counters). A carried down that a later read
// does not show is never shown: the counter and the event are not one atomic step, but close.
inline uint32_t downs_to_carry(uint32_t fresh, uint32_t carried, uint64_t grew,
                               bool carried_may_lag) {
  const uint64_t seen = uint64_t{fresh} + carried;
  const uint64_t most = carried_may_lag ? seen : fresh;
  return grew >= seen ? 0
                      : static_cast<uint32_t>(std::min<uint64_t>({seen - grew, most, UINT32_MAX}));
}

// What a sample found, for records and the health model.
struct LinkQualityChange {
  enum class Kind : uint8_t {
    kBad,         // the link became bad (or bad for another fault besides)
    kClean,       // it is clean again: clean_s without growth
    kPegged,      // a counter reached its maximum: its errors are unknown from now on
    kReset,       // a counter went down: someone reset it; a new baseline
    kHiddenDown,  // link_downed grew by more than the port_errs seen: `count` downs unseen
    // The caller's, of the reads themselves: they fail or do not return (`reason`), so the
    // port's errors are unknown since `since_wall_us`; and read again after that.
    kUnknown,
    kJudged,
  };
  Kind kind = Kind::kBad;
  std::string counter;                      // the counter it is about
  LinkFault fault = LinkFault::kBitErrors;  // kBad, kClean
  uint64_t count = 0;     // kBad: growth within the window; kHiddenDown: the downs unseen
  uint64_t allowed = 0;   // kBad: what the rule allows within the window (rounded down)
  uint32_t window_s = 0;  // kBad: the rule's window
  double ber = 0;         // kBad of bit_errors: the estimated bit error rate in the window
  uint64_t value = 0;     // the counter's value read
  std::string reason;     // kUnknown: "read_failing", "unreadable", "read_hung"; kJudged: the last
  int64_t since_wall_us = 0;  // kUnknown: since when
  friend bool operator==(const LinkQualityChange&, const LinkQualityChange&) = default;
};

// A port's link quality now, for status, metrics and the health model.
struct LinkQualityView {
  bool bad = false;
  std::vector<LinkFault> faults;  // why, when bad
  Instant since;                  // bad since; clean since the first sample when not
  // symbol_error growth over the longest window, per bit; none where it is not known: no
  // symbol_error read twice (a first read, a baseline, a port without counters/), no known
  // rate, or symbol_error pegged (it counts nothing more: 0 would say "no errors").
  std::optional<double> ber_estimate;
  std::vector<std::string> pegged;  // counters at their maximum: unknown since pegged_since
  std::map<std::string, int64_t> pegged_since_wall_us;
  std::map<std::string, uint64_t> values;  // the last values read, by counter name
  // Why the last sample could not judge the link, or "" when it judged it (a fault stays bad
  // whatever this says): "not_read" (no sample yet, or none since a restart), "link_down",
  // "no_error_counters" (no counter a rule reads: rxe), "pegged" (a counter a rule reads is at
  // its maximum), "rate_unknown" (the bit error rule needs the rate), "baseline" (a counter a
  // rule reads was read for the first time since the device was opened or the link came up:
  // the next sample judges it).
  std::string unknown;
  friend bool operator==(const LinkQualityView&, const LinkQualityView&) = default;
};

// A growth of a counter at a time: what a window counts.
struct GrowthStep {
  int64_t mono_us = 0;
  uint64_t growth = 0;
  friend bool operator==(const GrowthStep&, const GrowthStep&) = default;
};

// A port's whole state, to carry it across a restart of the daemon on the same boot (the
// document is core/link_quality_state's). Its times are CLOCK_MONOTONIC, as the windows'.
struct LinkQualityState {
  struct Counter {
    std::string name;
    uint64_t value = 0;  // the last value read
    bool has_baseline = false;
    bool pegged = false;
    int64_t pegged_since_wall_us = 0;
    int64_t last_growth_mono_us = 0;
    std::vector<GrowthStep> steps;  // oldest first
    friend bool operator==(const Counter&, const Counter&) = default;
  };
  struct Fault {
    LinkFault fault = LinkFault::kBitErrors;
    std::vector<std::string> counters;  // those whose growth made it bad, the first first
    int64_t last_over_mono_us = 0;      // the last sample its rule was over its allowance
    friend bool operator==(const Fault&, const Fault&) = default;
  };
  std::vector<Counter> counters;  // by name
  std::vector<Fault> faults;      // the bad ones, in LinkFault's order
  bool sampled = false;
  Instant since;
  Instant first_sample;
  Instant last_sample;
  LinkRate last_rate;
  uint32_t ber_window_s = 0;
  uint32_t downs_seen_pending = 0;
  friend bool operator==(const LinkQualityState&, const LinkQualityState&) = default;
};

// One port's counters over time.
class PortLinkQuality {
 public:
  // Judges one sample taken at `now`; appends what changed.
  void sample(const LinkQualityConfig& config, const PortSample& s, Instant now,
              std::vector<LinkQualityChange>& out);
  // What time alone does: a bad link whose clean period ended without a sample (the timer
  // samples every interval_s, so this is only the exact moment). Appends kClean changes.
  void advance(const LinkQualityConfig& config, Instant now, std::vector<LinkQualityChange>& out);
  // The next moment advance() has something to do, or none.
  std::optional<int64_t> next_deadline(const LinkQualityConfig& config) const;
  // The device was opened again (a driver reload, a replug): the next sample is a baseline.
  void forget_baseline();

  // The whole state, and back (a restart of the daemon on the same boot). The first read of
  // each counter after restore() spans the time the daemon was away: a value below the saved
  // one is a new baseline, silently (a driver reload or a reset while nobody watched); growth
  // is dated at the saved last sample, the earliest it can have happened, so that it counts
  // only in windows reaching back that far; link_downed growth is no hidden down (the events
  // of those downs were never the daemon's to see).
  LinkQualityState export_state() const;
  void restore(const LinkQualityState& state);
  // Changes with every change of the state other than time passing (a value read that
  // differs, a verdict, a pegged counter, downs pending): what is worth writing again.
  uint64_t revision() const { return revision_; }

  LinkQualityView view() const;
  bool bad() const;
  std::string_view unknown() const { return unknown_; }  // LinkQualityView::unknown
  // A counter's last value read with a baseline, or none (never read, or forgotten): cheaper
  // than view() on the event path.
  std::optional<uint64_t> last_value(const std::string& counter) const;
  // What a counter grew by in the last sample, across a wrap included: none when that sample
  // did not read it or could not tell (a baseline, a reset, pegged before).
  std::optional<uint64_t> last_growth(const std::string& counter) const;

  // Growth kept per counter is bounded: at most this many (time, growth) steps, the oldest
  // merged into the next one (so a count within a window is never too small).
  static constexpr size_t kMaxSteps = 256;

 private:
  static constexpr size_t kFaultCount = 3;

  using Step = GrowthStep;
  struct Counter {
    bool has_baseline = false;  // false before its first read and after forget_baseline()
    bool restored = false;      // restored, not read since: its next read spans the restart
    uint64_t value = 0;         // the last value read
    bool pegged = false;
    int64_t pegged_since_wall_us = 0;
    // The last read that could not tell when its errors were (a baseline, a reset, growth
    // across a restart): a clean period counts from no earlier.
    int64_t last_growth_mono_us = 0;
    std::deque<Step> steps;  // oldest first; only of counters a rule reads, with the link up
    std::optional<uint64_t> last_growth;  // in the last sample; not kept across a restart
  };
  struct Fault {
    bool bad = false;
    std::vector<std::string> counters;  // those whose growth made it bad, the first first
    int64_t last_over_mono_us = 0;      // the last sample its rule was over its allowance
  };
  // What one counter did in a sample, for the rules judged once all are read.
  struct Read {
    bool known = false;           // its growth is known: not a baseline, a reset or pegged before
    uint64_t growth = 0;          // when known
    bool pegged_now = false;      // it reached its maximum in this sample
    bool across_restart = false;  // the first read after restore()
  };

  Read read_counter(const CounterValue& c, bool link_up, bool keep_steps, Instant now,
                    std::vector<LinkQualityChange>& out);
  static void add_step(std::deque<Step>& steps, int64_t mono_us, uint64_t growth);
  // A literal: kept as a view, compared and copied for the cost of a pointer.
  static std::string_view unknown_after(const LinkQualityConfig& config, const PortSample& s,
                                        const std::map<std::string, Read>& reads,
                                        const std::map<std::string, Counter>& counters);
  void judge_hidden_down(const std::map<std::string, Read>& reads, uint32_t downs_seen,
                         std::vector<LinkQualityChange>& out);
  bool judgeable(const std::string& counter, const std::map<std::string, Read>& reads) const;
  void judge_bit_errors(const LinkQualityConfig& config, const PortSample& s, Instant now,
                        std::vector<LinkQualityChange>& out);
  void judge_growth_rule(const GrowthRule& rule, LinkFault fault, Instant now,
                         std::vector<LinkQualityChange>& out);
  void make_bad(LinkFault fault, const std::string& counter, Instant now, LinkQualityChange change,
                std::vector<LinkQualityChange>& out);
  uint64_t value_of(const std::string& counter) const;
  uint64_t growth_within(const std::string& counter, int64_t now_mono_us, uint32_t window_s) const;
  // Of the window (now - window_s, now], the seconds the link was up, as the samples saw it.
  double up_within(int64_t now_mono_us, uint32_t window_s) const;
  void trim_steps(const LinkQualityConfig& config, int64_t now_mono_us);
  std::optional<int64_t> clean_deadline(const Fault& f, const LinkQualityConfig& config) const;

  std::map<std::string, Counter> counters_;
  std::array<Fault, kFaultCount> faults_;
  bool sampled_ = false;  // since construction: forget_baseline() keeps it
  Instant since_;         // bad since, or clean since
  Instant first_sample_;  // the start of the steps: the BER estimate's time
  Instant last_sample_;
  LinkRate last_rate_;
  uint32_t ber_window_s_ = 0;        // the longest BER window of the last sample's config
  uint32_t downs_seen_pending_ = 0;  // port_errs not yet set against a read of link_downed
  bool last_link_up_ = false;        // the last sample's: a link that came up since is a baseline
  // The link's downs as the samples saw them (from a sample down to the next up; INT64_MAX
  // while down), within the longest window, oldest first, at most kMaxSteps: an allowance
  // scales with the time up. Not kept across a restart (the time away counts as up).
  std::deque<std::pair<int64_t, int64_t>> downs_;
  std::string_view unknown_ = "not_read";        // LinkQualityView::unknown (a literal)
  std::string_view bit_counter_ = kSymbolError;  // what the bit error rule reads on this port
  int64_t restored_sample_mono_us_ =
      0;  // the saved last sample: when growth across a restart is dated
  uint64_t revision_ = 0;
  bool changed_ = false;  // within one sample: something other than time changed
};

}  // namespace rdma_eventd::daemon
