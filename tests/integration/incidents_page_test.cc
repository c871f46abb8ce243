// rdma-eventctl history --html as an operator meets it: a host found on the page from its
// address (page.html#host=NAME) in headless Chromium, an incident of a host whose clock ran a
// year ahead listed rather than drawn, and a run that fails leaving the page before it. The
// journal: rdma-journal-gen's tests' fleet (eight hosts) through systemd-journal-remote, and
// another file of node01's from a boot whose clock said 2028.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "chromium.h"
#include "paths.h"
#include "process.h"
#include "temp_dir.h"

namespace rdma_eventd::test {
namespace {

using rdmatest::CommandResult;
using rdmatest::run_command;

class IncidentsPage : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    journal_ = new rdmatest::TempDir("rdma-incidents-page");
    CommandResult gen = run_command({rdmatest::bin("rdma-journal-gen"), "--scenario", "incidents",
                                     "--output", journal_->path()});
    ASSERT_EQ(gen.exit_code(), 0) << gen.err;
    // node01 once booted with its clock a year ahead: one incident, at 2028-01-01 (its own
    // stream: --seed). (A clock at 1970 cannot be written: the generator's monotonic times
    // count from a boot in 2026.)
    const rdmatest::TempDir ahead("rdma-incidents-2028");
    gen =
        run_command({rdmatest::bin("rdma-journal-gen"), "--scenario", "many-hosts", "--hosts", "1",
                     "--start", "1830297600000000", "--seed", "99", "--output", ahead.path()});
    ASSERT_EQ(gen.exit_code(), 0) << gen.err;
    std::filesystem::copy_file(ahead.file("remote-node01.journal"),
                               journal_->file("remote-node01@2028.journal"));
  }
  static void TearDownTestSuite() {
    delete journal_;
    journal_ = nullptr;
  }

  static CommandResult history(std::vector<std::string> args,
                               std::vector<std::string> before = {}) {
    args.insert(args.begin(),
                {rdmatest::bin("rdma-eventctl"), "history", "--directory", journal_->path()});
    args.insert(args.begin(), before.begin(), before.end());
    return run_command(args);
  }

  static inline rdmatest::TempDir* journal_ = nullptr;
};

std::vector<std::string> files_in(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    names.push_back(e.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

TEST_F(IncidentsPage, AHostIsFoundFromTheAddressAndAnIncidentAYearAheadIsListedNotDrawn) {
  rdmatest::TempDir out("rdma-page");
  const std::string page = out.file("fleet.html");
  const CommandResult r = history({"--html", page});
  ASSERT_EQ(r.exit_code(), 0) << r.err;
  const std::string html = rdmatest::read_file(page);
  // The 2028 incident is the last by time, and listed under the timeline; the axis is the
  // fleet's day.
  EXPECT_NE(html.find("1 incident is far from the others (a host's clock?), not drawn:<ul>"
                      "<li>#5 2028-01-01T00:00:00.196Z port: node01</li></ul>"),
            std::string::npos)
      << html.substr(0, 3000);
  const std::regex axis(
      "<div class=\"meta\">2026-11-26T23:50:00.000Z to 2026-11-27T[0-9:.]+Z</div>");
  EXPECT_TRUE(std::regex_search(html, axis));
  EXPECT_EQ(files_in(out.path()), std::vector<std::string>{"fleet.html"});

  const rdmatest::Browsed b = rdmatest::browse("file://" + page + "#host=node03", {"--dump-dom"});
  ASSERT_EQ(b.code, 0);
  EXPECT_EQ(b.console, std::vector<std::string>{}) << "the page logged to its console";
  // Eight hosts, one a row, in name order.
  EXPECT_NE(b.dom.find("<span id=\"summary\">5 incidents, 8 hosts in 8 rows</span>"),
            std::string::npos);
  const std::regex found(
      "<output id=\"found\">node03: row 3 of 8, (\\d+) marks?, (\\d+) "
      "incidents?</output>");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(b.dom, m, found)) << b.dom.substr(0, 3000);
  EXPECT_GT(std::stoi(m[1]), 0);
  EXPECT_GT(std::stoi(m[2]), 0);
  EXPECT_NE(b.dom.find("<g class=\"row found\" id=\"row-3\">"), std::string::npos);
  EXPECT_EQ(b.dom.find("class=\"row found\" id=\"row-4\""), std::string::npos);
  EXPECT_TRUE(std::regex_search(b.dom, std::regex("<body [^>]*data-ready=\"\\d+\"")));

  const rdmatest::Browsed none =
      rdmatest::browse("file://" + page + "#host=node99", {"--dump-dom"});
  EXPECT_NE(none.dom.find("<output id=\"found\">no host node99 on this page</output>"),
            std::string::npos);
}

TEST_F(IncidentsPage, ARunThatFailsLeavesThePageBeforeItAndNothingElse) {
  rdmatest::TempDir out("rdma-page");
  const std::string page = out.file("fleet.html");
  ASSERT_EQ(history({"--html", page}).exit_code(), 0);
  const std::string before = rdmatest::read_file(page);
  // Room for two files at once (four descriptors beyond those kept free), so the nine files
  // are merged through a temporary file, which cannot be made: the run fails after the page's
  // file was found writable.
  const CommandResult r = history(
      {"--html", page}, {"prlimit", "--nofile=20:20", "env", "TMPDIR=/nonexistent-rdma-test"});
  EXPECT_NE(r.exit_code(), 0);
  EXPECT_NE(r.err.find("cannot make a temporary file in /nonexistent-rdma-test"), std::string::npos)
      << r.err;
  EXPECT_EQ(rdmatest::read_file(page), before);
  EXPECT_EQ(files_in(out.path()), std::vector<std::string>{"fleet.html"});

  // A page behind a symbolic link: its file is replaced, the link stays.
  std::filesystem::create_symlink("fleet.html", out.file("latest.html"));
  ASSERT_EQ(history({"--html", out.file("latest.html")}).exit_code(), 0);
  EXPECT_TRUE(std::filesystem::is_symlink(out.file("latest.html")));
  EXPECT_EQ(rdmatest::read_file(page), before);
  EXPECT_EQ(files_in(out.path()), (std::vector<std::string>{"fleet.html", "latest.html"}));
}

TEST_F(IncidentsPage, AnIncompleteReadIsSaidOnThePageAsOnStderr) {
  // A FIFO named like a journal file is left out (exit 74): the page is written, and says so.
  rdmatest::TempDir dir("rdma-page-incomplete");
  const CommandResult gen = run_command(
      {rdmatest::bin("rdma-journal-gen"), "--scenario", "incidents", "--output", dir.path()});
  ASSERT_EQ(gen.exit_code(), 0) << gen.err;
  ASSERT_EQ(::mkfifo(dir.file("remote-fifo.journal").c_str(), 0600), 0);
  rdmatest::TempDir out("rdma-page");
  const std::string page = out.file("fleet.html");
  const CommandResult r = run_command(
      {rdmatest::bin("rdma-eventctl"), "history", "--directory", dir.path(), "--html", page});
  EXPECT_EQ(r.exit_code(), 74);
  EXPECT_NE(r.err.find("rdma-eventctl: incomplete: 1 of 9 journal files left out (named above)\n"),
            std::string::npos)
      << r.err;
  EXPECT_NE(rdmatest::read_file(page).find(
                "<p class=\"notice\" id=\"notice\">Incomplete: 1 of 9 journal files left out "
                "(rdma-eventctl named them on its standard error).</p>"),
            std::string::npos);
}

}  // namespace
}  // namespace rdma_eventd::test
