// docs/benchmarks.md from the results run.sh collected: one JSON line per measurement, each
// with a "figure" name and a "run" number. report.cc writes the page's frame (the machine,
// the command, the targets); report_tables.cc the section of each figure.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace rdma_eventd::bench {

// The figure `run.sh --instructions` writes for the 1-device storm with the journal off: the
// instructions the daemon ran per event under callgrind ("per_event").
inline constexpr const char* kInstructionsFigure = "instructions.storm.one.journal_off";

// The median and the spread of one figure over the runs.
struct Spread {
  double median = 0, min = 0, max = 0;
  size_t n = 0;
};
std::optional<Spread> spread_of(std::vector<double> values);

// Every result, grouped by figure name, in run order.
class Results {
 public:
  explicit Results(const std::string& path);
  const std::vector<nlohmann::json>& of(const std::string& figure) const;
  // One number of every run of `figure` (results without `key` are left out).
  std::vector<double> values(const std::string& figure, const std::string& key) const;
  std::optional<Spread> spread(const std::string& figure, const std::string& key) const {
    return spread_of(values(figure, key));
  }
  // a[key] / b[key] run by run (the runs of a and b that have the same run number).
  std::optional<Spread> ratio(const std::string& a, const std::string& b,
                              const std::string& key) const;
  // Sum of `key` over every run of `figure`.
  double total(const std::string& figure, const std::string& key) const;
  // The first result of `figure` (for its parameters), or null.
  nlohmann::json first(const std::string& figure) const;

 private:
  std::vector<std::pair<std::string, std::vector<nlohmann::json>>> figures_;
};

// Text of numbers as the report writes them.
std::string grouped(double v);              // 1,234,567
std::string fixed(double v, int decimals);  // 12.3
std::string median_only(const std::optional<Spread>& s, int decimals, bool group = false);
std::string with_spread(const std::optional<Spread>& s, int decimals, bool group = false);
std::string spread_only(const std::optional<Spread>& s, int decimals, bool group = false);

// One line of the targets table: what was measured against what was promised.
struct TargetRow {
  std::string figure;
  std::string median;
  std::string spread;
  std::string target;
  std::string met;  // "yes", "**no**", or why it cannot be said
};
std::string met_text(std::optional<bool> met);
// A section whose figures this run has none of: it says so, and its target is not measured.
void not_measured(std::ostringstream& out, std::vector<TargetRow>& targets, std::string figure,
                  std::string target);

// The sections, in the report's order; each appends its targets to `targets`.
void storm_section(std::ostringstream& out, const Results& r, std::vector<TargetRow>& targets);
void latency_section(std::ostringstream& out, const Results& r, std::vector<TargetRow>& targets);
void fanout_section(std::ostringstream& out, const Results& r, std::vector<TargetRow>& targets);
// After latency and fan-out: it adds the floor to their target rows.
void floor_section(std::ostringstream& out, const Results& r, std::vector<TargetRow>& targets);
void idle_section(std::ostringstream& out, const Results& r, std::vector<TargetRow>& targets);
void memory_section(std::ostringstream& out, const Results& r, std::vector<TargetRow>& targets);
void startup_section(std::ostringstream& out, const Results& r, std::vector<TargetRow>& targets);
void slow_query_section(std::ostringstream& out, const Results& r, std::vector<TargetRow>& targets);
void health_section(std::ostringstream& out, const Results& r, std::vector<TargetRow>& targets);

}  // namespace rdma_eventd::bench
