// DEVICE_SPEED_CHANGE end to end: the simulator sends the device event (type 20, element 0) as
// mlx5 does when the effective speed of its ports changes (Linux 7.0), changing no port
// attribute; the real daemon, built against and running on rdma-core 44, which has neither a
// name for the type nor ibv_query_port_speed, publishes device_speed_change with every port's
// effective speed unknown, and nothing more. Read back from the subscriber socket, journald
// and rdma-eventctl; and, with an ibv_query_port_speed preloaded, each port's answer. (A link
// that retrains at a lower width is port_health_test.cc's.)
#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "daemon_process.h"
#include "journal_sandbox.h"
#include "json_members.h"
#include "paths.h"
#include "process.h"
#include "temp_dir.h"
#include "test_support.h"

namespace rdma_eventd::test {
namespace {

using nlohmann::json;
using rdmatest::SimFabric;
using rdmatest::topology;

DaemonOptions health_on(const std::string& state_dir) {
  DaemonOptions o;
  o.config_json = json{{"health", {{"enabled", true}}}}.dump();
  o.env = {{"STATE_DIRECTORY", state_dir}};
  return o;
}

// Waits (on the daemon's output) for the first verdict of every port, so that port health knows
// each port's healthy rate before the test changes one; returns `d`.
DaemonProcess& wait_for_first_verdicts(DaemonProcess& d) {
  int verdicts = 0;
  while (verdicts < 3) {
    const Record r = d.next_record();
    if (r.event == EventKind::kPortHealth && r.reason == "first_seen") ++verdicts;
  }
  return d;
}

// A subscriber to mlx5_1's records, subscribed before anything is injected.
class Mlx51Subscriber {
 public:
  explicit Mlx51Subscriber(DaemonProcess& d) : c_(d.socket()) {
    c_.require_json(10s, "the hello");
    c_.send(R"({"op":"subscribe","id":1,"devices":["mlx5_1"]})"
            "\n");
    c_.read_until(reply_to(1), 10s);
  }
  struct Got {
    std::string line;  // as the daemon wrote it
    json parsed;
    Record record;
  };
  // The next record line, whole, as JSON and as the record it parses to.
  Got next() {
    Got got;
    got.line = c_.require_line(20s, "a record of mlx5_1");
    std::string error;
    std::optional<Record> r = record_from_json(got.line, &error);
    if (!r) ADD_FAILURE() << error << ": " << got.line;
    got.parsed = json::parse(got.line);
    got.record = r.value_or(Record{});
    return got;
  }

 private:
  LineClient c_;
};

// Nothing more came after record `seq`: a GID change of mlx5_1 made now is the very next record
// the daemon publishes and the subscriber gets.
void expect_next_is_the_marker(const SimFabric& sim, Mlx51Subscriber& sub, uint64_t seq) {
  inject(sim, {"gid", "add-ip", "mlx5_1/1", "10.9.9.9", "--netdev", "ens1f0"});
  const auto [line, parsed, marker] = sub.next();
  EXPECT_EQ(marker.event, EventKind::kGidChange) << line;
  EXPECT_EQ(marker.seq, seq + 1) << line;
}

// The two-adapter simulator, the daemon with port health on, once it has judged every port,
// and a subscriber to mlx5_1's records, subscribed before anything is injected.
class SpeedChange : public ::testing::Test {
 protected:
  // The subscriber subscribes once the daemon has given every port its first verdict.
  SpeedChange() : d_(sim_, health_on(state_.path())), sub_(wait_for_first_verdicts(d_)) {}

  SimFabric sim_{topology("two-adapters")};
  rdmatest::TempDir state_{"rdma-speed"};
  DaemonProcess d_;
  Mlx51Subscriber sub_;
};

TEST_F(SpeedChange, WithNoWidthChangeTheEffectiveSpeedIsUnknownAndNothingIsJudged) {
  // A member link of the bond changed: the effective speed of mlx5_1's ports changed, which
  // ibv_query_port does not show (the simulator changes no attribute, as the kernel does not).
  // rdma-core 44 has no ibv_query_port_speed, so the record says the speed is unknown; no
  // port_state follows and no verdict is invented from attributes that did not change.
  inject(sim_, {"speed-change", "mlx5_1"});
  const auto [speed_line, speed_json, speed] = sub_.next();
  EXPECT_EQ(stable_part(speed_json), speed_change_record("mlx5_1", 2));
  // No port_state, no verdict: the next record of mlx5_1 is the marker's.
  expect_next_is_the_marker(sim_, sub_, speed.seq);

  // The journal: the device record with its own message.
  const json j = journal_entry_of(d_, speed);
  const json fields = {{"MESSAGE",
                        "mlx5_1: device speed change; effective speed unknown (libibverbs has no "
                        "ibv_query_port_speed)"},
                       {"MESSAGE_ID", "bd9de6735e2748138e37a3e132a25f68"},
                       {"PRIORITY", "5"},
                       {"RDMA_EVENT", "device_speed_change"},
                       {"RDMA_EVENT_TYPE", "20"},
                       {"RDMA_PORT", "0"},
                       {"RDMA_RECORD", speed_line}};
  EXPECT_EQ(rdmatest::members_of(j, fields), fields);
  EXPECT_FALSE(j.contains("RDMA_PORT_STATE"));  // a device record: no port block

  // rdma-eventctl: the record as a line (replayed from the daemon's ring), and no verdict.
  const rdmatest::CommandResult m = rdmatest::run_command(
      {rdmatest::bin("rdma-eventctl"), "--socket", d_.socket(), "monitor", "--since",
       std::to_string(speed.seq - 1), "--device", "mlx5_1", "--count", "1", "--color", "never"});
  ASSERT_EQ(m.exit_code(), 0) << m.out << m.err;
  const std::vector<std::string> lines = m.out_lines();
  ASSERT_EQ(lines.size(), 1u) << m.out;
  EXPECT_EQ(lines[0].substr(28),
            "notice   mlx5_1    device_speed_change device speed change; effective speed "
            "unknown (libibverbs has no ibv_query_port_speed) [seq " +
                std::to_string(speed.seq) + "]");
  const rdmatest::CommandResult h =
      rdmatest::run_command({rdmatest::bin("rdma-eventctl"), "--socket", d_.socket(), "health"});
  EXPECT_EQ(h.exit_code(), 0) << h.out << h.err;
  EXPECT_EQ(h.out.find("degraded"), std::string::npos) << h.out;
}

TEST(SpeedChangeWhereTheLibraryHasTheCall, EachPortsEffectiveSpeedIsWhatItAnswers) {
  // rdma-core 62's ibv_query_port_speed preloaded into the daemon (port_speed_preload.cc: the
  // port's rate from ibv_query_port, 100 Gb/s for each of mlx5_1's 4x EDR ports): the daemon's
  // run-time lookup finds it and the record carries its answers.
  SimFabric sim{topology("two-adapters")};
  rdmatest::TempDir state{"rdma-speed"};
  DaemonOptions o = health_on(state.path());
  o.env["LD_PRELOAD"] = PORT_SPEED_PRELOAD;
  // In an AddressSanitizer build the preloaded library comes before the ASan runtime, which
  // would refuse to start; that order is this test's doing, not the daemon's.
  const char* asan = std::getenv("ASAN_OPTIONS");
  o.env["ASAN_OPTIONS"] = std::string(asan ? asan : "") + ":verify_asan_link_order=0";
  DaemonProcess d(sim, o);
  Mlx51Subscriber sub(wait_for_first_verdicts(d));
  inject(sim, {"speed-change", "mlx5_1"});
  const auto [speed_line, speed_json, speed] = sub.next();
  EXPECT_EQ(speed.event, EventKind::kDeviceSpeedChange) << speed_line;
  EXPECT_EQ(speed_json["effective_speed"], json::parse(R"([{"port":1,"gbps":100,"unknown":null},
                                                           {"port":2,"gbps":100,"unknown":null}])"))
      << speed_line;
  expect_next_is_the_marker(sim, sub, speed.seq);
}

}  // namespace
}  // namespace rdma_eventd::test
