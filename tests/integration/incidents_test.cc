// rdma-eventctl history --incidents and --html over a central journal: rdma-journal-gen writes
// the tests' fleet (eight hosts; tests/harness/journal_gen.cc, "incidents") through
// systemd-journal-remote, every fifth entry twice as an upload that starts again sends it, and
// the real rdma-eventctl reads it back: the incidents, their classes and evidence, the
// filters, the gap at its boundary, the page in headless Chromium, and the errors of bad input.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "chromium.h"
#include "paths.h"
#include "process.h"
#include "rdma_eventd/record.h"
#include "temp_dir.h"

namespace rdma_eventd::test {
namespace {

using nlohmann::json;
using rdmatest::browse;
using rdmatest::CommandResult;
using rdmatest::run_command;

// An incident as one line: class, hosts, each host's events, records.
std::string shape(const json& i) {
  std::string text =
      i["class"].get<std::string>() + " records=" + std::to_string(i["records"].get<int>());
  for (const auto& h : i["hosts"]) {
    text += " " + h["host"].get<std::string>() + "{";
    for (const auto& [event, n] : h["events"].items())
      text += event + ":" + std::to_string(n.get<int>()) + ";";
    text += "}";
  }
  return text;
}

class Incidents : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    journal_ = new rdmatest::TempDir("rdma-incidents");
    const CommandResult gen =
        run_command({rdmatest::bin("rdma-journal-gen"), "--scenario", "incidents", "--copies", "5",
                     "--output", journal_->path()});
    ASSERT_EQ(gen.exit_code(), 0) << gen.err;
    ASSERT_EQ(gen.out, "8 hosts, 60 records\n");
  }
  static void TearDownTestSuite() {
    delete journal_;
    journal_ = nullptr;
  }

  static CommandResult history(std::vector<std::string> args) {
    args.insert(args.begin(),
                {rdmatest::bin("rdma-eventctl"), "history", "--directory", journal_->path()});
    return run_command(args);
  }

  // The incidents (--json: oldest first, as they close), newest first like the text, failing
  // on a non-zero exit or on --json's lines out of time order.
  static std::vector<json> incidents(std::vector<std::string> args = {}) {
    args.insert(args.begin(), {"--incidents", "--json"});
    const CommandResult r = history(args);
    EXPECT_EQ(r.exit_code(), 0) << r.err;
    EXPECT_EQ(r.err, "");
    std::vector<json> out;
    for (const auto& line : r.out_lines())
      out.push_back(json::parse(line));
    for (size_t i = 1; i < out.size(); ++i)
      EXPECT_LT(out[i - 1]["end"].get<std::string>(), out[i]["start"].get<std::string>());
    std::reverse(out.begin(), out.end());
    return out;
  }

  static inline rdmatest::TempDir* journal_ = nullptr;
};

const std::string kFabricHost = "{port_err:1;port_health down:1;sm_change:1;}";

TEST_F(Incidents, EachKindOfFaultIsOneIncidentOfItsClassNewestFirst) {
  const auto all = incidents();
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(shape(all[0]), "application records=3 node02{app_report:3;}");
  EXPECT_EQ(all[0]["evidence"], "3 app_reports from 1 host, no fault the daemon saw itself");
  EXPECT_EQ(shape(all[1]), "host records=2 node08{device_fatal:1;port_health fatal:1;}");
  EXPECT_EQ(all[1]["evidence"], "node08: device fatal (mlx5_0): the adapter failed");
  EXPECT_EQ(shape(all[2]), "port records=5 node07{port_err:4;port_health flapping:1;}");
  EXPECT_EQ(all[2]["evidence"],
            "node07 mlx5_0/1: 4 port_err, 1 port_health flapping: the link flaps, the cable or "
            "transceiver");
  EXPECT_EQ(all[2]["start"], "2026-11-27T00:01:00.000000Z");
  EXPECT_EQ(all[2]["end"], "2026-11-27T00:01:07.000150Z");
  std::string fabric = "fabric records=18";
  for (int h = 1; h <= 6; ++h)
    fabric += " node0" + std::to_string(h) + kFabricHost;
  EXPECT_EQ(shape(all[3]), fabric);
  EXPECT_EQ(all[3]["port_downs"], 6);

  // The evidence's spread of the downs is that of the hosts' first faults (their port_err).
  std::vector<int64_t> firsts;
  for (const auto& h : all[3]["hosts"])
    firsts.push_back(*parse_rfc3339_us(h["first"].get<std::string>()));
  const auto [lo, hi] = std::minmax_element(firsts.begin(), firsts.end());
  char spread[32];
  std::snprintf(spread, sizeof spread, "%.1f s", static_cast<double>(*hi - *lo) / 1e6);
  EXPECT_EQ(all[3]["evidence"], std::string("6 hosts, 6 ports down within ") + spread +
                                    "; 6 sm_change: subnet manager failover");
  EXPECT_LT(*hi - *lo, 600'001);  // the scenario's spread: within 0.6 s
}

TEST_F(Incidents, TextIsForPeopleNewestFirst) {
  const CommandResult r = history({"--incidents"});
  ASSERT_EQ(r.exit_code(), 0) << r.err;
  const auto lines = r.out_lines();
  ASSERT_EQ(lines.size(), 4u + 1 + 1 + 1 + 6) << r.out;
  EXPECT_EQ(lines[0],
            "2026-11-27T00:03:00.000Z  0.6 s  application  3 app_reports from 1 host, no fault "
            "the daemon saw itself");
  EXPECT_EQ(lines[1], "  node02  mlx5_0  3 app_report");
  EXPECT_EQ(lines[2],
            "2026-11-27T00:02:00.000Z  0.0 s  host  node08: device fatal (mlx5_0): the "
            "adapter failed");
  EXPECT_EQ(lines[3], "  node08  mlx5_0/1  1 device_fatal, 1 port_health fatal");
  EXPECT_EQ(lines[6].find("2026-11-27T00:00:00."), 0u) << lines[6];
  EXPECT_NE(lines[6].find("  fabric  6 hosts, 6 ports down within "), std::string::npos);
  EXPECT_EQ(lines[7], "  node01  mlx5_0/1  1 port_err, 1 port_health down, 1 sm_change");
}

TEST_F(Incidents, HostAndTimeFiltersAreHistorys) {
  const auto node07 = incidents({"--host", "node07"});
  ASSERT_EQ(node07.size(), 1u);
  EXPECT_EQ(shape(node07[0]), "port records=5 node07{port_err:4;port_health flapping:1;}");
  // node02 was in the fabric incident and reported the application errors.
  const auto node02 = incidents({"--host", "node02,node08"});
  ASSERT_EQ(node02.size(), 3u);
  EXPECT_EQ(shape(node02[0]), "application records=3 node02{app_report:3;}");
  EXPECT_EQ(node02[1]["class"], "host");
  EXPECT_EQ(shape(node02[2]), "port records=3 node02" + kFabricHost)
      << "one host alone is not the fabric";

  // --since/--until as history takes them (@SECONDS: 00:00:30 to 00:02:30 UTC).
  const auto epoch = incidents({"--since", "@1795737630", "--until", "@1795737750"});
  ASSERT_EQ(epoch.size(), 2u);
  EXPECT_EQ(epoch[0]["class"], "host");
  EXPECT_EQ(epoch[1]["class"], "port");
}

TEST_F(Incidents, TheGapDecidesWhatIsOneIncidentExactlyAtItsValue) {
  // Episodes that begin within the gap of each other are one incident. The beginnings: the
  // fabric's port episodes within 0.6 s, its SM notices by 1.1 s; node07's flap at 60 s (its
  // downs 2 s apart and its verdict are one episode); node08's fatal at 120 s and its verdict
  // 150 us later; node02's reports at 180 s. From the flap's beginning to the fatal's: exactly
  // 60 s. A gap of 60 s joins them (and so everything: 59.99985 s from the fatal's verdict to
  // the reports, at most 59.2 s from the SM notices to the flap); one millisecond less does
  // not, and leaves the fabric with the flap, the fatal and the reports on their own.
  const auto joined = incidents({"--incident-gap", "60s"});
  const auto apart = incidents({"--incident-gap", "59999ms"});
  ASSERT_EQ(joined.size(), 1u);
  EXPECT_EQ(joined[0]["records"], 28);
  EXPECT_EQ(joined[0]["hosts"].size(), 8u);
  ASSERT_EQ(apart.size(), 3u);
  EXPECT_EQ(shape(apart[0]), "application records=3 node02{app_report:3;}");
  EXPECT_EQ(shape(apart[1]), "host records=2 node08{device_fatal:1;port_health fatal:1;}");
  EXPECT_EQ(apart[2]["class"], "fabric");
  EXPECT_EQ(apart[2]["records"], 23);
  EXPECT_EQ(apart[2]["hosts"][6]["host"], "node07");
  // With an hour, everything is one incident of the fabric.
  const auto hour = incidents({"--incident-gap", "1h"});
  ASSERT_EQ(hour.size(), 1u);
  EXPECT_EQ(hour[0]["class"], "fabric");
  EXPECT_EQ(hour[0]["records"], 28);
  EXPECT_EQ(hour[0]["hosts"].size(), 8u);
  // A higher threshold than hosts losing links: not the fabric.
  const auto seven = incidents({"--fabric-hosts", "7"});
  EXPECT_EQ(seven[3]["class"], "port");
  EXPECT_EQ(seven[3]["evidence"].get<std::string>().rfind(
                "6 hosts (fewer than the 7 of a fabric incident); node01 mlx5_0/1: ", 0),
            0u)
      << seven[3]["evidence"];
}

TEST_F(Incidents, TheFabricWindowDecidesHowCloseTheHostsMustBe) {
  // The six hosts' downs came within 0.6 s (the evidence says how close), their SM notices
  // within 0.3 s after: a window narrower than both spreads leaves fewer than three hosts
  // together, and the incident is a port's, saying why.
  const auto all = incidents();
  const double links = all[3]["link_losses"]["within_s"].get<double>();
  const double notices = all[3]["sm_notices"]["within_s"].get<double>();
  EXPECT_EQ(all[3]["link_losses"]["hosts"], 6);
  EXPECT_EQ(all[3]["sm_notices"]["hosts"], 6);
  ASSERT_GT(std::min(links, notices), 0.002);
  const auto narrow = incidents({"--fabric-window", "1ms"});
  ASSERT_EQ(narrow.size(), 4u);
  EXPECT_EQ(narrow[3]["class"], "port");
  EXPECT_LT(narrow[3]["link_losses"]["hosts"].get<int>(), 3);
  EXPECT_EQ(narrow[3]["evidence"].get<std::string>().rfind(
                "6 hosts lost links or saw SM notices, not together: at most ", 0),
            0u)
      << narrow[3]["evidence"];
  // As wide as the downs' spread (rounded up to the millisecond): the fabric again.
  const std::string wide = std::to_string(static_cast<int>(links * 1000) + 1) + "ms";
  EXPECT_EQ(incidents({"--fabric-window", wide})[3]["class"], "fabric") << wide;
}

TEST(IncidentsOfAFlappingPort, APortFlappingForHoursWhileOtherHostsFailIsNotTheFabric) {
  // rdma-journal-gen's "flapping": node01's port goes down every 2 s for two hours; node02 to
  // node31 each lose a link once, four minutes apart. Each of those is an incident of its own
  // host; the flap is one, of its port; none is the fabric.
  rdmatest::TempDir dir("rdma-incidents-flapping");
  const CommandResult gen = run_command(
      {rdmatest::bin("rdma-journal-gen"), "--scenario", "flapping", "--output", dir.path()});
  ASSERT_EQ(gen.exit_code(), 0) << gen.err;
  ASSERT_EQ(gen.out, "31 hosts, 7394 records\n");
  const CommandResult r = run_command(
      {rdmatest::bin("rdma-eventctl"), "history", "-D", dir.path(), "--incidents", "--json"});
  ASSERT_EQ(r.exit_code(), 0) << r.err;
  const auto lines = r.out_lines();
  ASSERT_EQ(lines.size(), 31u);
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    const json incident = json::parse(lines[i]);
    const std::string host = (i + 2 < 10 ? "node0" : "node") + std::to_string(i + 2);
    EXPECT_EQ(shape(incident), "port records=2 " + host + "{port_err:1;port_health down:1;}");
  }
  const json flap = json::parse(lines.back());
  EXPECT_EQ(shape(flap), "port records=3612 node01{port_err:3600;port_health flapping:12;}");
  EXPECT_EQ(flap["duration_s"], 7198.0);
  EXPECT_EQ(flap["evidence"],
            "node01 mlx5_0/1: 3600 port_err, 12 port_health flapping: the link flaps, the cable "
            "or transceiver");
}

TEST(IncidentsOfHostileNames, NamesAreEscapedTheJsonIsValidAndThePageSafe) {
  // Six hosts whose _HOSTNAME holds a terminal's escape sequences, bytes that are not UTF-8,
  // the same bytes' escaped form in ASCII, a right-to-left override (shown as "node01"), and
  // a Cyrillic "o" in "node01" lose their links together: what any host that uploads can send.
  // Each entry is the daemon's own port_err (rdma-journal-gen --entry), written through
  // systemd-journal-remote.
  rdmatest::TempDir dir("rdma-incidents-hostile");
  const std::vector<std::string> hosts = {"clear\x1b[2J\x1b]0;owned\x07",
                                          "bad\xff\xfe",
                                          "csi\xc2\x9b"
                                          "31m",
                                          "bad\\xff\\xfe",
                                          "\xe2\x80\xae"
                                          "10edon",
                                          "n\xd0\xbe"
                                          "de01"};
  for (size_t i = 0; i < hosts.size(); ++i) {
    const CommandResult made =
        run_command({"sh", "-c",
                     "\"$1\" --entry port_err --host \"$2\" --seed \"$3\" --start \"$4\" | "
                     "/lib/systemd/systemd-journal-remote --output=\"$5\" -",
                     "sh", rdmatest::bin("rdma-journal-gen"), hosts[i], std::to_string(i + 1),
                     std::to_string(1'795'737'600'000'000LL + static_cast<int64_t>(i) * 100'000),
                     dir.file("remote-" + std::to_string(i) + ".journal")});
    ASSERT_EQ(made.exit_code(), 0) << made.err;
  }
  const auto eventctl = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {rdmatest::bin("rdma-eventctl"), "history", "-D", dir.path()});
    return run_command(args);
  };
  const auto no_control = [](const std::string& text) {
    return std::none_of(text.begin(), text.end(), [](char c) {
      return c != '\n' && (static_cast<unsigned char>(c) < 0x20 || c == 0x7f);
    });
  };
  // Printable ASCII and newlines: nothing that a terminal acts on, nor that reorders, hides or
  // imitates a name.
  const auto ascii = [](const std::string& text) {
    return std::none_of(text.begin(), text.end(),
                        [](char c) { return c != '\n' && (c < 0x20 || c >= 0x7f); });
  };
  // JSON: one valid object of ASCII (nlohmann's parser takes only UTF-8), the names kept: as
  // they are when UTF-8 without a backslash, otherwise in the text's escaped form, so that the
  // bytes 0xff 0xfe and the eight characters "\xff\xfe" are two names.
  const CommandResult json_out = eventctl({"--incidents", "--json"});
  ASSERT_EQ(json_out.exit_code(), 0) << json_out.err;
  ASSERT_EQ(json_out.out_lines().size(), 1u) << json_out.out;
  const json incident = json::parse(json_out.out_lines()[0]);
  EXPECT_EQ(incident["class"], "fabric");
  std::set<std::string> names;
  for (const auto& h : incident["hosts"])
    names.insert(h["host"].get<std::string>());
  EXPECT_EQ(names, (std::set<std::string>{"bad\\xff\\xfe", "clear\x1b[2J\x1b]0;owned\x07",
                                          "csi\xc2\x9b"
                                          "31m",
                                          "bad\\\\xff\\\\xfe",
                                          "\xe2\x80\xae"
                                          "10edon",
                                          "n\xd0\xbe"
                                          "de01"}));
  EXPECT_TRUE(ascii(json_out.out)) << json_out.out;
  EXPECT_NE(json_out.out.find("\"\\u202e10edon\""), std::string::npos) << json_out.out;
  // Text: nothing a terminal acts on, and no name that looks like another.
  const CommandResult text = eventctl({"--incidents"});
  ASSERT_EQ(text.exit_code(), 0) << text.err;
  EXPECT_TRUE(ascii(text.out)) << text.out;
  EXPECT_NE(text.out.find("  \\u202e10edon  mlx5_0/1"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("  n\\u043ede01  mlx5_0/1"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("  bad\\\\xff\\\\xfe  mlx5_0/1"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("  bad\\xff\\xfe  mlx5_0/1"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("  clear\\x1b[2J\\x1b]0;owned\\x07  mlx5_0/1  1 port_err\n"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("  csi\\xc2\\x9b31m  mlx5_0/1"), std::string::npos) << text.out;
  // The records, one line each: the names escaped; the colours, when asked for, are the only
  // escape sequences.
  const CommandResult records = eventctl({"--color", "never"});
  ASSERT_EQ(records.exit_code(), 0) << records.err;
  ASSERT_EQ(records.out_lines().size(), 6u) << records.out;
  EXPECT_TRUE(ascii(records.out)) << records.out;
  EXPECT_EQ(records.out_lines()[0].rfind("clear\\x1b[2J\\x1b]0;owned\\x07  ", 0), 0u);
  const CommandResult colored = eventctl({"--color", "always"});
  for (const std::string raw :
       {"\x1b[2J", "\x1b]0;", "\xff", "\xc2\x9b", "\xe2\x80\xae", "\xd0\xbe"})
    EXPECT_EQ(colored.out.find(raw), std::string::npos) << colored.out;
  EXPECT_NE(colored.out.find("\x1b[31m"), std::string::npos) << "port_err in red";
  const CommandResult summary = eventctl({"--summary"});
  EXPECT_TRUE(ascii(summary.out)) << summary.out;
  const CommandResult summary_json = eventctl({"--summary", "--json"});
  ASSERT_EQ(summary_json.exit_code(), 0) << summary_json.err;
  EXPECT_TRUE(ascii(summary_json.out)) << summary_json.out;
  for (const auto& line : summary_json.out_lines())
    EXPECT_TRUE(json::accept(line)) << line;
  // The page: no raw control character, no byte that is not UTF-8.
  const std::string page = dir.file("page.html");
  ASSERT_EQ(eventctl({"--html", page}).exit_code(), 0);
  const std::string html = rdmatest::read_file(page);
  EXPECT_TRUE(no_control(html));
  EXPECT_TRUE(json::accept(json(html).dump(-1, ' ', false, json::error_handler_t::strict)))
      << "the page is UTF-8";
  EXPECT_NE(html.find("clear\\x1b[2J\\x1b]0;owned\\x07"), std::string::npos);
  EXPECT_EQ(html.find("\xe2\x80\xae"), std::string::npos) << "no raw right-to-left override";
  EXPECT_NE(html.find("n\\u043ede01"), std::string::npos);
}

TEST(IncidentsOfHostileNames, HistoryJsonWritesARecordBeyondAsciiAgainAsTheSameJsonInAscii) {
  // The daemon's port_err as an uploading host could send it: its device renamed with a
  // right-to-left override in the record (RDMA_RECORD) and in RDMA_DEVICE.
  rdmatest::TempDir dir("rdma-history-json-ascii");
  const std::string device =
      "mlx5_\xe2\x80\xae"
      "0";
  const CommandResult made =
      run_command({"sh", "-c",
                   "\"$1\" --entry port_err --host node01 | sed \"s/mlx5_0/$2/g\" | "
                   "/lib/systemd/systemd-journal-remote --output=\"$3\" -",
                   "sh", rdmatest::bin("rdma-journal-gen"), device, dir.file("remote-0.journal")});
  ASSERT_EQ(made.exit_code(), 0) << made.err;
  const CommandResult out =
      run_command({rdmatest::bin("rdma-eventctl"), "history", "-D", dir.path(), "--json"});
  ASSERT_EQ(out.exit_code(), 0) << out.err;
  ASSERT_EQ(out.out_lines().size(), 1u) << out.out;
  const std::string line = out.out_lines()[0];
  EXPECT_TRUE(std::all_of(line.begin(), line.end(), [](char c) { return c >= 0x20 && c < 0x7f; }))
      << line;
  EXPECT_NE(line.find("\"mlx5_\\u202e0\""), std::string::npos) << line;
  const json record = json::parse(line);
  EXPECT_EQ(record["device"], device);
  EXPECT_EQ(record["event"], "port_err");
}

// What a bad command line or a journal that cannot be read says, and its exit status.
struct Refusal {
  int code;
  std::string err;
};

Refusal refused(std::vector<std::string> args) {
  args.insert(args.begin(), rdmatest::bin("rdma-eventctl"));
  const CommandResult r = run_command(args);
  EXPECT_EQ(r.out, "");
  return {r.exit_code(), r.err};
}

TEST_F(Incidents, BadInputIsOneClearMessageAndHistorysExitStatus) {
  const std::string usage = "\nTry 'rdma-eventctl --help'.\n";
  const std::string dir = journal_->path();
  auto r = refused({"history", "-D", dir, "--incidents", "--incident-gap", "0"});
  EXPECT_EQ(r.code, 64);
  EXPECT_EQ(r.err, "rdma-eventctl: --incident-gap: '0' is not a duration from 1ms to 1h" + usage);
  r = refused({"history", "-D", dir, "--incidents", "--incident-gap", "2h"});
  EXPECT_EQ(r.code, 64);
  EXPECT_EQ(r.err, "rdma-eventctl: --incident-gap: '2h' is not a duration from 1ms to 1h" + usage);
  r = refused({"history", "-D", dir, "--incidents", "--incident-gap", "soon"});
  EXPECT_EQ(r.code, 64);
  r = refused({"history", "-D", dir, "--incidents", "--fabric-window", "0.4ms"});
  EXPECT_EQ(r.code, 64);
  EXPECT_EQ(r.err,
            "rdma-eventctl: --fabric-window: '0.4ms' is not a duration from 1ms to 1h" + usage);
  for (const char* n : {"1", "0", "-3", "100001", "3x", ""}) {
    r = refused({"history", "-D", dir, "--incidents", "--fabric-hosts", n});
    EXPECT_EQ(r.code, 64) << n;
    EXPECT_EQ(r.err, std::string("rdma-eventctl: --fabric-hosts: '") + n +
                         "' is not a number of hosts from 2 to 100000" + usage);
  }
  r = refused({"history", "-D", dir, "--incidents", "-e", "port_err"});
  EXPECT_EQ(r.code, 64);
  EXPECT_EQ(r.err,
            "rdma-eventctl: --incidents and --html take no -e/-d/-p/-s: incidents are of every "
            "fault" +
                usage);
  r = refused({"history", "-D", dir, "--incidents", "--summary"});
  EXPECT_EQ(r.code, 64);

  r = refused({"history", "-D", dir + "/nowhere", "--incidents"});
  EXPECT_EQ(r.code, 66);
  EXPECT_EQ(r.err, "rdma-eventctl: cannot open the journal in " + dir +
                       "/nowhere: No such file or directory\n");
  rdmatest::TempDir empty("rdma-incidents-empty");
  r = refused({"history", "-D", empty.path(), "--incidents"});
  EXPECT_EQ(r.code, 66);
  EXPECT_EQ(r.err, "rdma-eventctl: no journal files in " + empty.path() + "\n");
  // An empty journal file: journal-remote given nothing.
  const CommandResult made =
      run_command({"sh", "-c",
                   "/lib/systemd/systemd-journal-remote --output=" + empty.path() +
                       "/remote-x.journal - </dev/null"});
  ASSERT_EQ(made.exit_code(), 0) << made.err;
  // Files, no records: nothing matched, as history; the text says so.
  const CommandResult nothing =
      run_command({rdmatest::bin("rdma-eventctl"), "history", "-D", empty.path(), "--incidents"});
  EXPECT_EQ(nothing.exit_code(), 0) << nothing.err;
  EXPECT_EQ(nothing.out,
            "No incidents: no fault records in the journal in " + empty.path() + ".\n");
  EXPECT_EQ(nothing.err, "");
  r = refused({"history", "-D", empty.path(), "--incidents", "--json"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");

  // A user who may not read the files (the journal's own permissions, 0640 root).
  const CommandResult denied =
      run_command({"setpriv", "--reuid=4242", "--regid=4242", "--clear-groups",
                   rdmatest::bin("rdma-eventctl"), "history", "--directory", dir, "--incidents"});
  EXPECT_EQ(denied.exit_code(), 77) << denied.err;
  EXPECT_EQ(denied.err, "rdma-eventctl: cannot read the journal in " + dir +
                            ": permission denied; root and the members of the groups "
                            "'systemd-journal' and 'adm' may read it\n");

  r = refused({"history", "-D", dir, "--html", empty.path() + "/no/such/dir/page.html"});
  EXPECT_EQ(r.code, 73);
  EXPECT_EQ(r.err, "rdma-eventctl: --html: cannot write " + empty.path() +
                       "/no/such/dir/page.html: No such file or directory\n");
  r = refused({"history", "-D", dir, "--html", "/dev/full"});  // opens, cannot be written
  EXPECT_EQ(r.code, 73);
  EXPECT_EQ(r.err, "rdma-eventctl: --html: cannot write /dev/full: No space left on device\n");
  r = refused({"history", "-D", dir, "--html", ""});
  EXPECT_EQ(r.code, 64);
}

TEST_F(Incidents, ThePageLoadsInChromiumWithItsHostsAndIncidentsAndNoConsoleError) {
  rdmatest::TempDir out("rdma-incidents-page");
  const std::string page = out.file("incidents.html");
  const CommandResult r = history({"--html", page});
  ASSERT_EQ(r.exit_code(), 0) << r.err;
  EXPECT_EQ(r.out, "");  // --html alone writes the page only
  const std::string html = rdmatest::read_file(page);
  // Self-contained: nothing to fetch.
  for (const char* outside : {"src=", "href=", "url(", "@import", "http://", "https://"}) {
    std::string rest = html;
    // The SVG namespace is a name, not a fetch.
    rest = std::regex_replace(rest, std::regex("xmlns=\"http://www.w3.org/2000/svg\""), "");
    EXPECT_EQ(rest.find(outside), std::string::npos) << outside;
  }

  const rdmatest::Browsed b = browse("file://" + page, {"--dump-dom"});
  ASSERT_EQ(b.code, 0);
  EXPECT_EQ(b.console, std::vector<std::string>{}) << "the page logged to its console";
  // The script ran: it wrote the summary.
  EXPECT_NE(b.dom.find("<span id=\"summary\">4 incidents, 8 hosts in 8 rows</span>"),
            std::string::npos)
      << b.dom.substr(0, 2000);
  std::set<std::string> hosts;
  const std::regex host_row("<text class=\"host\"[^>]*>([^<]*)</text>");
  for (std::sregex_iterator it(b.dom.begin(), b.dom.end(), host_row), end; it != end; ++it)
    hosts.insert((*it)[1]);
  EXPECT_EQ(hosts, (std::set<std::string>{"node01", "node02", "node03", "node04", "node05",
                                          "node06", "node07", "node08"}));
  std::vector<std::string> classes;
  const std::regex row("<tr class=\"incident\" id=\"incident-(\\d)\" data-class=\"(\\w+)\">");
  for (std::sregex_iterator it(b.dom.begin(), b.dom.end(), row), end; it != end; ++it)
    classes.push_back((*it)[1].str() + " " + (*it)[2].str());
  EXPECT_EQ(classes, (std::vector<std::string>{"4 application", "3 host", "2 port", "1 fabric"}));
  std::vector<std::string> bands;
  const std::regex band("<g class=\"band\" data-n=\"(\\d)\" data-class=\"(\\w+)\">");
  for (std::sregex_iterator it(b.dom.begin(), b.dom.end(), band), end; it != end; ++it)
    bands.push_back((*it)[1].str() + " " + (*it)[2].str());
  EXPECT_EQ(bands, (std::vector<std::string>{"1 fabric", "2 port", "3 host", "4 application"}));

  // A screenshot of it.
  const std::string png = out.file("incidents.png");
  const rdmatest::Browsed shot = browse(
      "file://" + page, {"--screenshot=" + png, "--window-size=1240,760", "--hide-scrollbars"});
  ASSERT_EQ(shot.code, 0);
  EXPECT_EQ(shot.console, std::vector<std::string>{});
  const std::string image = rdmatest::read_file(png);
  ASSERT_GT(image.size(), 1000u);
  EXPECT_EQ(image.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
}

TEST_F(Incidents, TheConsoleCheckSeesAnError) {
  // The check above can fail: a page whose script throws is caught by it.
  rdmatest::TempDir out("rdma-incidents-bad");
  const std::string page =
      out.write("bad.html", "<html><body><script>no_such_function();</script></body></html>");
  const rdmatest::Browsed b = browse("file://" + page, {"--dump-dom"});
  ASSERT_EQ(b.console.size(), 1u);
  EXPECT_NE(b.console[0].find("Uncaught ReferenceError: no_such_function is not defined"),
            std::string::npos)
      << b.console[0];
}

}  // namespace
}  // namespace rdma_eventd::test
