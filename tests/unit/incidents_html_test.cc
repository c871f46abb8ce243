// rdma-eventctl history --html's page and --incidents' text and JSON, from incidents and marks
// made here: what a host name can hold is escaped, many hosts share rows, marks are bounded.
#include "incidents_html.h"

#include <gtest/gtest.h>

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
  EXPECT_NE(page.find("mlx5_&lt;0&gt;/1 port_err"), std::string::npos);
  // Only the page's own script.
  EXPECT_EQ(occurrences(page, "<script>"), 1u);
}

TEST(IncidentsHtml, OneRowPerHostThenRowsOfSeveral) {
  Timeline few;
  for (int i = 0; i < 50; ++i)
    few.add(port_fault("h" + std::to_string(100 + i), i, "port_active"));
  const std::string small = few.html();
  EXPECT_EQ(occurrences(small, "<g class=\"row\">"), 50u);
  EXPECT_NE(small.find(">h149</text>"), std::string::npos);

  Timeline many;
  for (int i = 0; i < 1000; ++i)
    many.add(port_fault("h" + std::to_string(1000 + i), i));
  const std::string big = many.html();
  EXPECT_EQ(occurrences(big, "<g class=\"row\">"), 50u);
  EXPECT_NE(big.find(">h1000 \u2026 h1019 (20)</text>"), std::string::npos);
  EXPECT_NE(big.find(">h1980 \u2026 h1999 (20)</text>"), std::string::npos);
  EXPECT_NE(big.find("data-hosts=\"1000\""), std::string::npos);
}

TEST(IncidentsHtml, MarksAreBoundedPerHostAndSaySo) {
  Timeline t(/*marks_per_host=*/10);
  for (int i = 0; i < 25; ++i)
    t.add(port_fault("n1", i * 1'000'000LL));
  const std::string page = t.html();
  EXPECT_EQ(occurrences(page, "<line class=\"mark down\""), 10u);
  EXPECT_NE(page.find("15 marks not drawn (at most 10 per host)"), std::string::npos);
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
