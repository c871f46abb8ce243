// rdma-eventctl history --incidents: the grouping of fault records into incidents and their
// classes, with records on a driven clock (times in microseconds from an arbitrary origin).
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "incidents_grouping.h"

namespace rdma_eventd_fleet {
namespace {

using namespace grouping_test;

TEST(Incidents, ARecordExactlyTheGapAfterTheLastJoinsItOneMicrosecondMoreStartsAnother) {
  // The default gap, 5 s: a down at 0, one at exactly 5 s (joins), one at 10 s + 1 us (alone).
  Grouping g;
  EXPECT_EQ(g.run({{0, "n1", "port_err"},
                   {5 * kSecondUs, "n1", "port_err"},
                   {10 * kSecondUs + 1, "n1", "port_err"}}),
            (std::vector<std::string>{
                "0+5000000 port hosts=n1 records=2: n1 mlx5_0/1: 2 port_err: the link flaps, "
                "the cable or transceiver",
                "10000001+0 port hosts=n1 records=1: n1 mlx5_0/1: 1 port_err: one link lost"}));
}

TEST(Incidents, TheGapIsConfigurable) {
  Grouping g({.gap_us = 2 * kSecondUs});
  const auto lines = g.run({{0, "n1", "port_err"},
                            {2 * kSecondUs, "n1", "port_err"},
                            {4 * kSecondUs + 1, "n1", "port_err"}});
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].substr(0, 14), "0+2000000 port");
  EXPECT_EQ(lines[1].substr(0, 14), "4000001+0 port");
}

TEST(Incidents, RecordsThatAreNotFaultsNeitherCountNorKeepAnIncidentOpen) {
  Grouping g;
  EXPECT_FALSE(g.add({0, "n1", "port_active"}));
  EXPECT_FALSE(g.add({0, "n1", "port_health", "mlx5_0", 1, "healthy"}));
  EXPECT_FALSE(g.add({0, "n1", "gid_change"}));
  EXPECT_TRUE(g.add({kSecondUs, "n1", "port_err"}));
  EXPECT_FALSE(g.add({4 * kSecondUs, "n1", "port_active"}));
  EXPECT_TRUE(g.add({8 * kSecondUs, "n1", "port_health", "mlx5_0", 1, "down"}));
  g.grouper_.finish();
  EXPECT_EQ(g.lines(),
            (std::vector<std::string>{
                "1000000+0 port hosts=n1 records=1: n1 mlx5_0/1: 1 port_err: one link lost",
                "8000000+0 port hosts=n1 records=1: n1 mlx5_0/1: 1 port_health down"}));
}

TEST(Incidents, ClosedIncidentsAreGivenOutAsTheInputMovesOnNotAtTheEnd) {
  Grouping g;
  g.add({0, "n1", "port_err"});
  // Entries wait a second (reorder_us) to be taken in time order: n1's is taken, n2's waits;
  // n1's incident may still get a late entry.
  g.add({6 * kSecondUs, "n2", "port_err"});
  EXPECT_EQ(g.out_.size(), 0u);
  EXPECT_EQ(g.grouper_.open_incidents(), 1u);
  EXPECT_EQ(g.grouper_.waiting(), 1u);
  g.add({6 * kSecondUs + 1, "n2", "port_err"});  // 6 s + 1 us past the first: gap + reorder
  EXPECT_EQ(g.out_.size(), 1u);
  EXPECT_EQ(g.grouper_.open_incidents(), 0u);
  EXPECT_EQ(g.grouper_.open_episodes(), 0u);
  EXPECT_EQ(g.grouper_.waiting(), 2u);
}

TEST(Incidents, OneHostWithManyPortsDownIsAHostIncident) {
  Grouping g;
  std::vector<FaultAt> entries;
  for (uint32_t i = 0; i < 8; ++i)
    entries.push_back({i * 1000, "n7", "port_err", "mlx5_" + std::to_string(i), 1});
  entries.push_back({9000, "n7", "port_health", "mlx5_0", 1, "down"});
  EXPECT_EQ(g.run(entries),
            (std::vector<std::string>{
                "0+9000 host hosts=n7 records=9: n7: 8 ports at once (mlx5_0/1, mlx5_1/1, "
                "mlx5_2/1, mlx5_3/1, mlx5_4/1, mlx5_5/1, mlx5_6/1, mlx5_7/1): the host or its "
                "adapter"}));
  EXPECT_EQ(g.out_[0].hosts.at("n7").ports.size(), 8u);
  EXPECT_EQ(g.out_[0].events.at("port_err"), 8u);
  EXPECT_EQ(g.out_[0].events.at("port_health down"), 1u);
}

TEST(Incidents, ADeviceFatalOrGoneIsAHostIncident) {
  Grouping g;
  EXPECT_EQ(g.run({{0, "n3", "device_fatal", "mlx5_1", 0},
                   {1000, "n3", "port_health", "mlx5_1", 1, "fatal"},
                   {20 * kSecondUs, "n4", "device_removed", "mlx5_0", 0},
                   {20 * kSecondUs + 5, "n4", "port_health", "mlx5_0", 1, "gone"}}),
            (std::vector<std::string>{
                "0+1000 host hosts=n3 records=2: n3: device fatal (mlx5_1): the adapter failed",
                "20000000+5 host hosts=n4 records=2: n4: device gone (mlx5_0): the adapter or its "
                "driver went away"}));
}

TEST(Incidents, HostsLosingLinksTogetherWithAnSmChangeAreAFabricIncident) {
  Grouping g;
  std::vector<FaultAt> entries;
  for (int i = 0; i < 23; ++i) {
    const std::string host = "node" + std::to_string(10 + i);
    entries.push_back({i * 36'000, host, "port_err"});
  }
  for (int i = 0; i < 23; ++i) {
    const std::string host = "node" + std::to_string(10 + i);
    entries.push_back({kSecondUs + i * 1000, host, "sm_change"});
  }
  const auto lines = g.run(entries);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(g.out_[0].cls, IncidentClass::kFabric);
  EXPECT_EQ(g.out_[0].hosts.size(), 23u);
  EXPECT_EQ(g.out_[0].evidence,
            "23 hosts, 23 ports down within 0.8 s; 23 sm_change: subnet manager failover");
}

TEST(Incidents, TheFabricThresholdIsConfigurableAndFewerHostsAreNotTheFabric) {
  const std::vector<FaultAt> two = {{0, "a", "port_err"}, {100, "b", "port_err"}};
  Grouping g;
  EXPECT_EQ(g.run(two), (std::vector<std::string>{
                            "0+100 port hosts=a,b records=2: 2 hosts (fewer than the 3 of a "
                            "fabric incident); a mlx5_0/1: 1 port_err: one link lost"}));
  Grouping low({.fabric_hosts = 2});
  EXPECT_EQ(low.run(two), (std::vector<std::string>{
                              "0+100 fabric hosts=a,b records=2: 2 hosts, 2 ports down within "
                              "0.0 s: links lost together, a switch or its links"}));
  Grouping lids;
  EXPECT_EQ(
      lids.run({{0, "a", "lid_change"}, {10, "b", "client_reregister"}, {20, "c", "lid_change"}}),
      (std::vector<std::string>{"0+20 fabric hosts=a,b,c records=3: 3 hosts with SM notices "
                                "within 0.0 s; 2 lid_change, 1 client_reregister: the subnet "
                                "manager swept the fabric"}));
}

TEST(Incidents, AFlappingPortAndModuleErrorsArePortIncidents) {
  Grouping g;
  EXPECT_EQ(g.run({{0, "n2", "port_err", "mlx5_0", 1},
                   {kSecondUs, "n2", "port_err", "mlx5_0", 1},
                   {2 * kSecondUs, "n2", "port_health", "mlx5_0", 1, "flapping"},
                   {60 * kSecondUs, "n5", "module_error", "mlx5_1", 1}}),
            (std::vector<std::string>{
                "0+2000000 port hosts=n2 records=3: n2 mlx5_0/1: 2 port_err, 1 port_health "
                "flapping: the link flaps, the cable or transceiver",
                "60000000+0 port hosts=n5 records=1: n5 mlx5_1/1: 1 module_error: module "
                "errors, the cable or transceiver"}));
}

TEST(Incidents, ALinkQualityBadOrHiddenDownIsAFaultOfItsPortTheOtherChangesAreNot) {
  const auto link = [](int64_t at_us, const char* host, const char* change) {
    return FaultAt{at_us, host, "link_quality", "mlx5_0", 1, "", 0, change};
  };
  Grouping g;
  // Clean again, a counter pegged (errors unknown, none seen) or reset by another tool: none
  // is a fault, nor is an entry without its change.
  EXPECT_FALSE(g.add(link(0, "n1", "clean")));
  EXPECT_FALSE(g.add(link(0, "n1", "pegged")));
  EXPECT_FALSE(g.add(link(0, "n1", "reset")));
  EXPECT_FALSE(g.add(link(0, "n1", "")));
  // Bit errors, and the degraded verdict they cause: one episode of the port.
  EXPECT_TRUE(g.add(link(kSecondUs, "n1", "bad")));
  EXPECT_TRUE(g.add({kSecondUs + 100, "n1", "port_health", "mlx5_0", 1, "degraded"}));
  // A down too brief for an event, alone; then one with a port_err: the link flaps.
  EXPECT_TRUE(g.add(link(60 * kSecondUs, "n2", "hidden_down")));
  EXPECT_TRUE(g.add(link(120 * kSecondUs, "n3", "hidden_down")));
  EXPECT_TRUE(g.add({122 * kSecondUs, "n3", "port_err"}));
  g.grouper_.finish();
  EXPECT_EQ(g.lines(),
            (std::vector<std::string>{
                "1000000+100 port hosts=n1 records=2: n1 mlx5_0/1: 1 link_quality bad, 1 "
                "port_health degraded: errors on the link (its error counters), the cable or "
                "transceiver",
                "60000000+0 port hosts=n2 records=1: n2 mlx5_0/1: 1 link_quality hidden_down: one "
                "link lost too briefly for an event (link_downed)",
                "120000000+2000000 port hosts=n3 records=2: n3 mlx5_0/1: 1 link_quality "
                "hidden_down, 1 port_err: the link flaps, the cable or transceiver"}));
  EXPECT_EQ(g.out_[0].hosts.at("n1").ports, (std::set<std::string>{"mlx5_0/1"}));
  EXPECT_EQ(g.out_[1].downs, 0u) << "port_downs counts port_err records";
}

TEST(Incidents, AnAdaptersDevlinkReporterInErrorIsAHostIncidentItsRecoveryIsNoFault) {
  const auto devlink = [](int64_t at_us, const char* change) {
    return FaultAt{at_us, "n7", "devlink_health", "mlx5_0", 0, "", 0, change};
  };
  Grouping g;
  EXPECT_FALSE(g.add(devlink(0, "recovered")));
  EXPECT_FALSE(g.add(devlink(0, "")));
  EXPECT_TRUE(g.add(devlink(kSecondUs, "error")));
  EXPECT_TRUE(g.add(devlink(2 * kSecondUs, "error_again")));
  g.grouper_.finish();
  EXPECT_EQ(g.lines(), (std::vector<std::string>{
                           "1000000+1000000 host hosts=n7 records=2: n7: adapter health "
                           "reporters in error (mlx5_0): the adapter's firmware or queues "
                           "(devlink health)"}));
}

TEST(Incidents, TwoPortsOfAHostWithBadLinksAtOnceAreAHostIncident) {
  Grouping g;
  EXPECT_EQ(g.run({{0, "n4", "link_quality", "mlx5_0", 1, "", 0, "bad"},
                   {10, "n4", "link_quality", "mlx5_1", 1, "", 0, "bad"}}),
            (std::vector<std::string>{"0+10 host hosts=n4 records=2: n4: 2 ports at once "
                                      "(mlx5_0/1, mlx5_1/1): the host or its adapter"}));
}

TEST(Incidents, ApplicationReportsAloneAreAnApplicationIncident) {
  Grouping g;
  EXPECT_EQ(g.run({{0, "n9", "app_report", "mlx5_0", 0}, {kSecondUs, "n9", "app_report"}}),
            (std::vector<std::string>{"0+1000000 application hosts=n9 records=2: 2 app_reports "
                                      "from 1 host, no fault the daemon saw itself"}));
  // With a fault of the daemon's own, the fault decides.
  Grouping mixed;
  EXPECT_EQ(mixed.run({{0, "n9", "app_report", "mlx5_0", 0}, {10, "n9", "port_err"}}),
            (std::vector<std::string>{
                "0+10 port hosts=n9 records=2: n9 mlx5_0/1: 1 app_report, 1 port_err: one link "
                "lost"}));
}

TEST(Incidents, CopiesFromTheUploadCountOnce) {
  // systemd-journal-upload sends the entry at its cursor again: same stream, same seq.
  Grouping g;
  EXPECT_TRUE(g.add({0, "n1", "port_err", "mlx5_0", 1, "", 7}));
  EXPECT_TRUE(g.add({10, "n1", "port_health", "mlx5_0", 1, "down", 8}));
  EXPECT_FALSE(g.add({0, "n1", "port_err", "mlx5_0", 1, "", 7}));
  EXPECT_FALSE(g.add({10, "n1", "port_health", "mlx5_0", 1, "down", 8}));
  // Another host's stream with the same seq is another record.
  EXPECT_TRUE(g.add({20, "n2", "port_err", "mlx5_0", 1, "", 7}));
  g.grouper_.finish();
  ASSERT_EQ(g.out_.size(), 1u);
  EXPECT_EQ(g.out_[0].records, 3u);
  EXPECT_EQ(g.out_[0].hosts.at("n1").events.at("port_err"), 1u);
}

TEST(Incidents, RecordsOutOfOrderWithinASecondStillJoinTheirIncident) {
  // A merged journal: n2's entry at 4.9 s comes after n3's at 5.3 s. In time order the three
  // begin each within the gap of the one before: one incident, not two. Their links were lost
  // over 5.3 s, at most two within the 2 s fabric window: not the fabric.
  Grouping g;
  EXPECT_EQ(
      g.run({{0, "n1", "port_err"}, {5'300'000, "n3", "port_err"}, {4'900'000, "n2", "port_err"}}),
      (std::vector<std::string>{
          "0+5300000 port hosts=n1,n2,n3 records=3: 3 hosts lost links or saw SM notices, not "
          "together: at most 2 within 2 s (a fabric incident needs 3); n1 mlx5_0/1: 1 "
          "port_err: one link lost"}));
  // An entry late by less than a second joins its incident (n1's, at 4.8 s) although a later
  // one (n2's, which began 5.5 s after n1's) was read before it.
  Grouping late;
  EXPECT_EQ(late.run({{0, "n1", "port_err"},
                      {5'500'000, "n2", "device_fatal", "mlx5_0", 0},
                      {4'800'000, "n1", "port_err"},
                      {30 * kSecondUs, "n1", "port_err"}}),
            (std::vector<std::string>{
                "0+4800000 port hosts=n1 records=2: n1 mlx5_0/1: 2 port_err: the link flaps, the "
                "cable or transceiver",
                "5500000+0 host hosts=n2 records=1: n2: device fatal (mlx5_0): the adapter failed",
                "30000000+0 port hosts=n1 records=1: n1 mlx5_0/1: 1 port_err: one link lost"}));
  // Later than that, it still counts: taken as if it came when it was read.
  Grouping later;
  EXPECT_TRUE(later.add({0, "n1", "port_err"}));
  EXPECT_TRUE(later.add({3 * kSecondUs, "n2", "port_err"}));
  EXPECT_TRUE(later.add({kSecondUs, "n3", "port_err"}));  // 2 s late
  later.grouper_.finish();
  ASSERT_EQ(later.out_.size(), 1u);
  EXPECT_EQ(later.out_[0].records, 3u);
  EXPECT_EQ(later.out_[0].late_records, 1u);
  EXPECT_EQ(later.out_[0].start_us - kGroupingT0, 0);
  EXPECT_EQ(later.out_[0].hosts.at("n3").first_us - kGroupingT0, kSecondUs);
}

TEST(Incidents, IncidentsThatStartAndEndTogetherComeOutInTheOrderOfTheirHostsNames) {
  // Two incidents of the same start and end (each holds a record 100 s late, taken when it was
  // read): z1's port flapping from 0 to 8 s, and b2 and a3 from 8 s. They end together, and
  // come out by their hosts' names, whatever order the grouper's memory happened to be in:
  // two reports of one journal are the same bytes.
  auto run = [] {
    Grouping g;
    for (int64_t s = 0; s <= 8; s += 2)
      g.add({s * kSecondUs, "z1", "port_err"});
    g.add({8 * kSecondUs, "b2", "port_err"});
    g.add({-100 * kSecondUs, "a3", "port_err"});
    g.add({-100 * kSecondUs, "z1", "port_err"});
    g.grouper_.finish();
    return g.lines();
  };
  const std::vector<std::string> expected = {
      "-100000000+108000000 port hosts=a3,b2 records=2: 2 hosts (fewer than the 3 of a fabric "
      "incident); a3 mlx5_0/1: 1 port_err: one link lost",
      "-100000000+108000000 port hosts=z1 records=6: z1 mlx5_0/1: 6 port_err: the link flaps, "
      "the cable or transceiver"};
  EXPECT_EQ(run(), expected);
  // Another run after the heap has been stirred.
  std::vector<std::string> stir;
  for (int i = 0; i < 100; ++i)
    stir.emplace_back(static_cast<size_t>(40 + i % 7 * 13), 'x');
  EXPECT_EQ(run(), expected);
}

TEST(Incidents, MemoryHoldsTheOpenIncidentsNotTheRecords) {
  // A day of records from 200 hosts: one incident a minute, each closed as the next begins.
  size_t given_out = 0;
  size_t most_open = 0;
  IncidentGrouper grouper({}, [&](Incident&&) { ++given_out; });
  uint64_t seq = 0;
  for (int minute = 0; minute < 24 * 60; ++minute) {
    for (int i = 0; i < 50; ++i) {
      const std::string host = "node" + std::to_string((minute * 7 + i) % 200);
      grouper.add({.time_us = kGroupingT0 + minute * 60 * kSecondUs + i * 1000,
                   .host = host,
                   .event = "port_err",
                   .device = "mlx5_0",
                   .port = 1,
                   .stream = "s",
                   .seq = ++seq * 3});  // sparse seqs: other records between
      most_open = std::max(most_open, grouper.open_incidents());
    }
  }
  grouper.finish();
  EXPECT_EQ(given_out, 24u * 60u);
  EXPECT_LE(most_open, 2u);
}

TEST(Incidents, APortIsItsDecimalDigitsOrNone) {
  EXPECT_EQ(port_of("1"), 1u);
  EXPECT_EQ(port_of("4294967295"), 4294967295u);
  for (const char* none : {"", "4294967296", "-1", " 1", "1x", "0x1", "99999999999"})
    EXPECT_EQ(port_of(none), 0u) << none;
}

TEST(SeenRecordsBounded, TheOldestRunsMergeBeyondTheLimit) {
  SeenRecords seen(3);
  for (uint64_t seq : {10, 20, 30, 40})
    EXPECT_FALSE(seen.seen_before("s", seq));
  EXPECT_EQ(seen.runs("s"), 3u);  // 10..20, 30, 40
  EXPECT_TRUE(seen.seen_before("s", 15));
  EXPECT_TRUE(seen.seen_before("s", 40));
  EXPECT_FALSE(seen.seen_before("s", 35));
}

}  // namespace
}  // namespace rdma_eventd_fleet
