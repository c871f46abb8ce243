// rdma-eventd-slurm's drain record (slurm/drain_record.h) across reboots: each SlurmNode is one
// run of the follower, with a fake Slurm; the record in a state directory of the test's own is
// what the runs share. And the record's own reading and writing.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "drain_record.h"
#include "follower_fakes.h"
#include "policy.h"
#include "slurm_fakes.h"
#include "slurm_node.h"

namespace slurm_reboot_test {

using namespace std::chrono_literals;
using namespace slurm_fakes;
using follower_fakes::FakeTime;
using rdma_eventd_slurm::Config;
using rdma_eventd_slurm::Wanted;
using rdma_eventd_slurm::wanted_state;

Config reboot_config(const std::string& state_directory) {
  Config c;
  c.node_name = "testnode";
  c.socket = "/run/rdma-eventd/events.sock";
  c.drain_splay_s = 0;
  c.state_directory = state_directory;
  return c;
}

// The node as SlurmNode sees it across a reboot: each SlurmNode is one run of the follower, the
// drain record in the fixture's state directory what the runs share.
struct RebootFixture {
  RebootFixture() { config = reboot_config(state.path); }
  static HealthReply::Port adapter_port(const char* device, const char* guid, const char* health) {
    HealthReply::Port p = port(device, health);
    p.node_guid = guid;
    return p;
  }
  HealthReply health(std::vector<HealthReply::Port> ports) const {
    HealthReply h;
    h.enabled = true;
    h.ports = std::move(ports);
    return h;
  }
  // One reconciliation by `node`; what it said.
  std::string reconcile(rdma_eventd_slurm::SlurmNode& node, const HealthReply& h) {
    std::string message;
    EXPECT_EQ(node.reconcile(&h, 1s, &message), rdma_eventd_slurm::SlurmNode::Result::kDone)
        << message;
    return message;
  }
  // A run of the follower before the reboot, which reconciles once with these verdicts.
  void run_before_the_reboot(std::vector<HealthReply::Port> ports) {
    rdma_eventd_slurm::SlurmNode before(config, false, slurm, time);
    reconcile(before, health(std::move(ports)));
  }
  std::string record_text() const {
    std::ifstream in(state.path + "/drain.json");
    return {std::istreambuf_iterator<char>(in), {}};
  }
  StateDir state;
  Config config;
  FakeTime time;
  FakeSlurm slurm;
};

constexpr const char* kGuidA = "0c42:a103:00f6:5e44";
constexpr const char* kGuidB = "0c42:a103:006d:0b3a";

TEST(SlurmReboot, TheCardThatTookTheDeadCardsNameDoesNotResumeTheNode) {
  RebootFixture f;
  f.run_before_the_reboot({RebootFixture::adapter_port("mlx5_0", kGuidA, "fatal"),
                           RebootFixture::adapter_port("mlx5_1", kGuidB, "healthy")});
  EXPECT_EQ(f.slurm.reason, "rdma-eventd: mlx5_0/1 fatal");
  EXPECT_EQ(f.record_text(),
            std::string("{\"node\":\"testnode\",\"ports\":[{\"name\":\"mlx5_0/1\",") +
                "\"node_guid\":\"" + kGuidA +
                "\",\"port\":1}],\"reason\":\"rdma-eventd: " + "mlx5_0/1 fatal\",\"version\":1}\n");
  // The reboot: the dead card does not probe, the other one is mlx5_0 now, and the daemon's
  // state is gone with its inventory: it shows one healthy port.
  rdma_eventd_slurm::SlurmNode after(f.config, false, f.slurm, f.time);
  EXPECT_EQ(after.load_drain_record(), "");
  const std::string said =
      f.reconcile(after, f.health({RebootFixture::adapter_port("mlx5_0", kGuidB, "healthy")}));
  EXPECT_EQ(f.slurm.reason, std::string("rdma-eventd: ") + kGuidA + "/1 missing") << said;
  EXPECT_EQ(f.slurm.state, "IDLE+DRAIN");
  // The reason it wrote is in the record, with the port still by its identity.
  EXPECT_NE(f.record_text().find(std::string("\"name\":\"") + kGuidA + "/1\""), std::string::npos)
      << f.record_text();
  f.reconcile(after, f.health({RebootFixture::adapter_port("mlx5_0", kGuidB, "healthy")}));
  EXPECT_EQ(f.slurm.state, "IDLE+DRAIN") << "a reconciliation later";
  // The card is back, under the other name, and healthy: resumed, and the record removed.
  f.reconcile(after, f.health({RebootFixture::adapter_port("mlx5_0", kGuidB, "healthy"),
                               RebootFixture::adapter_port("mlx5_1", kGuidA, "healthy")}));
  EXPECT_EQ(f.slurm.state, "IDLE");
  EXPECT_FALSE(std::filesystem::exists(f.state.path + "/drain.json"));
}

TEST(SlurmReboot, TheRecordIsOfTheNodeSlurmAnsweredWithWhenTheHostNameDiffers) {
  RebootFixture f;
  f.config.node_name = "testhost";  // Slurm answers with the node whose NodeHostName it is
  f.slurm.host_name = "testhost";
  f.run_before_the_reboot({RebootFixture::adapter_port("mlx5_0", kGuidA, "fatal")});
  EXPECT_NE(f.record_text().find("\"node\":\"testnode\""), std::string::npos) << f.record_text();
  rdma_eventd_slurm::SlurmNode after(f.config, false, f.slurm, f.time);
  EXPECT_EQ(after.load_drain_record(), "");
  f.reconcile(after, f.health({RebootFixture::adapter_port("mlx5_0", kGuidB, "healthy")}));
  EXPECT_EQ(f.slurm.reason, std::string("rdma-eventd: ") + kGuidA + "/1 missing");
}

TEST(SlurmReboot, ADrainForTheDaemonUnreachableRecordsNoPortOfAnEarlierDrain) {
  RebootFixture f;
  f.config.drain_when_daemon_unreachable = true;
  rdma_eventd_slurm::SlurmNode node(f.config, false, f.slurm, f.time);
  f.reconcile(node, f.health({RebootFixture::adapter_port("mlx5_0", kGuidA, "fatal")}));
  f.reconcile(node, f.health({RebootFixture::adapter_port("mlx5_0", kGuidA, "healthy")}));
  ASSERT_EQ(f.slurm.state, "IDLE");
  std::string message;
  ASSERT_EQ(node.reconcile(nullptr, 1s, &message), rdma_eventd_slurm::SlurmNode::Result::kDone);
  EXPECT_EQ(f.slurm.reason, "rdma-eventd: rdma-eventd unreachable");
  EXPECT_NE(f.record_text().find("\"ports\":[]"), std::string::npos) << f.record_text();
}

// The drain record of an earlier drain (mlx5_3/1 gone) while the node is drained for another
// reason (mlx5_0/1 down): what the follower finds at start after an operator resumed the first
// drain and a second came while it was away.
void leave_a_record_of_an_earlier_drain(RebootFixture& f) {
  const rdma_eventd_slurm::DrainRecord stale{
      "testnode", "rdma-eventd: mlx5_3/1 gone", {{"mlx5_3/1", kGuidA, 1}}};
  std::ofstream(f.state.path + "/drain.json") << rdma_eventd_slurm::drain_record_json(stale);
  f.slurm.drain("rdma-eventd: mlx5_0/1 down");
}

TEST(SlurmReboot, ARecordOfAnEarlierDrainGoesAndAnOperatorsResumeStands) {
  RebootFixture f;
  leave_a_record_of_an_earlier_drain(f);
  rdma_eventd_slurm::SlurmNode node(f.config, false, f.slurm, f.time);
  EXPECT_EQ(node.load_drain_record(), "");
  const HealthReply down = f.health({RebootFixture::adapter_port("mlx5_0", kGuidB, "down")});
  f.reconcile(node, down);
  EXPECT_FALSE(std::filesystem::exists(f.state.path + "/drain.json"));
  f.slurm.state = "IDLE";  // the operator runs the node with mlx5_0/1 down
  f.slurm.reason.clear();
  f.reconcile(node, down);
  EXPECT_EQ(f.slurm.state, "IDLE") << f.slurm.reason;
}

TEST(SlurmReboot, TwoCardsSwappingNamesAreEachJudgedAsThemselves) {
  RebootFixture f;
  rdma_eventd_slurm::SlurmNode node(f.config, false, f.slurm, f.time);
  f.reconcile(node, f.health({RebootFixture::adapter_port("mlx5_0", kGuidA, "down"),
                              RebootFixture::adapter_port("mlx5_1", kGuidB, "healthy")}));
  EXPECT_EQ(f.slurm.reason, "rdma-eventd: mlx5_0/1 down");
  // The names swap; the card that was down is mlx5_1 now, and is not healthy (degraded, which
  // drains nothing): the drain holds, the healthy card named mlx5_0 does not lift it.
  f.reconcile(node, f.health({RebootFixture::adapter_port("mlx5_0", kGuidB, "healthy"),
                              RebootFixture::adapter_port("mlx5_1", kGuidA, "degraded")}));
  EXPECT_EQ(f.slurm.state, "IDLE+DRAIN");
  EXPECT_EQ(f.slurm.reason, "rdma-eventd: mlx5_0/1 down");
  f.reconcile(node, f.health({RebootFixture::adapter_port("mlx5_0", kGuidB, "healthy"),
                              RebootFixture::adapter_port("mlx5_1", kGuidA, "healthy")}));
  EXPECT_EQ(f.slurm.state, "IDLE");
}

TEST(SlurmReboot, APortBehindPlusNMoreIsRememberedAndHoldsTheDrain) {
  RebootFixture f;
  std::vector<HealthReply::Port> ports;
  for (int i = 0; i < 12; ++i) {
    const std::string device = "mlx5_" + std::to_string(i);
    char guid[20];
    std::snprintf(guid, sizeof guid, "0c42:a103:0000:%04x", i);
    ports.push_back(RebootFixture::adapter_port(device.c_str(), guid, "fatal"));
  }
  f.run_before_the_reboot(ports);
  ASSERT_NE(f.slurm.reason.find(" more"), std::string::npos) << f.slurm.reason;
  EXPECT_EQ(f.slurm.reason.find("mlx5_9/1"), std::string::npos) << "behind +N more";
  // After the reboot, the daemon's state lost: every adapter back and healthy but mlx5_9.
  std::vector<HealthReply::Port> back;
  for (HealthReply::Port p : ports) {
    p.health = "healthy";
    if (p.device != "mlx5_9") back.push_back(p);
  }
  rdma_eventd_slurm::SlurmNode after(f.config, false, f.slurm, f.time);
  EXPECT_EQ(after.load_drain_record(), "");
  f.reconcile(after, f.health(back));
  EXPECT_EQ(f.slurm.state, "IDLE+DRAIN");
  EXPECT_EQ(f.slurm.reason, "rdma-eventd: mlx5_9/1 missing");
}

TEST(SlurmReboot, ANodeResumedAtItsRebootIsDrainedAgainForThePortStillMissing) {
  RebootFixture f;
  f.run_before_the_reboot({RebootFixture::adapter_port("mlx5_0", kGuidA, "fatal"),
                           RebootFixture::adapter_port("mlx5_1", kGuidB, "healthy")});
  ASSERT_EQ(f.slurm.reason, "rdma-eventd: mlx5_0/1 fatal");
  // `scontrol reboot nextstate=resume`: Slurm resumes the node at its reboot, before the
  // follower runs again; the dead card does not probe and the daemon's state is lost.
  f.slurm.state = "IDLE";
  f.slurm.reason.clear();
  rdma_eventd_slurm::SlurmNode after(f.config, false, f.slurm, f.time);
  EXPECT_EQ(after.load_drain_record(), "");
  f.reconcile(after, f.health({RebootFixture::adapter_port("mlx5_0", kGuidB, "healthy")}));
  EXPECT_EQ(f.slurm.state, "IDLE+DRAIN");
  EXPECT_EQ(f.slurm.reason, std::string("rdma-eventd: ") + kGuidA + "/1 missing");
}

TEST(SlurmReboot, ANodeResumedAtItsRebootWithEveryPortBackStaysInServiceAndTheRecordGoes) {
  RebootFixture f;
  f.run_before_the_reboot({RebootFixture::adapter_port("mlx5_0", kGuidA, "fatal")});
  f.slurm.state = "IDLE";
  f.slurm.reason.clear();
  rdma_eventd_slurm::SlurmNode after(f.config, false, f.slurm, f.time);
  EXPECT_EQ(after.load_drain_record(), "");
  const int updates = f.slurm.updates;
  f.reconcile(after, f.health({RebootFixture::adapter_port("mlx5_1", kGuidA, "healthy")}));
  EXPECT_EQ(f.slurm.state, "IDLE");
  EXPECT_EQ(f.slurm.updates, updates);
  EXPECT_FALSE(std::filesystem::exists(f.state.path + "/drain.json"));
}

TEST(SlurmReboot, AnOperatorsResumeRemovesTheRecord) {
  RebootFixture f;
  rdma_eventd_slurm::SlurmNode node(f.config, false, f.slurm, f.time);
  f.reconcile(node, f.health({RebootFixture::adapter_port("mlx5_0", kGuidA, "gone")}));
  ASSERT_TRUE(std::filesystem::exists(f.state.path + "/drain.json"));
  f.slurm.state = "IDLE";  // scontrol update state=resume, by hand
  f.slurm.reason.clear();
  f.reconcile(node, f.health({RebootFixture::adapter_port("mlx5_0", kGuidA, "gone")}));
  EXPECT_FALSE(std::filesystem::exists(f.state.path + "/drain.json"));
  EXPECT_EQ(f.slurm.state, "IDLE") << "the operator's resume stands";
}

TEST(SlurmReboot, ADamagedRecordIsNamedAndTheReasonsNamesStandIn) {
  RebootFixture f;
  std::ofstream(f.state.path + "/drain.json") << "{\"version\":1,\"node\":\"testnode\"}";
  f.slurm.drain("rdma-eventd: mlx5_0/1 fatal");
  rdma_eventd_slurm::SlurmNode node(f.config, false, f.slurm, f.time);
  EXPECT_EQ(node.load_drain_record(),
            f.state.path +
                "/drain.json: not a drain record (reason: missing); the ports of a drain of ours "
                "are known by the names in its reason");
  f.reconcile(node, f.health({RebootFixture::adapter_port("mlx5_0", kGuidB, "healthy")}));
  EXPECT_EQ(f.slurm.state, "IDLE") << "by name, mlx5_0/1 is healthy";
}

TEST(SlurmReboot, ARecordThatCannotBeWrittenIsSaidWithTheDrain) {
  RebootFixture f;
  f.config.state_directory = f.state.path + "/file/state";
  std::ofstream(f.state.path + "/file") << "";
  rdma_eventd_slurm::SlurmNode node(f.config, false, f.slurm, f.time);
  const std::string said =
      f.reconcile(node, f.health({RebootFixture::adapter_port("mlx5_0", kGuidA, "fatal")}));
  EXPECT_EQ(said, "drained testnode: rdma-eventd: mlx5_0/1 fatal (cannot make " +
                      f.config.state_directory +
                      ": Not a directory; after a reboot the ports of this drain are known by "
                      "the names in its reason)");
  EXPECT_EQ(f.slurm.state, "IDLE+DRAIN");
}

TEST(SlurmReboot, ARecordOfAnotherReasonIsNotUsed) {
  RebootFixture f;
  leave_a_record_of_an_earlier_drain(f);
  rdma_eventd_slurm::SlurmNode node(f.config, false, f.slurm, f.time);
  EXPECT_EQ(node.load_drain_record(), "");
  f.reconcile(node, f.health({RebootFixture::adapter_port("mlx5_0", kGuidB, "healthy")}));
  EXPECT_EQ(f.slurm.state, "IDLE") << "the reason's own ports, by name, are healthy";
}

TEST(SlurmDrainRecord, ReadsBackWhatItWritesAndNamesWhatIsWrong) {
  const rdma_eventd_slurm::DrainRecord r{
      "n1",
      "rdma-eventd: mlx5_0/1 fatal, 0c42:a103:00f6:5e44/2 missing",
      {{"mlx5_0/1", "0c42:a103:006d:0b3a", 1},
       {"0c42:a103:00f6:5e44/2", "0c42:a103:00f6:5e44", 2}}};
  std::string error;
  EXPECT_EQ(rdma_eventd_slurm::parse_drain_record(rdma_eventd_slurm::drain_record_json(r), &error),
            r)
      << error;
  const std::pair<const char*, const char*> bad[] = {
      {"", "not valid JSON"},
      {"[]", "not a JSON object"},
      {R"({"version":2,"node":"n1","reason":"x","ports":[]})", "version: not 1"},
      {R"({"version":1,"reason":"x","ports":[]})", "node: missing"},
      {R"({"version":1,"node":"n1","reason":"x","ports":{}})", "ports: not an array"},
      {R"({"version":1,"node":"n1","reason":"x","ports":[{"name":"a/1","node_guid":"","port":0}]})",
       "ports[0].port: not a port number (1 to 255)"},
      {R"({"version":1,"node":"n1","reason":"x","ports":[{"name":"","node_guid":"","port":1}]})",
       "ports[0].name: empty"},
      {R"({"version":1,"node":"n1","reason":"x","ports":[7]})", "ports[0]: not an object"},
  };
  for (const auto& [text, why] : bad) {
    error.clear();
    EXPECT_FALSE(rdma_eventd_slurm::parse_drain_record(text, &error)) << text;
    EXPECT_EQ(error, why) << text;
  }
}

TEST(SlurmDrainRecord, ThePortsOfTheRecordAreFoundByIdentityWhateverTheirNames) {
  const Config c;
  HealthReply h;
  h.enabled = true;
  HealthReply::Port other;  // the card that took mlx5_0's name
  other.device = "mlx5_0";
  other.node_guid = "0c42:a103:006d:0b3a";
  other.port = 1;
  other.health = "healthy";
  h.ports = {other};
  const std::string reason = "rdma-eventd: mlx5_0/1 fatal";
  // By name, the drain's port is healthy: resumed. By identity, it is missing.
  EXPECT_EQ(wanted_state(&h, c, reason).kind, Wanted::kHealthy);
  const std::vector<rdma_eventd_slurm::DrainedPort> record = {
      {"mlx5_0/1", "0c42:a103:00f6:5e44", 1}};
  std::vector<rdma_eventd_slurm::DrainedPort> ports;
  EXPECT_EQ(wanted_state(&h, c, reason, &record, &ports),
            (Wanted{Wanted::kDrain, "rdma-eventd: 0c42:a103:00f6:5e44/1 missing"}));
  EXPECT_EQ(ports, (std::vector<rdma_eventd_slurm::DrainedPort>{
                       {"0c42:a103:00f6:5e44/1", "0c42:a103:00f6:5e44", 1}}));
  // Its name free: missing under its own name. Back under another name and healthy: over.
  h.ports[0].device = "mlx5_1";
  EXPECT_EQ(wanted_state(&h, c, reason, &record).reason, "rdma-eventd: mlx5_0/1 missing");
  h.ports[0].node_guid = "0c42:a103:00f6:5e44";
  EXPECT_EQ(wanted_state(&h, c, reason, &record).kind, Wanted::kHealthy);
}

}  // namespace slurm_reboot_test
