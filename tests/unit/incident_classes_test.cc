// Classes that mean what they say: "fabric" only when the hosts' link losses (or SM notices)
// come within the fabric window of each other, not merely chained by the gap; a port that
// flaps for hours is its own incident and draws nothing else in; SM, LID and re-registration
// notices are evidence of their own kind, not ports.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "incidents_grouping.h"

namespace rdma_eventd_fleet {
namespace {

using namespace grouping_test;

TEST(IncidentClasses, ChainedLinkLossesAreNotTheFabricUnlessWithinTheWindow) {
  // Three hosts lose a link 4 s apart: each within the gap (5 s) of the one before, so one
  // incident; but never two within the fabric window (2 s) of each other.
  const std::vector<FaultAt> chained = {
      {0, "a", "port_err"}, {4 * kSecondUs, "b", "port_err"}, {8 * kSecondUs, "c", "port_err"}};
  Grouping g;
  EXPECT_EQ(g.run(chained), (std::vector<std::string>{
                                "0+8000000 port hosts=a,b,c records=3: 3 hosts lost links or saw "
                                "SM notices, not together: at most 1 within 2 s (a fabric "
                                "incident needs 3); a mlx5_0/1: 1 port_err: one link lost"}));
  EXPECT_EQ(g.out_[0].link_losses.hosts, 1u);
  EXPECT_EQ(g.out_[0].link_losses.hosts_in_all, 3u);
  // A window that holds all three: the fabric.
  Grouping wide({.fabric_window_us = 8 * kSecondUs});
  EXPECT_EQ(wide.run(chained),
            (std::vector<std::string>{"0+8000000 fabric hosts=a,b,c records=3: 3 hosts, 3 ports "
                                      "down within 8.0 s: links lost together, a switch or its "
                                      "links"}));
}

TEST(IncidentClasses, TheFabricWindowHoldsItsEndsExactly) {
  Grouping within;
  within.run(
      {{0, "a", "port_err"}, {kSecondUs, "b", "port_err"}, {2 * kSecondUs, "c", "port_err"}});
  ASSERT_EQ(within.out_.size(), 1u);
  EXPECT_EQ(within.out_[0].cls, IncidentClass::kFabric);
  EXPECT_EQ(within.out_[0].link_losses.spread_us, 2 * kSecondUs);
  Grouping beyond;
  beyond.run(
      {{0, "a", "port_err"}, {kSecondUs, "b", "port_err"}, {2 * kSecondUs + 1, "c", "port_err"}});
  ASSERT_EQ(beyond.out_.size(), 1u);
  EXPECT_EQ(beyond.out_[0].cls, IncidentClass::kPort);
  EXPECT_EQ(beyond.out_[0].link_losses.hosts, 2u);
}

TEST(IncidentClasses, APortFlappingForHoursWhileUnrelatedHostsFailIsNotTheFabric) {
  // node00's port flaps for three hours: down every 2 s, a flapping verdict every 10 min.
  // Meanwhile 30 other hosts each lose a link once, 350 s apart. Chained by the gap, all of
  // it would be one incident of 31 hosts losing links: the fabric. It is 31 incidents, none of
  // the fabric: the flap, and each host's own.
  Grouping g;
  std::vector<FaultAt> entries;
  const int64_t hours = 3 * 3600 * kSecondUs;
  for (int64_t t = 0; t < hours; t += 2 * kSecondUs) {
    entries.push_back({t, "node00", "port_err"});
    if (t % (600 * kSecondUs) == 0)
      entries.push_back({t + 150, "node00", "port_health", "mlx5_0", 1, "flapping"});
  }
  for (int i = 1; i <= 30; ++i) {
    const int64_t t = i * 350 * kSecondUs + 500'000;
    const std::string host = "node" + std::string(i < 10 ? "0" : "") + std::to_string(i);
    entries.push_back({t, host, "port_err"});
    entries.push_back({t + 150, host, "port_health", "mlx5_0", 1, "down"});
  }
  std::stable_sort(entries.begin(), entries.end(),
                   [](const FaultAt& a, const FaultAt& b) { return a.at_us < b.at_us; });
  size_t most_open = 0;
  for (const auto& e : entries) {
    g.add(e);
    most_open = std::max(most_open, g.grouper_.open_incidents());
  }
  g.grouper_.finish();
  ASSERT_EQ(g.out_.size(), 31u);
  for (const Incident& i : g.out_) {
    EXPECT_NE(i.cls, IncidentClass::kFabric) << i.evidence;
    EXPECT_EQ(i.hosts.size(), 1u) << i.evidence;
  }
  // In the order they end: the flap last, whole.
  const Incident& flap = g.out_.back();
  EXPECT_EQ(flap.hosts.begin()->first, "node00");
  EXPECT_EQ(flap.cls, IncidentClass::kPort);
  EXPECT_EQ(flap.records, 5400u + 18u);
  EXPECT_EQ(flap.end_us - flap.start_us, hours - 2 * kSecondUs);
  EXPECT_EQ(flap.evidence,
            "node00 mlx5_0/1: 5400 port_err, 18 port_health flapping: the link flaps, the cable "
            "or transceiver");
  EXPECT_EQ(g.out_[0].evidence, "node01 mlx5_0/1: 1 port_err, 1 port_health down: one link lost");
  // Memory: the flap's incident and one host's at a time.
  EXPECT_LE(most_open, 2u);
}

TEST(IncidentClasses, AFabricEventDuringAFlapIsStillTheFabric) {
  // node00 flaps; at 60 s a switch takes four other hosts' links within 0.4 s, and node00's
  // with them (a down of its flap), then the subnet manager fails over.
  Grouping g;
  std::vector<FaultAt> entries;
  for (int64_t t = 0; t < 120 * kSecondUs; t += 2 * kSecondUs)
    entries.push_back({t, "node00", "port_err"});
  for (int i = 1; i <= 4; ++i)
    entries.push_back({60 * kSecondUs + i * 100'000, "node0" + std::to_string(i), "port_err"});
  for (int i = 0; i <= 4; ++i)
    entries.push_back({61 * kSecondUs + i * 1000, "node0" + std::to_string(i), "sm_change"});
  std::stable_sort(entries.begin(), entries.end(),
                   [](const FaultAt& a, const FaultAt& b) { return a.at_us < b.at_us; });
  const auto lines = g.run(entries);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0],
            "60100000+904000 fabric hosts=node00,node01,node02,node03,node04 records=9: 4 hosts, "
            "4 ports down within 0.3 s; 5 sm_change: subnet manager failover");
  EXPECT_EQ(g.out_[0].hosts.at("node00").events,
            (std::map<std::string, uint64_t>{{"sm_change", 1}}))
      << "node00's down belongs to its flap";
  EXPECT_EQ(lines[1].substr(0, 37), "0+118000000 port hosts=node00 records");
}

TEST(IncidentClasses, HiddenDownsOfManyHostsAreNotTheFabric) {
  // Each is stamped when its host read the counters, up to a minute after the down: three
  // within a second of each other are their hosts' timers, not a switch.
  Grouping g;
  const auto hidden = [](int64_t at_us, const char* host) {
    return FaultAt{at_us, host, "link_quality", "mlx5_0", 1, "", 0, "hidden_down"};
  };
  EXPECT_EQ(g.run({hidden(0, "a"), hidden(100, "b"), hidden(200, "c")}),
            (std::vector<std::string>{
                "0+200 port hosts=a,b,c records=3: 3 hosts, 0 losing links or seeing SM notices "
                "(fewer than the 3 of a fabric incident); a mlx5_0/1: 1 link_quality hidden_down: "
                "one link lost too briefly for an event (link_downed)"}));
  EXPECT_EQ(g.out_[0].link_losses.hosts_in_all, 0u);
}

TEST(IncidentClasses, SmNoticesAreEvidenceOfTheirOwnNotPorts) {
  // A host with two rails: a subnet manager failover reaches both. Not "2 ports at once": no
  // link was lost.
  Grouping rails;
  EXPECT_EQ(rails.run({{0, "n1", "sm_change", "mlx5_0", 1},
                       {200, "n1", "sm_change", "mlx5_1", 1},
                       {400, "n1", "client_reregister", "mlx5_1", 1}}),
            (std::vector<std::string>{
                "0+400 sm hosts=n1 records=3: n1 mlx5_0/1, mlx5_1/1: 1 client_reregister, 2 "
                "sm_change: the subnet manager changed the port's SM, LID or registration; no "
                "link lost"}));
  EXPECT_TRUE(rails.out_[0].hosts.at("n1").ports.empty());
  EXPECT_EQ(rails.out_[0].hosts.at("n1").sm_ports, (std::set<std::string>{"mlx5_0/1", "mlx5_1/1"}));
  // Both rails' links lost: that is the host.
  Grouping lost;
  EXPECT_EQ(lost.run({{0, "n1", "port_err", "mlx5_0", 1},
                      {100, "n1", "port_err", "mlx5_1", 1},
                      {200, "n1", "sm_change", "mlx5_0", 1}}),
            (std::vector<std::string>{"0+200 host hosts=n1 records=3: n1: 2 ports at once "
                                      "(mlx5_0/1, mlx5_1/1): the host or its adapter"}));
  // One rail lost, the other only told of the failover: the port.
  Grouping one;
  EXPECT_EQ(one.run({{0, "n1", "port_err", "mlx5_0", 1}, {100, "n1", "sm_change", "mlx5_1", 1}}),
            (std::vector<std::string>{
                "0+100 port hosts=n1 records=2: n1 mlx5_0/1: 1 port_err, 1 sm_change: one link "
                "lost"}));
  // Three hosts' notices within the window: the subnet manager, for the whole fabric.
  Grouping three;
  std::vector<FaultAt> entries;
  for (int h = 0; h < 3; ++h) {
    for (const char* device : {"mlx5_0", "mlx5_1"})
      entries.push_back({h * 300'000, "n" + std::to_string(h), "sm_change", device, 1});
  }
  EXPECT_EQ(three.run(entries),
            (std::vector<std::string>{"0+600000 fabric hosts=n0,n1,n2 records=6: 3 hosts with SM "
                                      "notices within 0.6 s; 6 sm_change: subnet manager "
                                      "failover"}));
}

}  // namespace
}  // namespace rdma_eventd_fleet
