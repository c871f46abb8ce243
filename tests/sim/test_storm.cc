// Storms: every injected event reaches every context of its device exactly once and in order,
// and the accounting agrees.
#include <infiniband/verbs.h>

#include <map>

#include "sim_test.h"

namespace simtest {
namespace {

struct Target {
  std::string device;
  int port;
};

// What drain reports for the events of `device`, computed from the storm's round-robin rule:
// event i goes to target i mod T with type (i div T) mod K.
json expected_drain(const std::vector<Target>& targets, const std::vector<int>& types,
                    uint64_t count, const std::string& device) {
  std::map<std::string, uint64_t> per;
  uint64_t hash = 1469598103934665603ULL, n = 0;
  for (uint64_t i = 0; i < count; ++i) {
    const Target& t = targets[i % targets.size()];
    if (t.device != device) continue;
    const uint32_t words[2] = {static_cast<uint32_t>(types[(i / targets.size()) % types.size()]),
                               static_cast<uint32_t>(t.port)};
    for (size_t b = 0; b < sizeof words; ++b)
      hash = (hash ^ reinterpret_cast<const uint8_t*>(words)[b]) * 1099511628211ULL;
    ++per[std::to_string(words[0]) + "/" + std::to_string(words[1])];
    ++n;
  }
  return {{"read", n}, {"per", per}, {"hash", std::to_string(hash)}};
}

json without_timing(json drain) {
  drain.erase("seconds");
  drain.erase("ret");
  return drain;
}

TEST(Storm, EveryEventArrivesExactlyOnceInOrderAtEveryContext) {
  // 300,000 events over three ports of two devices, three types; two processes, three contexts.
  // The pipes hold far fewer, so most wait in the simulator's backlog while the readers drain.
  Sim sim(rdmatest::topology("sixteen-devices"));
  VerbsShell p1(sim), p2(sim);
  p1("list");
  p2("list");
  const std::string a0 = p1("open L1:mlx5_0")["ctx"], a1 = p1("open L1:mlx5_1")["ctx"];
  const std::string b0 = p2("open L1:mlx5_0")["ctx"];
  const std::vector<Target> targets = {{"mlx5_0", 1}, {"mlx5_0", 2}, {"mlx5_1", 2}};
  const std::vector<int> types = {IBV_EVENT_PORT_ERR, IBV_EVENT_PORT_ACTIVE, IBV_EVENT_LID_CHANGE};
  const uint64_t count = 300000;

  const json storm =
      sim.ctl_json({"storm", "--count", std::to_string(count), "--targets",
                    "mlx5_0/1,mlx5_0/2,mlx5_1/2", "--types", "port_err,port_active,lid_change"});
  ASSERT_TRUE(storm["ok"]) << storm.dump();
  EXPECT_EQ(storm["count"], count);
  EXPECT_EQ(storm["deliveries"], count / 3 * 2 * 2 + count / 3);
  EXPECT_GT(storm["events_per_second"].get<double>(), 0);

  const json want0 = expected_drain(targets, types, count, "mlx5_0");
  const json want1 = expected_drain(targets, types, count, "mlx5_1");
  // Both processes drain at once.
  p1.send("drain " + a0 + " " + want0["read"].dump());
  p2.send("drain " + b0 + " " + want0["read"].dump());
  EXPECT_EQ(without_timing(p1.receive(120s)), want0);
  EXPECT_EQ(without_timing(p2.receive(120s)), want0);
  EXPECT_EQ(without_timing(p1("drain " + a1 + " " + want1["read"].dump())), want1);
  for (auto [sh, ctx] : {std::pair{&p1, a0}, {&p1, a1}, {&p2, b0}}) {
    (*sh)("nonblock " + ctx + " 1");
    EXPECT_EQ((*sh)("get_event " + ctx)["errno_name"], "EAGAIN");  // nothing more
  }

  const json s = sim.stats();
  const uint64_t n0 = want0["read"], n1 = want1["read"];
  std::vector<std::tuple<std::string, uint64_t, uint64_t, uint64_t>> got;
  for (const json& c : s["contexts"])
    got.emplace_back(c["device"], c["queued"], c["read"], c["acked"]);
  EXPECT_EQ(got, (std::vector<std::tuple<std::string, uint64_t, uint64_t, uint64_t>>{
                     {"mlx5_0", n0, n0, n0}, {"mlx5_1", n1, n1, n1}, {"mlx5_0", n0, n0, n0}}));
  EXPECT_EQ(s["totals"]["events_queued"], 2 * n0 + n1);
  EXPECT_EQ(s["totals"]["events_read"], 2 * n0 + n1);
  EXPECT_EQ(s["totals"]["events_acked"], 2 * n0 + n1);
}

TEST(Storm, AllTargetsAndDefaultTypes) {
  // --targets all: every port of every live device, types port_err then port_active.
  Sim sim(two_adapters());
  VerbsShell sh(sim);
  sh("list");
  const std::string c = sh("open L1:mlx5_1")["ctx"];
  const json storm = sim.ctl_json({"storm", "--count", "12"});
  ASSERT_TRUE(storm["ok"]);
  EXPECT_EQ(storm["targets"], 3);
  // Targets: mlx5_0/1, mlx5_1/1, mlx5_1/2. Events 1, 2, 4, 5, 7, 8, 10, 11 are mlx5_1's.
  const std::vector<std::pair<int, int>> want = {{10, 1}, {10, 2}, {9, 1}, {9, 2},
                                                 {10, 1}, {10, 2}, {9, 1}, {9, 2}};
  for (const auto& [type, port] : want) {
    const json ev = sh("get_event " + c);
    EXPECT_EQ(ev["type"], type);
    EXPECT_EQ(ev["port_num"], port);
  }
  sh("nonblock " + c + " 1");
  EXPECT_EQ(sh("get_event " + c)["errno_name"], "EAGAIN");
}

}  // namespace
}  // namespace simtest
