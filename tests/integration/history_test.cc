// rdma-eventctl history against a real journal: the daemon on the simulator writes its records
// to the journal sandbox's journald, and the real rdma-eventctl reads them back from its
// directory: the exact records (--json), the monitor's filters, --host, --since/--until,
// --summary, the readable lines, and the errors of a journal that cannot be read.
#include <gtest/gtest.h>
#include <unistd.h>

#include <map>
#include <set>

#include "daemon_process.h"
#include "journal_sandbox.h"
#include "paths.h"
#include "test_support.h"

namespace rdma_eventd::test {
namespace {

using nlohmann::json;
using rdmatest::CommandResult;
using rdmatest::run_command;
using rdmatest::SimFabric;
using rdmatest::topology;

constexpr const char* kJournalDir = "/run/log/journal";

std::string host_name() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

// A daemon with health verdicts and a journal identifier of its own (so that only this test's
// entries match), an LID change on mlx5_0/1 and a flap of mlx5_1/1; `records` are the record
// lines it printed, `entries` the journal's entries of them.
class History : public ::testing::Test {
 protected:
  void SetUp() override {
    DaemonOptions o;
    o.config_json =
        json{{"journal", {{"identifier", identifier_}}}, {"health", {{"enabled", true}}}}.dump();
    daemon_ = std::make_unique<DaemonProcess>(sim_, o);
    inject(sim_, {"lid", "mlx5_0/1", "9"});
    inject(sim_, {"port", "down", "mlx5_1/1"});
    // The up only once the down's verdict is out: read in one batch, both events' records
    // would carry the port's state after both (one query per batch), and no down verdict
    // would come.
    read_until("down");
    inject(sim_, {"port", "up", "mlx5_1/1"});
    read_until("healthy");
    entries_ = daemon_->journal_entries(records_.size());
    ASSERT_EQ(entries_.size(), records_.size());
    for (size_t i = 0; i < records_.size(); ++i) {
      ASSERT_EQ(entries_[i]["RDMA_RECORD"], records_[i]) << "the journal has the exact record";
    }
  }

  // Reads record lines into records_ up to mlx5_1/1's port_health verdict `health`.
  void read_until(const std::string& health) {
    for (;;) {
      records_.push_back(daemon_->next_record_line(20s));
      const json r = json::parse(records_.back());
      if (r["event"] == "port_health" && r["device"] == "mlx5_1" && r["health"] == health) return;
    }
  }

  CommandResult history(std::vector<std::string> args) const {
    args.insert(args.begin(), {rdmatest::bin("rdma-eventctl"), "history", "--directory",
                               kJournalDir, "--identifier", identifier_});
    return run_command(args);
  }

  // The record lines history printed (--json), failing on a non-zero exit.
  std::vector<std::string> history_json(std::vector<std::string> args) const {
    args.push_back("--json");
    const CommandResult r = history(args);
    EXPECT_EQ(r.exit_code(), 0) << r.err;
    return r.out_lines();
  }

  // The records for which `keep` holds, in order.
  std::vector<std::string> records_where(const std::function<bool(const json&)>& keep) const {
    std::vector<std::string> out;
    for (const auto& line : records_) {
      if (keep(json::parse(line))) out.push_back(line);
    }
    return out;
  }

  int64_t realtime_of(size_t i) const {
    return std::stoll(entries_[i]["__REALTIME_TIMESTAMP"].get<std::string>());
  }

  // One per test: the tests of one process share the sandbox's journal.
  static inline int tests_ = 0;
  const std::string identifier_ =
      "rdma-history-test-" + std::to_string(getpid()) + "-" + std::to_string(++tests_);
  SimFabric sim_{topology("two-adapters")};
  std::unique_ptr<DaemonProcess> daemon_;
  std::vector<std::string> records_;
  std::vector<json> entries_;
};

TEST_F(History, JsonPrintsTheExactRecordsOldestFirst) {
  EXPECT_EQ(history_json({}), records_);
  EXPECT_EQ(history_json({"--host", host_name()}), records_);
  EXPECT_TRUE(history_json({"--host", "no-such-host"}).empty());
}

TEST_F(History, TakesTheMonitorsFilters) {
  const auto port_err = history_json({"--event", "port_err"});
  ASSERT_EQ(port_err.size(), 1u);
  EXPECT_EQ(json::parse(port_err[0])["device"], "mlx5_1");
  EXPECT_EQ(port_err, records_where([](const json& r) { return r["event"] == "port_err"; }));
  EXPECT_EQ(history_json({"--device", "mlx5_0"}),
            records_where([](const json& r) { return r["device"] == "mlx5_0"; }));
  EXPECT_EQ(history_json({"-p", "mlx5_1/1", "-e", "port_err,port_active"}),
            records_where([](const json& r) {
              return r["device"] == "mlx5_1" && r["port"] == 1 &&
                     (r["event"] == "port_err" || r["event"] == "port_active");
            }));
  const std::set<std::string> severe = {"error", "critical"};
  const auto errors = history_json({"--min-severity", "error"});
  EXPECT_FALSE(errors.empty());
  EXPECT_EQ(errors, records_where([&](const json& r) { return severe.count(r["severity"]) > 0; }));
}

TEST_F(History, SinceAndUntilTakeJournalctlTimes) {
  // The journal's own time of the middle entry, as "@seconds.micros".
  const size_t mid = entries_.size() / 2;
  const int64_t t = realtime_of(mid);
  char at[64];
  std::snprintf(at, sizeof at, "@%lld.%06lld", static_cast<long long>(t / 1000000),
                static_cast<long long>(t % 1000000));
  std::vector<std::string> from, to;
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (realtime_of(i) >= t) from.push_back(records_[i]);
    if (realtime_of(i) <= t) to.push_back(records_[i]);
  }
  EXPECT_EQ(history_json({"--since", at}), from);
  EXPECT_EQ(history_json({"--until", at}), to);
  EXPECT_EQ(history_json({"--since", at, "--until", at}), std::vector<std::string>{records_[mid]});

  EXPECT_EQ(history_json({"--since", "yesterday"}), records_);
  EXPECT_EQ(history_json({"-S", "2000-01-01 00:00", "-U", "tomorrow"}), records_);
  EXPECT_EQ(history_json({"--since", "-1h"}), records_);
  EXPECT_EQ(history_json({"--since", "1h ago"}), records_);
  EXPECT_TRUE(history_json({"--until", "-30min"}).empty());
  EXPECT_TRUE(history_json({"--until", "2000-01-01"}).empty());
  EXPECT_TRUE(history_json({"--since", "tomorrow"}).empty());

  const CommandResult bad = history({"--since", "soon"});
  EXPECT_EQ(bad.exit_code(), 64);
  EXPECT_EQ(bad.err, "rdma-eventctl: --since: not a time: 'soon'\nTry 'rdma-eventctl --help'.\n");
  EXPECT_EQ(history({"--since", "now", "--until", "-1h"}).exit_code(), 64);
}

TEST_F(History, SummaryCountsEventsAndTheLastVerdictPerHostAndPort) {
  // What the summary must say, from the records themselves.
  std::map<std::pair<std::string, int>, std::map<std::string, int>> counts;
  std::map<std::pair<std::string, int>, std::string> health;
  for (const auto& line : records_) {
    const json r = json::parse(line);
    const auto key = std::make_pair(r["device"].get<std::string>(), r["port"].get<int>());
    ++counts[key][r["event"].get<std::string>()];
    if (r["event"] == "port_health") health[key] = r["health"];
  }
  const CommandResult r = history({"--summary", "--json"});
  ASSERT_EQ(r.exit_code(), 0) << r.err;
  std::map<std::pair<std::string, int>, std::map<std::string, int>> seen;
  for (const auto& line : r.out_lines()) {
    const json row = json::parse(line);
    EXPECT_EQ(row["host"], host_name());
    const auto key = std::make_pair(row["device"].get<std::string>(), row["port"].get<int>());
    seen[key] = row["events"].get<std::map<std::string, int>>();
    if (health.count(key)) {
      EXPECT_EQ(row["health"], health[key]) << line;
    } else {
      EXPECT_TRUE(row["health"].is_null()) << line;
    }
  }
  EXPECT_EQ(seen, counts);
  EXPECT_EQ(health[std::make_pair(std::string("mlx5_1"), 1)], "healthy");
  EXPECT_EQ(counts[std::make_pair(std::string("mlx5_1"), 1)]["port_err"], 1);

  // The same for people: a header, then one line per host and port.
  const CommandResult text = history({"--summary", "-d", "mlx5_1", "-e", "port_err,port_health"});
  ASSERT_EQ(text.exit_code(), 0) << text.err;
  const auto lines = text.out_lines();
  ASSERT_EQ(lines.size(), 3u) << text.out;
  EXPECT_EQ(lines[0].rfind("HOST", 0), 0u) << lines[0];
  EXPECT_EQ(lines[1].substr(lines[1].find(" mlx5_1/1 ")),
            " mlx5_1/1       healthy  port_err 1, port_health 3")
      << lines[1];
  EXPECT_EQ(lines[2].substr(lines[2].find(" mlx5_1/2 ")), " mlx5_1/2       healthy  port_health 1")
      << lines[2];
}

TEST_F(History, ReadableLinesAreTheHostThenTheMonitorsFormat) {
  const CommandResult r = history({"--color", "never"});
  ASSERT_EQ(r.exit_code(), 0) << r.err;
  const auto lines = r.out_lines();
  ASSERT_EQ(lines.size(), records_.size()) << r.out;
  for (size_t i = 0; i < lines.size(); ++i) {
    const json record = json::parse(records_[i]);
    EXPECT_EQ(lines[i].rfind(host_name() + "  " + record["time"].get<std::string>(), 0), 0u)
        << lines[i];
    EXPECT_NE(lines[i].find("[seq " + std::to_string(record["seq"].get<int>()) + "]"),
              std::string::npos)
        << lines[i];
    EXPECT_NE(lines[i].find(record["event"].get<std::string>()), std::string::npos) << lines[i];
  }
}

TEST_F(History, AUserWhoMayNotReadTheJournalIsToldWhoMay) {
  const std::string dir(kJournalDir);
  const CommandResult denied =
      run_command({"setpriv", "--reuid=4242", "--regid=4242", "--clear-groups",
                   rdmatest::bin("rdma-eventctl"), "history", "--directory", dir});
  EXPECT_EQ(denied.exit_code(), 77) << denied.out << denied.err;
  EXPECT_EQ(denied.err, "rdma-eventctl: cannot read the journal in " + dir +
                            ": permission denied; root and the members of the groups "
                            "'systemd-journal' and 'adm' may read it\n");
  EXPECT_EQ(denied.out, "");

  rdmatest::TempDir empty("rdma-history-empty");
  const CommandResult none =
      run_command({rdmatest::bin("rdma-eventctl"), "history", "--directory", empty.path()});
  EXPECT_EQ(none.exit_code(), 66) << none.err;
  EXPECT_EQ(none.err, "rdma-eventctl: no journal files in " + empty.path() + "\n");
}

}  // namespace
}  // namespace rdma_eventd::test
