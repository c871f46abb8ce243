// rdma-eventctl history -D over more journal files than it may open at once, over files it
// cannot read, and over a directory that changes while it reads. rdma-journal-gen writes a fleet
// of 200 hosts through systemd-journal-remote, a file each, every host in an incident
// (tests/harness/journal_gen.cc, "many-hosts"); the real rdma-eventctl reads it under prlimit: a
// soft limit of 64 open files (which it raises to the hard one), and a hard limit of 64 (groups
// of files merged into temporary runs). The result must be the same as with a high limit, to the
// byte. A file that cannot be read is named on stderr and the exit status is 74; so is a file
// damaged after its header, whose entries are read past the damage as journalctl reads them. A
// file rotated or deleted after the listing (rdma-open-gate makes the change when an earlier
// file is opened) is read under its new name, or named (75).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

  // Copies the first leaf's 20 hosts' files, whole, into `dir`.
  static void copy_first_leaf(const std::string& dir) {
    std::string copy = "cp --sparse=always";
    for (int i = 1; i <= 20; ++i)
      copy += " " + fleet_file("remote-" + host_name(i) + ".journal");
    const CommandResult copied = run_command({"sh", "-c", copy + " " + dir});
    ASSERT_EQ(copied.exit_code(), 0) << copied.err;
  }

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
    ASSERT_NO_FATAL_FAILURE(copy_first_leaf(dir_.path()));
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

// Three hosts of about 2,000 records each, written through journal-remote (rdma-journal-gen's
// random fleet), one of whose files is then damaged after its header.
class DamagedAfterItsHeader : public JournalFiles {
 protected:
  void SetUp() override {
    // rdma-eventd's entries alone: the damage is placed among them.
    const CommandResult gen =
        run_command({rdmatest::bin("rdma-journal-gen"), "--hosts", "3", "--records", "6000",
                     "--other-units", "0", "--output", dir_.path()});
    ASSERT_EQ(gen.exit_code(), 0) << gen.err;
    ASSERT_EQ(gen.out, "3 hosts, 6010 records\n");
  }

  // The entries `journalctl --file` reads of `path`, in its order: each one's identifier.
  static std::vector<std::string> journalctl_identifiers(const std::string& path) {
    const CommandResult r = run_command({"journalctl", "--file", path, "-o", "json"});
    EXPECT_EQ(r.exit_code(), 0) << r.err;
    std::vector<std::string> ids;
    for (const auto& line : r.out_lines())
      ids.push_back(json::parse(line).value("SYSLOG_IDENTIFIER", ""));
    return ids;
  }

  // Zeroes the file's `n`-th entry object (1-based, in the file's order), as a torn write of its
  // page leaves it, and returns the entries its header counts. The objects follow the header
  // one after another, each with its type (3: an entry) and size (systemd's journal-def.h).
  static uint64_t zero_entry(const std::string& path, uint64_t n) {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    const std::string bytes{std::istreambuf_iterator<char>(f), {}};
    const auto le64 = [&](uint64_t at) {
      uint64_t v = 0;
      for (int i = 7; i >= 0; --i)
        v = (v << 8) | static_cast<unsigned char>(bytes.at(at + i));
      return v;
    };
    const uint64_t tail_object = le64(136), entries = le64(152);
    uint64_t seen = 0;
    for (uint64_t at = le64(88); at <= tail_object;) {
      const uint64_t size = le64(at + 8);
      if (size == 0) break;
      if (bytes.at(at) == 3 && ++seen == n) {
        f.seekp(static_cast<std::streamoff>(at));
        const std::string zeros(size, '\0');
        f.write(zeros.data(), static_cast<std::streamsize>(zeros.size()));
        f.flush();
        EXPECT_TRUE(f.good()) << path;
        return entries;
      }
      at += (size + 7) & ~uint64_t{7};
    }
    ADD_FAILURE() << path << " has no entry " << n;
    return entries;
  }

  rdmatest::TempDir dir_{"rdma-damaged-header"};
};

TEST_F(DamagedAfterItsHeader, TheFileIsReadPastTheDamageAsJournalctlReadsItAndNamed) {
  const CommandResult whole = history(dir_.path(), {"--json"});
  ASSERT_EQ(whole.exit_code(), 0) << whole.err;
  ASSERT_EQ(whole.err, "");
  const auto whole_lines = whole.out_lines();
  ASSERT_EQ(whole_lines.size(), 6010u);

  // An entry two thirds into node02's file: sd-journal's index of the daemon's entries breaks
  // there, and it drops the file and says nothing.
  const std::string file = dir_.file("remote-node02.journal");
  const std::vector<std::string> before = journalctl_identifiers(file);
  const uint64_t damaged = before.size() * 2 / 3;
  const uint64_t in_header = zero_entry(file, damaged);
  ASSERT_EQ(in_header, before.size());
  const auto through_index =
      std::count(before.begin(), before.begin() + (damaged - 1), "rdma-eventd");
  // journalctl reads every entry but the damaged one.
  ASSERT_EQ(journalctl_identifiers(file).size(), in_header - 1);

  const std::string named = "rdma-eventctl: " + file +
                            ": damaged: the journal's index of the entries asked for ended after ";
  const std::string read_on = " of them; read entry by entry, as journalctl does, " +
                              std::to_string(in_header - 1) + " of the " +
                              std::to_string(in_header) +
                              " entries its header counts could be read: the others left out\n"
                              "rdma-eventctl: incomplete: 1 of 3 journal files damaged (named "
                              "above)\n";
  const std::string expected_err = named + std::to_string(through_index) + read_on;
  const CommandResult records = history(dir_.path(), {"--json"});
  EXPECT_EQ(records.exit_code(), 74);
  EXPECT_EQ(records.err, expected_err);
  // Every record but the damaged entry's, in the same order.
  const auto lines = records.out_lines();
  ASSERT_EQ(lines.size(), whole_lines.size() - 1);
  std::vector<std::string> missing;
  std::set_difference(whole_lines.begin(), whole_lines.end(), lines.begin(), lines.end(),
                      std::back_inserter(missing));
  EXPECT_TRUE(std::includes(whole_lines.begin(), whole_lines.end(), lines.begin(), lines.end()));
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_EQ(json::parse(missing[0])["host"], "node02");

  // The faults alone (--incidents: fewer entries asked for, fewer through the index), and in
  // groups of files: the same file named, read as far.
  for (const char* limit : {"", "16:16"}) {
    const CommandResult incidents = history(dir_.path(), {"--incidents", "--json"}, limit);
    EXPECT_EQ(incidents.exit_code(), 74) << limit;
    EXPECT_TRUE(incidents.err.starts_with(named) && incidents.err.ends_with(read_on))
        << limit << ": " << incidents.err;
  }
}

// A copy of the first leaf's files, which rdma-open-gate changes when node0005's is opened:
// after the listing, before node0015's is read (the files are opened in name order).
class Changing : public JournalFiles {
 protected:
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(copy_first_leaf(dir_.path())); }

  // history -D over the copy, `action` (sh -c) run when node0005's file is first opened.
  CommandResult history_while(const std::string& action, std::vector<std::string> args) const {
    args.insert(args.begin(), {rdmatest::bin("rdma-open-gate"), file(5), action, "--",
                               rdmatest::bin("rdma-eventctl"), "history", "-D", dir_.path()});
    return run_command(args, {}, std::chrono::seconds(120));
  }

  std::string file(int host) const { return dir_.file("remote-" + host_name(host) + ".journal"); }

  // The whole fleet's lines of the first leaf's hosts, but `without`'s.
  static std::vector<std::string> first_leaf_lines(const std::string& without = "") {
    std::vector<std::string> lines;
    for (const auto& line : history(fleet_, {"--json"}).out_lines()) {
      const std::string host = json::parse(line)["host"];
      if (host <= host_name(20) && host != without) lines.push_back(line);
    }
    return lines;
  }

  rdmatest::TempDir dir_{"rdma-changing-files"};
};

TEST_F(Changing, AFileRotatedAfterTheListingIsReadFromItsArchiveAndTheNewFileToo) {
  // What journal-remote does when it rotates: the file renamed to an archive, and a new one
  // under the old name, here with one more entry of that host, written in 2027 (the fleet's are
  // of 2026): the last line.
  const std::string archive = dir_.file("remote-node0015@0123456789abcdef-1-62d1c5a2e1c00.journal");
  const std::string rotate = "mv " + file(15) + " " + archive + " && " +
                             rdmatest::bin("rdma-journal-gen") +
                             " --entry port_state --host node0015 | sed "
                             "'s/^RDMA_SEQ=.*/RDMA_SEQ=9999/; "
                             "s/^__REALTIME_TIMESTAMP=.*/__REALTIME_TIMESTAMP=1800000000000000/' |"
                             " /lib/systemd/systemd-journal-remote --output=" +
                             file(15) + " - 2>" + dir_.file("journal-remote.log");
  const CommandResult r = history_while(rotate, {"--json"});
  EXPECT_EQ(r.exit_code(), 0) << r.err;
  EXPECT_EQ(r.err, "");
  // Every record of the archive, in place, then the new file's.
  auto lines = r.out_lines();
  ASSERT_EQ(lines.size(), 20u * 7 + 7 + 1);
  EXPECT_EQ(json::parse(lines.back())["host"], "node0015");
  lines.pop_back();
  EXPECT_EQ(lines, first_leaf_lines());
  // What the directory holds now, read without a change: the same.
  EXPECT_EQ(history(dir_.path(), {"--json"}).out, r.out);
}

TEST_F(Changing, AFileDeletedAfterTheListingIsNamedAndTheOthersRead) {
  const std::string expected_err =
      "rdma-eventctl: " + file(15) +
      ": deleted after the directory was listed (a vacuum, or a rotation that removed it); not "
      "read\n"
      "rdma-eventctl: changed: 1 of 20 journal files deleted after the directory was listed "
      "(named above)\n";
  const CommandResult records = history_while("rm " + file(15), {"--json"});
  EXPECT_EQ(records.exit_code(), 75);
  EXPECT_EQ(records.err, expected_err);
  EXPECT_EQ(records.out_lines(), first_leaf_lines("node0015"));
}

TEST_F(Changing, AFileDeletedDuringIncidentsIsNamedToo) {
  const CommandResult incidents = history_while("rm " + file(16), {"--incidents", "--json"});
  EXPECT_EQ(incidents.exit_code(), 75);
  EXPECT_NE(incidents.err.find(file(16) + ": deleted after the directory was listed"),
            std::string::npos)
      << incidents.err;
  // The leaf's fabric incident, without node0016.
  const auto lines = incidents.out_lines();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(json::parse(lines[0])["hosts"].size(), 19u);
}

TEST_F(Changing, AFifoNamedLikeAJournalFileIsNamedNotWaitedFor) {
  ASSERT_EQ(::mkfifo(dir_.file("remote-fifo.journal").c_str(), 0600), 0);
  const CommandResult r = history(dir_.path(), {"--json"});
  EXPECT_EQ(r.exit_code(), 74);
  EXPECT_EQ(r.err, "rdma-eventctl: " + dir_.file("remote-fifo.journal") +
                       ": cannot open: not a regular file; left out\n"
                       "rdma-eventctl: incomplete: 1 of 21 journal files left out (named above)\n");
  EXPECT_EQ(r.out_lines(), first_leaf_lines());
}

TEST_F(Changing, AFileWhoseHeaderIsOutsideSinceAndUntilIsNotOpened) {
  // node0003's file: its header whole, everything after it zeroes. Opened, it is named.
  const CommandResult zeroed = run_command(
      {"sh", "-c",
       "f=" + file(3) + "; size=$(stat -c %s $f); head -c 208 $f >$f.new && truncate -s $size " +
           "$f.new && mv $f.new $f"});
  ASSERT_EQ(zeroed.exit_code(), 0) << zeroed.err;
  // A host whose one entry is of 2027 (the fleet's are of 2026-11-27).
  const CommandResult late =
      run_command({"sh", "-c",
                   rdmatest::bin("rdma-journal-gen") +
                       " --entry port_state --host late | sed "
                       "'s/^__REALTIME_TIMESTAMP=.*/__REALTIME_TIMESTAMP=1800000000000000/' | "
                       "/lib/systemd/systemd-journal-remote --output=" +
                       dir_.file("remote-late.journal") + " - 2>/dev/null"});
  ASSERT_EQ(late.exit_code(), 0) << late.err;

  const CommandResult whole = history(dir_.path(), {"--json", "--until", "2026-11-28"});
  EXPECT_EQ(whole.exit_code(), 74);
  EXPECT_NE(whole.err.find(file(3) + ": "), std::string::npos) << whole.err;
  EXPECT_EQ(whole.out_lines(), first_leaf_lines("node0003"));
  // Since 2027: the fleet's files, node0003's among them, not opened; the late host's entry.
  const CommandResult since = history(dir_.path(), {"--json", "--since", "2027-01-01"});
  EXPECT_EQ(since.exit_code(), 0) << since.err;
  EXPECT_EQ(since.err, "");
  ASSERT_EQ(since.out_lines().size(), 1u);
  EXPECT_EQ(json::parse(since.out_lines()[0])["host"], "late");
  // Until before the fleet: nothing opened, nothing to say.
  const CommandResult until =
      history(dir_.path(), {"--incidents", "--json", "--until", "2026-11-26"});
  EXPECT_EQ(until.exit_code(), 0) << until.err;
  EXPECT_EQ(until.err, "");
  EXPECT_EQ(until.out, "");
}

}  // namespace
}  // namespace rdma_eventd::test
