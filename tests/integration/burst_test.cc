// Bursts: many events on one device, read in batches. Every event is read and acked, every
// record appears once and in order, both on the daemon's output and in the journal.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "daemon_process.h"
#include "journal_sandbox.h"
#include "paths.h"
#include "test_support.h"

namespace rdma_eventd::test {
namespace {

using nlohmann::json;
using rdmatest::SimFabric;
using rdmatest::topology;

TEST(Burst, TenThousandEventsOnOneDeviceAreEachRecordedOnceInOrder) {
  constexpr int kEvents = 10000;
  SimFabric sim(topology("two-adapters"));
  // The journal budget off: the journal must hold every one of the port's records.
  DaemonProcess daemon(sim, R"({"journal": {"budget": {"enabled": false}}})");
  auto mlx5_0_context = [&](const json& stats) {
    for (const auto& c : contexts_of(stats, daemon.process().pid())) {
      if (c["device"] == "mlx5_0") return c;
    }
    throw rdmatest::HarnessError("the daemon has no context of mlx5_0");
  };
  const json before = mlx5_0_context(sim.stats());

  inject(sim, {"storm", "--count", std::to_string(kEvents), "--targets", "mlx5_0/1", "--types",
               "lid_change,client_reregister"});

  // The daemon's output: seq 1..N, in order, each event the storm queued, in its order.
  for (int i = 0; i < kEvents; ++i) {
    const Record r = daemon.next_record();
    ASSERT_EQ(r.seq, static_cast<uint64_t>(i + 1));
    ASSERT_EQ(r.event, i % 2 == 0 ? EventKind::kLidChange : EventKind::kClientReregister) << i;
    ASSERT_EQ(r.device, "mlx5_0");
    ASSERT_EQ(r.port, 1u);
    ASSERT_TRUE(r.port_info);
    ASSERT_EQ(r.port_info->lid, 7u);
  }

  // Every event read and acked, none left queued.
  const json stats = sim.wait_stats(
      [&](const json& s) {
        auto ctx = contexts_of(s, daemon.process().pid());
        for (const auto& c : ctx) {
          if (c["device"] == "mlx5_0") return c["read"] == kEvents && c["acked"] == kEvents;
        }
        return false;
      },
      30s, "every storm event read and acked");
  const json after = mlx5_0_context(stats);
  EXPECT_EQ(after["queued"], kEvents);
  EXPECT_EQ(after["backlog"], 0);

  // The cost of enrichment does not grow with the burst: one query of port 1 per batch the
  // daemon read (a batch is at most 256 events), and no GID or P_Key query at all for these
  // events, as counted by the simulator.
  const uint64_t batches = daemon.status()["counters"]["batches"];
  EXPECT_GE(batches, static_cast<uint64_t>((kEvents + 255) / 256));
  // The storm queues its events at once, so batches are (nearly) full.
  EXPECT_LE(batches, static_cast<uint64_t>(kEvents / 16));
  EXPECT_EQ(after["port_queries"].get<uint64_t>() - before["port_queries"].get<uint64_t>(),
            batches);
  EXPECT_EQ(after["gid_queries"], before["gid_queries"]);
  EXPECT_EQ(after["pkey_queries"], before["pkey_queries"]);

  // The journal: exactly N entries of this stream, seq 1..N each once, in order.
  const auto entries = daemon.journal_entries(kEvents);
  ASSERT_EQ(entries.size(), static_cast<size_t>(kEvents));
  for (int i = 0; i < kEvents; ++i) {
    ASSERT_EQ(entries[i]["RDMA_SEQ"], std::to_string(i + 1)) << "entry " << i;
  }
}

TEST(Burst, EventsOfSeveralDevicesAreAllRecordedWithStrictlyIncreasingSeq) {
  constexpr int kEvents = 4000;
  SimFabric sim(topology("two-adapters"));
  DaemonProcess daemon(sim, R"({"journal": {"enabled": false}})");

  inject(sim, {"storm", "--count", std::to_string(kEvents), "--targets",
               "mlx5_0/1,mlx5_1/1,mlx5_1/2", "--types", "port_active"});

  // Per target the storm's order holds; across devices only seq's strict increase is promised.
  std::map<std::string, int> per_port;
  uint64_t last_seq = 0;
  for (int i = 0; i < kEvents; ++i) {
    const Record r = daemon.next_record();
    ASSERT_GT(r.seq, last_seq);
    last_seq = r.seq;
    ASSERT_EQ(r.event, EventKind::kPortActive);
    ++per_port[r.device + "/" + std::to_string(r.port)];
  }
  EXPECT_EQ(per_port, (std::map<std::string, int>{
                          {"mlx5_0/1", 1334}, {"mlx5_1/1", 1333}, {"mlx5_1/2", 1333}}));
  EXPECT_EQ(last_seq, static_cast<uint64_t>(kEvents));
}

}  // namespace
}  // namespace rdma_eventd::test
