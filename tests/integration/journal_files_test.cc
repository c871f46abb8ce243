// rdma-eventctl history -D over more journal files than it may open at once, and over files it
// cannot read. rdma-journal-gen writes a fleet of 200 hosts, a file each, every host in an
// incident (tests/harness/journal_gen.cc, "many-hosts"); the real rdma-eventctl reads it under
// prlimit: a soft limit of 64 open files (which it raises to the hard one), and a hard limit of
// 64 (groups of files merged into temporary runs). The result must be the same as with a high
// limit, to the byte. A file that cannot be read is named on stderr and the exit status is 74.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "paths.h"
#include "process.h"
#include "rdma_eventd/record.h"
#include "temp_dir.h"

namespace rdma_eventd::test {
namespace {

using nlohmann::json;
using rdmatest::CommandResult;
using rdmatest::run_command;

constexpr int kHosts = 200;
constexpr int kLeaves = kHosts / 20;
constexpr int kRecords = 1470;  // what rdma-journal-gen says it wrote

std::string host_name(int i) {  // 1-based, as rdma-journal-gen names them
  char name[16];
  std::snprintf(name, sizeof name, "node%04d", i);
  return name;
}

class JournalFiles : public ::testing::Test {
 protected:
  // The fleet is written once (tests/integration/journal_fleet.sh): under ctest by its fixture,
  // which names it in RDMA_TEST_JOURNAL_FLEET; by hand, once for every test of the program, and
  // removed when the program ends.
  static void SetUpTestSuite() {
    static rdmatest::TempDir own("rdma-many-files");
    static std::string dir;
    if (dir.empty()) {
      const char* fixture = std::getenv("RDMA_TEST_JOURNAL_FLEET");
      dir = fixture ? fixture : own.file("fleet");
      if (!fixture) {
        const CommandResult gen =
            run_command({"sh", rdmatest::source_dir() + "/tests/integration/journal_fleet.sh", dir,
                         rdmatest::bin("rdma-journal-gen")},
                        {}, std::chrono::seconds(300));
        ASSERT_EQ(gen.exit_code(), 0) << gen.err;
      }
    }
    fleet_ = dir;
    std::ifstream said(dir + ".out");
    const std::string out{std::istreambuf_iterator<char>(said), {}};
    ASSERT_EQ(out, std::to_string(kHosts) + " hosts, " + std::to_string(kRecords) + " records\n")
        << "what rdma-journal-gen said, in " << dir << ".out";
  }

  static std::string fleet_file(const std::string& name) { return fleet_ + "/" + name; }

  // rdma-eventctl history -D DIR ARGS..., under `prlimit --nofile=LIMIT` when one is given.
  static CommandResult history(const std::string& dir, std::vector<std::string> args,
                               const std::string& limit = "") {
    args.insert(args.begin(), {rdmatest::bin("rdma-eventctl"), "history", "-D", dir});
    if (!limit.empty()) args.insert(args.begin(), {"prlimit", "--nofile=" + limit});
    return run_command(args, {}, std::chrono::seconds(120));
  }

  static inline std::string fleet_;
};

// The incidents the scenario makes: per leaf of 20 hosts, a fabric incident of exactly those
// hosts, then the flap of its eighth host's port.
void expect_every_hosts_incidents(const std::vector<std::string>& lines) {
  ASSERT_EQ(lines.size(), 2u * kLeaves);
  std::set<std::string> hosts_seen;
  for (int leaf = 0; leaf < kLeaves; ++leaf) {
    const json fabric = json::parse(lines[2 * leaf]);
    const json flap = json::parse(lines[2 * leaf + 1]);
    EXPECT_EQ(fabric["class"], "fabric") << fabric.dump();
    std::vector<std::string> hosts;
    for (const auto& h : fabric["hosts"])
      hosts.push_back(h["host"]);
    std::vector<std::string> leaf_hosts;
    for (int i = 1; i <= 20; ++i)
      leaf_hosts.push_back(host_name(leaf * 20 + i));
    EXPECT_EQ(hosts, leaf_hosts);
    EXPECT_EQ(fabric["records"], 60);
    EXPECT_EQ(flap["class"], "port") << flap.dump();
    ASSERT_EQ(flap["hosts"].size(), 1u);
    EXPECT_EQ(flap["hosts"][0]["host"], host_name(leaf * 20 + 8));
    EXPECT_EQ(flap["records"], 4);
    hosts_seen.insert(hosts.begin(), hosts.end());
  }
  EXPECT_EQ(hosts_seen.size(), static_cast<size_t>(kHosts));
}

TEST_F(JournalFiles, IncidentsCountEveryFileWhateverTheLimitOfOpenFiles) {
  const CommandResult high = history(fleet_, {"--incidents", "--json"});
  ASSERT_EQ(high.exit_code(), 0) << high.err;
  EXPECT_EQ(high.err, "");
  expect_every_hosts_incidents(high.out_lines());
  // A soft limit below the files, a hard one above: raised, as journalctl raises it.
  const CommandResult soft = history(fleet_, {"--incidents", "--json"}, "64:4096");
  EXPECT_EQ(soft.exit_code(), 0) << soft.err;
  EXPECT_EQ(soft.err, "");
  EXPECT_EQ(soft.out, high.out);
  // A hard limit below the files: groups of files, runs, then the runs merged.
  const CommandResult hard = history(fleet_, {"--incidents", "--json"}, "64:64");
  EXPECT_EQ(hard.exit_code(), 0) << hard.err;
  EXPECT_EQ(hard.err, "");
  EXPECT_EQ(hard.out, high.out);
  // The text, too (newest first).
  const CommandResult text = history(fleet_, {"--incidents"});
  const CommandResult text_hard = history(fleet_, {"--incidents"}, "64:64");
  EXPECT_EQ(text_hard.exit_code(), 0) << text_hard.err;
  EXPECT_EQ(text_hard.out, text.out);
  EXPECT_EQ(std::count(text.out.begin(), text.out.end(), '\n'), kLeaves * (12 + 2));
}

TEST_F(JournalFiles, HistoryPrintsEveryRecordOfEveryFileWhateverTheLimitOfOpenFiles) {
  const CommandResult high = history(fleet_, {"--json"});
  ASSERT_EQ(high.exit_code(), 0) << high.err;
  EXPECT_EQ(high.err, "");
  const auto lines = high.out_lines();
  ASSERT_EQ(lines.size(), static_cast<size_t>(kRecords));
  std::set<std::string> hosts;
  int64_t previous = 0;
  for (const auto& line : lines) {
    const json r = json::parse(line);
    hosts.insert(r["host"].get<std::string>());
    const int64_t t = *parse_rfc3339_us(r["time"].get<std::string>());
    EXPECT_LE(previous, t) << "oldest first";
    previous = t;
  }
  EXPECT_EQ(hosts.size(), static_cast<size_t>(kHosts));
  for (const char* limit : {"64:4096", "64:64"}) {
    const CommandResult limited = history(fleet_, {"--json"}, limit);
    EXPECT_EQ(limited.exit_code(), 0) << limit << ": " << limited.err;
    EXPECT_EQ(limited.err, "") << limit;
    EXPECT_EQ(limited.out, high.out) << limit;
  }
  const CommandResult summary = history(fleet_, {"--summary", "--json"});
  const CommandResult summary_hard = history(fleet_, {"--summary", "--json"}, "64:64");
  EXPECT_EQ(summary.out_lines().size(), static_cast<size_t>(kHosts));
  EXPECT_EQ(summary_hard.out, summary.out);
}

// A copy of some of the fleet's files, and files that are not journal files or are damaged.
class Damaged : public JournalFiles {
 protected:
  void SetUp() override {
    // The first leaf's 20 hosts, whole.
    std::string copy = "cp --sparse=always";
    for (int i = 1; i <= 20; ++i)
      copy += " " + fleet_file("remote-" + host_name(i) + ".journal");
    const CommandResult copied = run_command({"sh", "-c", copy + " " + dir_.path()});
    ASSERT_EQ(copied.exit_code(), 0) << copied.err;
    dir_.write("remote-garbage.journal", "not a journal\n");
    // The first 64 KiB of the next leaf's first host: its header promises more than is there.
    const CommandResult cut =
        run_command({"sh", "-c",
                     "head -c 65536 " + fleet_file("remote-node0021.journal") + " >" +
                         dir_.file("remote-node0021.journal")});
    ASSERT_EQ(cut.exit_code(), 0) << cut.err;
  }

  // The lines of `out` about the first leaf's hosts only, from the whole fleet's output.
  static std::string first_leaf_records(const std::string& whole) {
    std::string out;
    for (const auto& line : CommandResult{{}, whole, {}}.out_lines()) {
      const std::string host = json::parse(line)["host"];
      if (host <= host_name(20)) out += line + "\n";
    }
    return out;
  }

  std::string unreadable_lines() const {
    const std::string why =
        ": cannot open: No data available (not a journal file, or a damaged "
        "one); left out\n";
    return "rdma-eventctl: " + dir_.file("remote-garbage.journal") + why +
           "rdma-eventctl: " + dir_.file("remote-node0021.journal") + why +
           "rdma-eventctl: incomplete: 2 of 22 journal files left out (named above)\n";
  }

  rdmatest::TempDir dir_{"rdma-damaged-files"};
};

TEST_F(Damaged, AFileThatCannotBeReadIsNamedAndTheExitStatusSaysSo) {
  const CommandResult whole = history(fleet_, {"--incidents", "--json"});
  ASSERT_EQ(whole.exit_code(), 0) << whole.err;
  const auto whole_lines = whole.out_lines();
  ASSERT_GE(whole_lines.size(), 2u);

  const CommandResult incidents = history(dir_.path(), {"--incidents", "--json"});
  EXPECT_EQ(incidents.exit_code(), 74);
  EXPECT_EQ(incidents.err, unreadable_lines());
  // Everything the readable files hold: the first leaf's fabric incident and flap.
  EXPECT_EQ(incidents.out, whole_lines[0] + "\n" + whole_lines[1] + "\n");
  // The same in groups of files.
  const CommandResult grouped = history(dir_.path(), {"--incidents", "--json"}, "24:24");
  EXPECT_EQ(grouped.exit_code(), 74);
  EXPECT_EQ(grouped.err, unreadable_lines());
  EXPECT_EQ(grouped.out, incidents.out);

  const CommandResult records = history(dir_.path(), {"--json"});
  EXPECT_EQ(records.exit_code(), 74);
  EXPECT_EQ(records.err, unreadable_lines());
  EXPECT_EQ(records.out, first_leaf_records(history(fleet_, {"--json"}).out));
  EXPECT_EQ(records.out_lines().size(), 20u * 7 + 7);  // node0008's flap too
}

TEST_F(Damaged, AFileThisUserMayNotReadIsNamedAndTheOthersAreRead) {
  // The copies belong to user 4242, but for node0003's, which stays root's (0640).
  ASSERT_EQ(::chmod(dir_.path().c_str(), 0755), 0);
  const CommandResult owned = run_command(
      {"sh", "-c",
       "cd " + dir_.path() +
           " && rm remote-garbage.journal remote-node0021.journal && chown 4242:4242 *.journal "
           "&& chown root:root remote-node0003.journal"});
  ASSERT_EQ(owned.exit_code(), 0) << owned.err;
  const std::string expected_err = "rdma-eventctl: " + dir_.file("remote-node0003.journal") +
                                   ": cannot open: Permission denied; left out\n"
                                   "rdma-eventctl: incomplete: 1 of 20 journal files left out "
                                   "(named above)\n";
  for (const char* flag : {"--incidents", "--summary"}) {
    const CommandResult r =
        run_command({"setpriv", "--reuid=4242", "--regid=4242", "--clear-groups",
                     rdmatest::bin("rdma-eventctl"), "history", "-D", dir_.path(), flag, "--json"});
    EXPECT_EQ(r.exit_code(), 74) << flag;
    EXPECT_EQ(r.err, expected_err) << flag;
    EXPECT_EQ(r.out.find("node0003"), std::string::npos) << flag;
    EXPECT_NE(r.out.find("node0004"), std::string::npos) << flag;
  }
  const CommandResult as_root = history(dir_.path(), {"--summary", "--json"});
  EXPECT_EQ(as_root.exit_code(), 0) << as_root.err;
  EXPECT_EQ(as_root.out_lines().size(), 20u);
}

}  // namespace
}  // namespace rdma_eventd::test
