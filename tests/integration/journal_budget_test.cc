// The journal budget end to end (docs/health.md): the real daemon on the simulator with a small
// budget, its records read from its output and its entries back from a real journald. A port
// over its budget gets its burst journaled, then one summary that covers exactly the rest; other
// ports keep their own budget; the host's budget caps them all; a reload that changes the budget
// and a stop write what is pending at once. Every record is accounted for: journaled once, or
// inside exactly one summary of its port.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "daemon_process.h"
#include "journal_sandbox.h"
#include "paths.h"
#include "test_support.h"

namespace rdma_eventd::test {
namespace {

using nlohmann::json;
using rdmatest::SimFabric;
using rdmatest::topology;

constexpr const char* kSummaryId = "a105a327ff284edaa9d0ced1b833b9d9";

std::string budget_config(int port_burst, int host_burst, int interval_s) {
  // Rates of 1 a second: a storm is over long before they refill a token worth counting on.
  return json{{"journal",
               {{"budget",
                 {{"port_rate", 1},
                  {"port_burst", port_burst},
                  {"host_rate", 1},
                  {"host_burst", host_burst},
                  {"summary_interval_s", interval_s}}}}}}
      .dump();
}

uint64_t field(const json& entry, const char* name) {
  return std::stoull(entry.at(name).get<std::string>());
}

// "mlx5_0/1", or "host" for a record not about one port.
std::string key_of(const Record& r) {
  return r.port_info ? r.device + "/" + std::to_string(r.port) : "host";
}
std::string key_of_summary(const json& s) {
  return s.at("RDMA_BUDGET_SCOPE") == "host"
             ? "host"
             : s.at("RDMA_DEVICE").get<std::string>() + "/" + s.at("RDMA_PORT").get<std::string>();
}

// What the journal holds for one stream: the records' seqs and the summaries.
struct JournalView {
  std::set<uint64_t> journaled;
  std::vector<json> summaries;
};

JournalView journal_of(const std::string& stream) {
  JournalView v;
  for (const json& e : JournalSandbox::instance().entries({"RDMA_STREAM=" + stream})) {
    if (e.value("MESSAGE_ID", "") == kSummaryId) {
      v.summaries.push_back(e);
    } else {
      EXPECT_TRUE(v.journaled.insert(field(e, "RDMA_SEQ")).second) << "journaled twice: " << e;
    }
  }
  return v;
}

// Waits for `count` summaries of the stream in the journal.
void wait_for_summaries(const std::string& stream, size_t count) {
  JournalSandbox::instance().follow(
      {"-o", "json", "RDMA_STREAM=" + stream, std::string("MESSAGE_ID=") + kSummaryId}, count,
      std::chrono::seconds(30));
}

// Every record is either journaled or in exactly one summary of its port, never both: a
// summary's range [first, last] holds exactly not_journaled + journaled_between records of its
// port, journaled_between of them in the journal.
void expect_every_record_accounted_for(const std::vector<Record>& records, const JournalView& j) {
  std::map<uint64_t, std::string> key_by_seq;
  for (const Record& r : records)
    key_by_seq[r.seq] = key_of(r);
  std::map<uint64_t, int> summarized;
  for (const json& s : j.summaries) {
    const std::string key = key_of_summary(s);
    uint64_t in_range = 0, journaled = 0;
    for (uint64_t seq = field(s, "RDMA_FIRST_SEQ"); seq <= field(s, "RDMA_LAST_SEQ"); ++seq) {
      if (key_by_seq.count(seq) == 0 || key_by_seq[seq] != key) continue;
      ++in_range;
      if (j.journaled.count(seq)) {
        ++journaled;
      } else {
        ++summarized[seq];
      }
    }
    EXPECT_EQ(in_range, field(s, "RDMA_NOT_JOURNALED") + field(s, "RDMA_JOURNALED_BETWEEN")) << s;
    EXPECT_EQ(journaled, field(s, "RDMA_JOURNALED_BETWEEN")) << s;
  }
  for (const Record& r : records) {
    const int times = (j.journaled.count(r.seq) ? 1 : 0) + summarized[r.seq];
    EXPECT_EQ(times, 1) << "seq " << r.seq << " (" << key_of(r) << ") is accounted for " << times
                        << " times";
  }
}

std::vector<Record> read_records(DaemonProcess& daemon, int n) {
  std::vector<Record> out;
  for (int i = 0; i < n; ++i)
    out.push_back(daemon.next_record());
  return out;
}

TEST(JournalBudget, APortOverItsBudgetGetsItsBurstThenOneSummaryForTheRest) {
  SimFabric sim(topology("two-adapters"));
  DaemonProcess daemon(sim, budget_config(5, 1000, 1));
  inject(sim, {"storm", "--count", "20", "--targets", "mlx5_0/1"});
  std::vector<Record> records = read_records(daemon, 20);
  // Another port keeps its own budget: its records are all journaled.
  inject(sim, {"storm", "--count", "5", "--targets", "mlx5_1/1"});
  for (Record& r : read_records(daemon, 5))
    records.push_back(std::move(r));

  wait_for_summaries(daemon.stream(), 1);
  const json status = daemon.status()["journal"];
  const JournalView j = journal_of(daemon.stream());
  ASSERT_EQ(j.summaries.size(), 1u);
  const json& s = j.summaries[0];
  // The burst: seq 1-5, journaled as they came.
  for (uint64_t seq = 1; seq <= 5; ++seq)
    EXPECT_TRUE(j.journaled.count(seq)) << "seq " << seq << " of the burst is not journaled";
  // The summary covers the rest of the port's records, 6-20, exactly.
  EXPECT_EQ(s["RDMA_BUDGET_SCOPE"], "port");
  EXPECT_EQ(s["RDMA_DEVICE"], "mlx5_0");
  EXPECT_EQ(s["RDMA_PORT"], "1");
  EXPECT_EQ(s["RDMA_NODE_GUID"], "0c42:a103:00f6:5e44");
  EXPECT_EQ(s["PRIORITY"], "4");
  EXPECT_EQ(s["RDMA_FIRST_SEQ"], "6");
  EXPECT_EQ(s["RDMA_LAST_SEQ"], "20");
  EXPECT_EQ(field(s, "RDMA_NOT_JOURNALED") + field(s, "RDMA_JOURNALED_BETWEEN"), 15u);
  EXPECT_EQ(field(s, "RDMA_OVER_PORT_BUDGET"), field(s, "RDMA_NOT_JOURNALED"));
  EXPECT_EQ(s["RDMA_OVER_HOST_BUDGET"], "0");
  EXPECT_EQ(s["RDMA_SEQ_RANGES_COMPLETE"], "1");
  EXPECT_NE(s["MESSAGE"].get<std::string>().find("mlx5_0 port 1: "), std::string::npos) << s;
  // The other port: seq 21-25, each journaled.
  for (uint64_t seq = 21; seq <= 25; ++seq)
    EXPECT_TRUE(j.journaled.count(seq)) << "seq " << seq << " of mlx5_1/1 is not journaled";
  expect_every_record_accounted_for(records, j);

  EXPECT_EQ(status["budget"], true);
  EXPECT_EQ(status["not_journaled"], field(s, "RDMA_NOT_JOURNALED"));
  EXPECT_EQ(status["summaries"], 1);
  EXPECT_EQ(status["written"], j.journaled.size());
}

TEST(JournalBudget, TheHostsBudgetCapsEveryPortTogether) {
  // Each port may send 100 at once, but the host only 10: 6 records of one port and 4 of
  // another are journaled, and then each port's next records are refused by the host's budget
  // (a device's events are read together, so the storms come one after the other; the host's
  // rate of 1 a second may give back a token between them, not 5).
  SimFabric sim(topology("two-adapters"));
  DaemonProcess daemon(sim, budget_config(100, 10, 1));
  std::vector<Record> records;
  for (const auto& [target, count] : {std::pair{"mlx5_0/1", 6}, {"mlx5_1/1", 6}, {"mlx5_0/1", 5}}) {
    inject(sim, {"storm", "--count", std::to_string(count), "--targets", target});
    for (Record& r : read_records(daemon, count))
      records.push_back(std::move(r));
  }

  wait_for_summaries(daemon.stream(), 2);
  const JournalView j = journal_of(daemon.stream());
  ASSERT_EQ(j.summaries.size(), 2u);
  for (uint64_t seq = 1; seq <= 10; ++seq)
    EXPECT_TRUE(j.journaled.count(seq)) << "seq " << seq << " of the host's burst";
  std::set<std::string> ports;
  uint64_t refused = 0;
  for (const json& s : j.summaries) {
    ports.insert(key_of_summary(s));
    EXPECT_EQ(s["RDMA_OVER_PORT_BUDGET"], "0") << s;
    EXPECT_EQ(field(s, "RDMA_OVER_HOST_BUDGET"), field(s, "RDMA_NOT_JOURNALED")) << s;
    refused += field(s, "RDMA_NOT_JOURNALED");
  }
  EXPECT_EQ(ports, (std::set<std::string>{"mlx5_0/1", "mlx5_1/1"}));
  EXPECT_EQ(refused + j.journaled.size(), 17u);
  expect_every_record_accounted_for(records, j);
}

TEST(JournalBudget, AReloadThatChangesTheBudgetAndAStopWriteThePendingSummaries) {
  // An interval of an hour: only the reload and the stop can write the summaries.
  SimFabric sim(topology("two-adapters"));
  DaemonProcess daemon(sim, budget_config(5, 1000, 3600));
  inject(sim, {"storm", "--count", "8", "--targets", "mlx5_0/1"});
  std::vector<Record> records = read_records(daemon, 8);
  // A status request is answered after the batch was published: the budget has decided.
  json status = daemon.status()["journal"];
  EXPECT_EQ(status["not_journaled"], 3);
  EXPECT_EQ(status["summaries"], 0) << "pending until the interval ends";

  daemon.write_config(budget_config(6, 1000, 3600));
  daemon.reload();
  daemon.require_log("journal budget: port 1/s burst 6");
  wait_for_summaries(daemon.stream(), 1);
  status = daemon.status()["journal"];
  EXPECT_EQ(status["summaries"], 1);

  // The new budget starts full: 6 more journaled, then 2 pending until the stop.
  inject(sim, {"storm", "--count", "8", "--targets", "mlx5_0/1"});
  for (Record& r : read_records(daemon, 8))
    records.push_back(std::move(r));
  const std::string stream = daemon.stream();
  const rdmatest::ExitStatus exit = daemon.stop();
  EXPECT_TRUE(exit.success()) << exit.describe() << "\n" << daemon.log_tail();

  wait_for_summaries(stream, 2);
  const JournalView j = journal_of(stream);
  ASSERT_EQ(j.summaries.size(), 2u);
  EXPECT_EQ(j.summaries[0]["RDMA_FIRST_SEQ"], "6");
  EXPECT_EQ(j.summaries[0]["RDMA_LAST_SEQ"], "8");
  EXPECT_EQ(j.summaries[0]["RDMA_NOT_JOURNALED"], "3");
  EXPECT_EQ(j.summaries[1]["RDMA_FIRST_SEQ"], "15");
  EXPECT_EQ(j.summaries[1]["RDMA_LAST_SEQ"], "16");
  EXPECT_EQ(j.summaries[1]["RDMA_NOT_JOURNALED"], "2");
  for (const json& s : j.summaries)  // cut short, long before the hour
    EXPECT_LT(field(s, "RDMA_INTERVAL_US"), 600u * 1000000) << s;
  EXPECT_EQ(j.journaled.size(), 11u);
  expect_every_record_accounted_for(records, j);
}

TEST(JournalBudget, TurnedOffEveryRecordIsJournaled) {
  SimFabric sim(topology("two-adapters"));
  DaemonProcess daemon(sim, R"({"journal": {"budget": {"enabled": false, "port_burst": 5}}})");
  inject(sim, {"storm", "--count", "50", "--targets", "mlx5_0/1"});
  read_records(daemon, 50);
  const auto entries = daemon.journal_entries(50);
  ASSERT_EQ(entries.size(), 50u);
  for (size_t i = 0; i < entries.size(); ++i)
    EXPECT_EQ(entries[i]["RDMA_SEQ"], std::to_string(i + 1));
  const json status = daemon.status()["journal"];
  EXPECT_EQ(status["budget"], false);
  EXPECT_EQ(status["not_journaled"], 0);
  EXPECT_EQ(status["summaries"], 0);
}

}  // namespace
}  // namespace rdma_eventd::test
