// What a budget summary says in the journal: a sentence for a person, and fields from which a
// program can account for every record the journal did not get.
#include <algorithm>

#include "core/journal_budget.h"

namespace rdma_eventd::daemon {
namespace {

// 4812 -> "4,812"
std::string grouped(uint64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// Whole seconds, rounded up: a summary cut short at stop still says "the last 1 s".
std::string seconds_text(int64_t duration_us) {
  const int64_t s = std::max<int64_t>((duration_us + kMicrosPerSecond - 1) / kMicrosPerSecond, 1);
  return std::to_string(s) + " s";
}

std::string seq_text(uint64_t first, uint64_t last) {
  return first == last ? std::to_string(first)
                       : std::to_string(first) + "\u2013" + std::to_string(last);
}

// "1200-1300:50,1400-6011:4700"
std::string ranges_text(const std::vector<SeqRange>& ranges) {
  std::string out;
  for (const SeqRange& r : ranges) {
    if (!out.empty()) out += ',';
    out += std::to_string(r.first) + "-" + std::to_string(r.last) + ":" + std::to_string(r.count);
  }
  return out;
}

}  // namespace

std::string summary_message(const BudgetSummary& s) {
  const bool host = s.device.empty();
  const bool one = s.not_journaled == 1;
  std::string text = host ? "host: " : s.device + " port " + std::to_string(s.port) + ": ";
  text += grouped(s.not_journaled);
  text += host ? " device record" : " record";
  text += one ? "" : "s";
  text += " not journaled in the last " + seconds_text(s.duration_us);
  if (!s.health.empty()) text += " (" + s.health + ")";
  text += one ? "; subscribers were sent it, seq " : "; subscribers were sent all of them, seq ";
  text += seq_text(s.first_seq, s.last_seq);
  if (s.journaled_between > 0)
    text += " (" + grouped(s.journaled_between) + " journaled in between)";
  return text;
}

std::vector<std::string> summary_journal_fields(const BudgetSummary& s,
                                                std::string_view identifier) {
  std::vector<std::string> f;
  f.reserve(20);
  f.push_back("MESSAGE=" + summary_message(s));
  f.push_back("PRIORITY=" + std::to_string(syslog_priority(Severity::kWarning)));
  f.push_back("MESSAGE_ID=" + std::string(kBudgetSummaryMessageId));
  f.push_back("SYSLOG_IDENTIFIER=" + std::string(identifier));
  f.push_back(std::string("RDMA_BUDGET_SCOPE=") + (s.device.empty() ? "host" : "port"));
  if (!s.device.empty()) {
    f.push_back("RDMA_DEVICE=" + s.device);
    f.push_back("RDMA_NODE_GUID=" + s.node_guid);
    f.push_back("RDMA_PORT=" + std::to_string(s.port));
  }
  if (!s.health.empty()) f.push_back("RDMA_HEALTH=" + s.health);
  f.push_back("RDMA_STREAM=" + s.stream);
  f.push_back("RDMA_NOT_JOURNALED=" + std::to_string(s.not_journaled));
  f.push_back("RDMA_FIRST_SEQ=" + std::to_string(s.first_seq));
  f.push_back("RDMA_LAST_SEQ=" + std::to_string(s.last_seq));
  f.push_back("RDMA_JOURNALED_BETWEEN=" + std::to_string(s.journaled_between));
  f.push_back("RDMA_SEQ_RANGES=" + ranges_text(s.ranges));
  f.push_back(std::string("RDMA_SEQ_RANGES_COMPLETE=") + (s.ranges_complete ? "1" : "0"));
  f.push_back("RDMA_OVER_PORT_BUDGET=" + std::to_string(s.over_port_budget));
  f.push_back("RDMA_OVER_HOST_BUDGET=" + std::to_string(s.over_host_budget));
  f.push_back("RDMA_INTERVAL_START=" + format_rfc3339_us(s.start.wall_us));
  f.push_back("RDMA_INTERVAL_US=" + std::to_string(s.duration_us));
  return f;
}

}  // namespace rdma_eventd::daemon
