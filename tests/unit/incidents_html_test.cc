// rdma-eventctl history --html's page and --incidents' text and JSON, from incidents and marks
// made here: what a host name can hold is escaped, many hosts share rows, marks are bounded.
#include "incidents_html.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <limits>
#include <map>
#include <regex>
#include <string>
#include <string_view>

#include "incidents_output.h"

namespace rdma_eventd_fleet {
namespace {

constexpr int64_t kPageT0 = 1'795'737'600'000'000LL;  // 2026-11-27T00:00:00Z

size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

Incident one_port(const std::string& host, int64_t at) {
  Incident i;
  i.start_us = kPageT0 + at;
  i.end_us = kPageT0 + at + 1500000;
  i.cls = IncidentClass::kPort;
  i.evidence = host + " mlx5_0/1: 2 port_err: the link flaps";
  i.records = 2;
  i.events = {{"port_err", 2}};
  IncidentHost& h = i.hosts[host];
  h.devices = {"mlx5_0"};
  h.ports = {"mlx5_0/1"};
  h.events = {{"port_err", 2}};
  h.first_us = i.start_us;
  h.last_us = i.end_us;
  return i;
}

// A record of port 1 of mlx5_0 on `host`, `at` microseconds into the page. Like FaultInput it
// views `host` and `event`: it is used within the expression that makes them.
FaultInput port_fault(std::string_view host, int64_t at, std::string_view event = "port_err") {
  return {.time_us = kPageT0 + at, .host = host, .event = event, .device = "mlx5_0", .port = 1};
}

TEST(IncidentsHtml, EscapesWhatAHostNameCanHold) {
  // Markup as entities; control characters and bytes that are not UTF-8 as \xNN (escape.h).
  EXPECT_EQ(html_escape("a<b>&\"c'\n"), "a&lt;b&gt;&amp;&quot;c&#39;\\x0a");
  EXPECT_EQ(html_escape("n\xff\x1b[2J\xc2\x9b"), "n\\xff\\x1b[2J\\xc2\\x9b");
  const std::string host = "<script>alert(\"x\")</script>&'";
  Timeline t;
  t.add(FaultInput{
      .time_us = kPageT0, .host = host, .event = "port_err", .device = "mlx5_<0>", .port = 1});
  t.add(one_port(host, 0));
  const std::string page = t.html();
  EXPECT_EQ(page.find("<script>alert"), std::string::npos);
  EXPECT_EQ(page.find("mlx5_<0>"), std::string::npos);
  const std::string escaped = "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;";
  EXPECT_EQ(occurrences(page, "<text class=\"host\" x=\"6\" y=\"47\">" + escaped + "</text>"), 1u);
  EXPECT_EQ(occurrences(page, "<td class=\"hosts\">1: " + escaped + "</td>"), 1u);
  // Only the page's own script.
  EXPECT_EQ(occurrences(page, "<script>"), 1u);
}

TEST(IncidentsHtml, OneRowPerHostThenRowsOfSeveral) {
  Timeline few;
  for (int i = 0; i < 50; ++i)
    few.add(port_fault("h" + std::to_string(100 + i), i, "port_active"));
  const std::string small = few.html();
  EXPECT_EQ(occurrences(small, "<g class=\"row\" id=\"row-"), 50u);
  EXPECT_NE(small.find(">h149</text>"), std::string::npos);

  Timeline many;
  for (int i = 0; i < 1000; ++i)
    many.add(port_fault("h" + std::to_string(1000 + i), i));
  const std::string big = many.html();
  EXPECT_EQ(occurrences(big, "<g class=\"row\" id=\"row-"), 50u);
  EXPECT_NE(big.find(">h1000 \u2026 h1019 (20)</text>"), std::string::npos);
  EXPECT_NE(big.find(">h1980 \u2026 h1999 (20)</text>"), std::string::npos);
  EXPECT_NE(big.find("data-hosts=\"1000\" data-rows=\"50\" data-per-row=\"20\""),
            std::string::npos);
}

// The counts in the marks' titles ("3 port downs, 1 verdict degraded"), summed by kind.
std::map<std::string, uint64_t> counted(const std::string& page) {
  std::map<std::string, uint64_t> sum;
  const std::regex title("<title>[^<]*: ([^<]*)</title></(line|circle|rect)>");
  const std::regex part("(\\d+) ([a-z ]+?)s?(, |$)");
  for (std::sregex_iterator it(page.begin(), page.end(), title), end; it != end; ++it) {
    const std::string what = (*it)[1];
    for (std::sregex_iterator p(what.begin(), what.end(), part); p != end; ++p)
      sum[(*p)[2]] += std::stoull((*p)[1]);
  }
  return sum;
}

TEST(IncidentsHtml, MarksAreDrawnOnePerRowAndPixelAndCountedInTheirTitles) {
  // 3,000 hosts (50 rows of 60), 100 downs each a second apart and a verdict: 303,000 marks,
  // beyond the store's memory (mark_store.h), so most are read back from its file.
  Timeline t;
  for (int h = 0; h < 3000; ++h) {
    const std::string host = "n" + std::to_string(10000 + h);
    for (int i = 0; i < 100; ++i)
      t.add(port_fault(host, (i + h % 7) * 1'000'000LL));
    FaultInput verdict = port_fault(host, 50'000'000, "port_health");
    verdict.health = h % 2 ? "degraded" : "flapping";
    t.add(verdict);
  }
  const std::string page = t.html();
  EXPECT_EQ(t.problem(), "");
  EXPECT_EQ(counted(page),
            (std::map<std::string, uint64_t>{
                {"port down", 300000}, {"verdict degraded", 1500}, {"verdict flapping", 1500}}));
  // One mark per row and pixel: 50 rows over 106 seconds of 980 pixels.
  const size_t marks = occurrences(page, "class=\"mark ");
  EXPECT_LE(marks, 50u * 980);
  EXPECT_GE(marks, 50u * 100);
  EXPECT_LT(page.size(), 8u << 20) << "bytes";
  EXPECT_NE(page.find(" n10000 and other hosts: "), std::string::npos);
}

TEST(IncidentsHtml, MarksThatCannotBeKeptAreCountedAndSaid) {
  const char* before = std::getenv("TMPDIR");
  const std::string saved = before ? before : "";
  setenv("TMPDIR", "/nonexistent-rdma-test", 1);
  Timeline t;
  for (size_t i = 0; i < MarkStore::kInMemory + 10; ++i)
    t.add(port_fault("n1", static_cast<int64_t>(i) * 1000));
  if (before) {
    setenv("TMPDIR", saved.c_str(), 1);
  } else {
    unsetenv("TMPDIR");
  }
  EXPECT_EQ(t.problem(),
            "cannot make a temporary file in /nonexistent-rdma-test: No such file or directory");
  const std::string page = t.html();
  EXPECT_NE(page.find("<p class=\"meta notice\" id=\"marks-lost\">10 marks not drawn: cannot "
                      "make a temporary file in /nonexistent-rdma-test: No such file or "
                      "directory</p>"),
            std::string::npos);
  EXPECT_EQ(counted(page)["port down"], MarkStore::kInMemory);
}

TEST(IncidentsHtml, AnIncidentFarFromTheOthersIsListedNotDrawn) {
  // A host whose clock says 1970: its incident and its marks do not stretch the axis.
  Timeline t;
  for (int i = 0; i < 6; ++i) {
    t.add(port_fault("h" + std::to_string(i), i * 600'000'000LL));
    t.add(one_port("h" + std::to_string(i), i * 600'000'000LL));
  }
  Incident old = one_port("clockless", 0);
  old.start_us = 5'000'000;
  old.end_us = 6'000'000;
  t.add(FaultInput{.time_us = 5'000'000, .host = "clockless", .event = "port_err"});
  t.add(old);
  const std::string page = t.html();
  EXPECT_NE(page.find("<div class=\"meta\">2026-11-27T00:00:00.000Z to "
                      "2026-11-27T00:50:01.500Z</div>"),
            std::string::npos);
  EXPECT_EQ(occurrences(page, "<g class=\"band\""), 6u);
  EXPECT_NE(page.find("1 incident is far from the others (a host's clock?), not drawn:<ul>"
                      "<li>#1 1970-01-01T00:00:05.000Z port: clockless</li></ul>"),
            std::string::npos);
  EXPECT_NE(page.find(">1 mark outside the timeline, not drawn (of clockless).</p>"),
            std::string::npos);
  // It stays in the table.
  EXPECT_NE(page.find("<tr class=\"incident\" id=\"incident-1\" data-class=\"port\">"),
            std::string::npos);
}

TEST(IncidentsHtml, TimesAtTheEndsOfTheirRangeSpanTheWholeAxis) {
  // Two hosts' clocks as far apart as a journal's times go, with too few incidents for a fence:
  // the axis spans them all, the last pixel starts at the last time, and every number is one.
  constexpr int64_t kFirst = std::numeric_limits<int64_t>::min();
  constexpr int64_t kLast = std::numeric_limits<int64_t>::max();
  Timeline t;
  t.add(FaultInput{.time_us = kFirst, .host = "past", .event = "port_err"});
  t.add(FaultInput{.time_us = kLast, .host = "future", .event = "port_err"});
  t.add(FaultInput{.time_us = kLast, .host = "future", .event = "port_err"});
  Incident first = one_port("past", 0);
  first.start_us = first.end_us = kFirst;
  Incident last = one_port("future", 0);
  last.start_us = last.end_us = kLast;
  t.add(first);
  t.add(last);
  const std::string page = t.html();
  EXPECT_EQ(occurrences(page, "<g class=\"band\""), 2u);
  EXPECT_EQ(occurrences(page, "class=\"mark down\""), 2u);
  EXPECT_NE(page.find(" future: 2 port downs</title>"), std::string::npos);
  EXPECT_NE(page.find(" past: 1 port down</title>"), std::string::npos);
  EXPECT_EQ(page.find("nan"), std::string::npos);
  EXPECT_EQ(page.find("inf\""), std::string::npos);
  EXPECT_NE(page.find("</html>\n"), std::string::npos);
}

TEST(IncidentsHtml, ManyIncidentsAreRunsOfBandsAndTheTableHoldsTheNewest) {
  Timeline t(50, /*table_rows=*/100);
  // Closed out of order, as incidents of different lengths close.
  for (int i = 999; i >= 0; --i)
    t.add(one_port("h" + std::to_string(i % 40), i * 10'000'000LL));
  const std::string page = t.html();
  EXPECT_EQ(occurrences(page, "<tr class=\"incident\""), 100u);
  const size_t newest = page.find("id=\"incident-1000\"");
  const size_t oldest_shown = page.find("id=\"incident-901\"");
  ASSERT_NE(newest, std::string::npos);
  ASSERT_NE(oldest_shown, std::string::npos);
  EXPECT_LT(newest, oldest_shown);
  EXPECT_EQ(page.find("id=\"incident-900\""), std::string::npos);
  EXPECT_NE(page.find("The newest 100 of 1000 incidents"), std::string::npos);
  // Drawn as runs, each counting the incidents that began in it: 1,000 in all.
  const std::regex run("<title>(\\d+) port incidents? from ");
  uint64_t in_runs = 0;
  size_t runs = 0;
  for (std::sregex_iterator it(page.begin(), page.end(), run), end; it != end; ++it, ++runs)
    in_runs += std::stoull((*it)[1]);
  EXPECT_EQ(in_runs, 1000u);
  EXPECT_GE(runs, 1u);
  EXPECT_LE(runs, 980u);
}

TEST(IncidentsHtml, TheSearchKnowsEveryHostInNameOrderWithWhatItHas) {
  Timeline t;
  t.add(port_fault("b", 0));
  t.add(port_fault("b", 1'000'000, "port_active"));
  t.add(port_fault("a<", 0));
  t.add(one_port("b", 0));
  const std::string page = t.html();
  EXPECT_NE(page.find("<datalist id=\"hostnames\"><option value=\"a&lt;\" data-marks=\"1\" "
                      "data-incidents=\"0\"></option><option value=\"b\" data-marks=\"2\" "
                      "data-incidents=\"1\"></option></datalist>"),
            std::string::npos);
  EXPECT_NE(page.find("<input id=\"find\" list=\"hostnames\""), std::string::npos);
}

TEST(IncidentsHtml, APageOfNothingIsStillAPage) {
  // No entry at all, then one host with one record that is no mark: no rows or one, no axis,
  // nothing drawn, and no number that is not one.
  const std::string empty = Timeline().html();
  EXPECT_NE(empty.find("data-hosts=\"0\" data-rows=\"0\""), std::string::npos);
  EXPECT_EQ(occurrences(empty, "class=\"mark "), 0u);
  EXPECT_EQ(occurrences(empty, "class=\"axis\""), 0u);
  Timeline one;
  one.add(port_fault("n1", 0, "port_state"));
  const std::string page = one.html();
  EXPECT_EQ(occurrences(page, "<g class=\"row\" id=\"row-1\">"), 1u);
  EXPECT_EQ(occurrences(page, "class=\"mark "), 0u);
  for (const std::string& p : {empty, page}) {
    EXPECT_EQ(p.find("nan"), std::string::npos);
    EXPECT_EQ(p.find("inf\""), std::string::npos);
    EXPECT_NE(p.find("</html>\n"), std::string::npos);
  }
}

TEST(IncidentsHtml, EveryIncidentIsABandAndARowNewestFirst) {
  Timeline t;
  t.add(one_port("a", 0));
  Incident fabric = one_port("b", 60'000'000);
  fabric.cls = IncidentClass::kFabric;
  fabric.evidence = "3 hosts";
  t.add(fabric);
  const std::string page = t.html();
  EXPECT_EQ(occurrences(page, "<g class=\"band\""), 2u);
  const std::regex row("<tr class=\"incident\" id=\"incident-(\\d)\" data-class=\"(\\w+)\">");
  std::string rows;
  for (std::sregex_iterator it(page.begin(), page.end(), row), end; it != end; ++it)
    rows += (*it)[1].str() + (*it)[2].str() + " ";
  EXPECT_EQ(rows, "2fabric 1port ");
}

TEST(IncidentsOutput, TextAndJsonSayTheWholeIncident) {
  const Incident i = one_port("node07", 0);
  EXPECT_EQ(format_incident(i),
            "2026-11-27T00:00:00.000Z  1.5 s  port  node07 mlx5_0/1: 2 port_err: the link flaps\n"
            "  node07  mlx5_0/1  2 port_err\n");
  EXPECT_EQ(incident_json(i).dump(),
            R"({"start":"2026-11-27T00:00:00.000000Z","end":"2026-11-27T00:00:01.500000Z",)"
            R"("duration_s":1.5,"class":"port","evidence":"node07 mlx5_0/1: 2 port_err: the )"
            R"(link flaps","records":2,"late_records":0,"port_downs":0,)"
            R"("link_losses":{"hosts":0,"ports":0,"within_s":0.0},)"
            R"("sm_notices":{"hosts":0,"ports":0,"within_s":0.0},"events":{"port_err":2},"hosts":[)"
            R"({"host":"node07","first":"2026-11-27T00:00:00.000000Z",)"
            R"("last":"2026-11-27T00:00:01.500000Z","devices":["mlx5_0"],"ports":["mlx5_0/1"],)"
            R"("sm_ports":[],"events":{"port_err":2}}]})");
  Incident wide = one_port("h00", 0);
  for (int h = 1; h < 14; ++h)
    wide.hosts["h" + std::string(h < 10 ? "0" : "") + std::to_string(h)] = wide.hosts["h00"];
  const std::string text = format_incident(wide, 10);
  EXPECT_EQ(occurrences(text, "\n"), 1u + 10 + 1);
  EXPECT_NE(text.find("  ... and 4 more hosts\n"), std::string::npos);
}

}  // namespace
}  // namespace rdma_eventd_fleet
