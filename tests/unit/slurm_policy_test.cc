// rdma-eventd-slurm's pure rules (slurm/): the configuration, `scontrol show node -o` as Slurm
// 22.05 prints it (captured from Debian 12's slurmctld), the drain reason and the ownership
// rules that decide what the follower and the one-shot mode do to the node.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <set>

#include "config.h"
#include "drain_limit.h"
#include "drain_record.h"
#include "node_state.h"
#include "policy.h"

// A named namespace and using-declarations: the unity build (RDMA_EVENTD_UNITY_TESTS) puts
// this file in one source with others that use namespace rdma_eventd, which has a Config too.
namespace slurm_policy_test {

using rdma_eventd::HealthReply;
using rdma_eventd_slurm::Action;
using rdma_eventd_slurm::Config;
using rdma_eventd_slurm::count_drains;
using rdma_eventd_slurm::decide;
using rdma_eventd_slurm::drain_reason;
using rdma_eventd_slurm::DrainLimit;
using rdma_eventd_slurm::drains_allowed;
using rdma_eventd_slurm::kMaxReasonBytes;
using rdma_eventd_slurm::limit_text;
using rdma_eventd_slurm::NodeParse;
using rdma_eventd_slurm::NodeState;
using rdma_eventd_slurm::parse_config;
using rdma_eventd_slurm::parse_node_state;
using rdma_eventd_slurm::scontrol_args;
using rdma_eventd_slurm::sinfo_args;
using rdma_eventd_slurm::sinfo_program;
using rdma_eventd_slurm::Wanted;
using rdma_eventd_slurm::wanted_state;

HealthReply::Port slurm_port(const char* device, uint32_t n, const char* health,
                             bool counted = true, uint32_t downs = 0) {
  HealthReply::Port p;
  p.device = device;
  p.port = n;
  p.health = health;
  p.reason = health == std::string("degraded") ? "rate_below_expected" : "x";
  p.counted = counted;
  p.downs_in_window = downs;
  return p;
}

HealthReply slurm_health(std::vector<HealthReply::Port> ports) {
  HealthReply h;
  h.enabled = true;
  h.ports = std::move(ports);
  return h;
}

Wanted wanted_for(std::vector<HealthReply::Port> ports, const Config& c) {
  const HealthReply h = slurm_health(std::move(ports));
  return wanted_state(&h, c);
}

NodeState slurm_node(const char* base, std::set<std::string> flags = {}, std::string reason = "") {
  return NodeState{"testnode", base, std::move(flags), std::move(reason)};
}

TEST(SlurmConfig, DefaultsWhenEmptyAndEveryKeyRead) {
  std::string error;
  auto c = parse_config("{}", &error);
  ASSERT_TRUE(c) << error;
  EXPECT_EQ(*c, Config{});
  c = parse_config(R"({"node_name":"n7","reason_prefix":"ib:","drain_on":["fatal","gone"],
      "reconcile_interval_s":5,"scontrol_timeout_s":3,"scontrol":"/opt/slurm/bin/scontrol",
      "sinfo":"/opt/sinfo","socket":"/tmp/s.sock","drain_when_daemon_unreachable":true,
      "drain_limit":"25%","drain_splay_s":0})",
                   &error);
  ASSERT_TRUE(c) << error;
  Config want;
  want.node_name = "n7";
  want.reason_prefix = "ib:";
  want.drain_on = {"fatal", "gone"};
  want.reconcile_interval_s = 5;
  want.scontrol_timeout_s = 3;
  want.scontrol = "/opt/slurm/bin/scontrol";
  want.socket = "/tmp/s.sock";
  want.sinfo = "/opt/sinfo";
  want.drain_when_daemon_unreachable = true;
  want.drain_limit = {DrainLimit::kPercent, 25};
  want.drain_splay_s = 0;
  EXPECT_EQ(*c, want);
}

TEST(SlurmConfig, TheDrainLimitIsACountAShareOrOffAndOnByDefault) {
  EXPECT_EQ(Config{}.drain_limit, (DrainLimit{DrainLimit::kPercent, 10}));
  EXPECT_EQ(Config{}.drain_splay_s, 30u);
  const std::pair<const char*, DrainLimit> cases[] = {
      {R"({"drain_limit":1})", {DrainLimit::kNodes, 1}},
      {R"({"drain_limit":40})", {DrainLimit::kNodes, 40}},
      {R"({"drain_limit":"5%"})", {DrainLimit::kPercent, 5}},
      {R"({"drain_limit":"100%"})", {DrainLimit::kPercent, 100}},
      {R"({"drain_limit":"off"})", {DrainLimit::kOff, 0}},
  };
  for (const auto& [text, limit] : cases) {
    std::string error;
    const auto c = parse_config(text, &error);
    ASSERT_TRUE(c) << text << ": " << error;
    EXPECT_EQ(c->drain_limit, limit) << text;
  }
  // JSON's -0 is the whole number 0, as 0 written back is.
  std::string error;
  const auto zero = parse_config(R"({"drain_splay_s":-0})", &error);
  ASSERT_TRUE(zero) << error;
  EXPECT_EQ(zero->drain_splay_s, 0u);
  EXPECT_FALSE(parse_config(R"({"drain_splay_s":-1})", &error));
  EXPECT_EQ(limit_text({DrainLimit::kPercent, 10}), "10%");
  EXPECT_EQ(limit_text({DrainLimit::kNodes, 1}), "1 node");
  EXPECT_EQ(limit_text({DrainLimit::kNodes, 3}), "3 nodes");
  EXPECT_EQ(limit_text({DrainLimit::kOff, 0}), "off");
}

TEST(SlurmConfig, SinfoIsBesideScontrolUnlessNamed) {
  Config c;
  EXPECT_EQ(sinfo_program(c), "sinfo");
  c.scontrol = "/opt/slurm/bin/scontrol";
  EXPECT_EQ(sinfo_program(c), "/opt/slurm/bin/sinfo");
  c.sinfo = "/usr/local/bin/sinfo-wrapper";
  EXPECT_EQ(sinfo_program(c), "/usr/local/bin/sinfo-wrapper");
}

TEST(SlurmConfig, DrainOnNamesTheLinkQualityReasonsBesideTheVerdicts) {
  std::string error;
  const auto c = parse_config(
      R"({"drain_on":["fatal","bit_errors","link_recoveries","transport_errors"]})", &error);
  ASSERT_TRUE(c) << error;
  EXPECT_EQ(c->drain_on,
            (std::set<std::string>{"fatal", "bit_errors", "link_recoveries", "transport_errors"}));
  // Off by default: the default set is the four verdicts only.
  EXPECT_EQ(Config{}.drain_on, (std::set<std::string>{"fatal", "flapping", "gone", "down"}));
}

constexpr const char* kBadLimit =
    "drain_limit: not a number of nodes (1 or more), a share of the partitions' nodes (\"1%\" "
    "to \"100%\") or \"off\"";

TEST(SlurmConfig, EachMistakeIsOneMessageNamingTheKey) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"reason_prefx":"x:"})", "unknown key 'reason_prefx' (did you mean 'reason_prefix'?)"},
      {R"({"drain_when_unreachable":true})", "unknown key 'drain_when_unreachable'"},
      {R"({"reason_prefix":""})",
       "reason_prefix: empty: the prefix is how the node's drains are told apart from "
       "everyone else's"},
      {R"({"reason_prefix":"   "})",
       "reason_prefix: empty: the prefix is how the node's drains are told apart from "
       "everyone else's"},
      {R"({"reason_prefix":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"})",
       "reason_prefix: 65 bytes, more than 64"},
      {R"({"drain_on":["flaping"]})",
       "drain_on[0]: 'flaping' is not a verdict a node is drained for (degraded, down, "
       "flapping, gone, fatal), a reason of degraded it may name (bit_errors, "
       "link_recoveries, transport_errors, firmware_errors, queue_errors) nor not_judged"},
      // Reasons other than the link-quality faults are not accepted: a port slower than
      // expected is drained with "degraded", and a healthy reason drains nothing.
      {R"({"drain_on":["fatal","rate_below_expected"]})",
       "drain_on[1]: 'rate_below_expected' is not a verdict a node is drained for (degraded, "
       "down, flapping, gone, fatal), a reason of degraded it may name (bit_errors, "
       "link_recoveries, transport_errors, firmware_errors, queue_errors) nor not_judged"},
      {R"({"drain_on":["clean_period_elapsed"]})",
       "drain_on[0]: 'clean_period_elapsed' is not a verdict a node is drained for (degraded, "
       "down, flapping, gone, fatal), a reason of degraded it may name (bit_errors, "
       "link_recoveries, transport_errors, firmware_errors, queue_errors) nor not_judged"},
      {R"({"drain_on":"fatal"})", "drain_on: not an array of verdicts and reasons"},
      {R"({"reconcile_interval_s":0})",
       "reconcile_interval_s: not a whole number of seconds from 1 to 86400"},
      {R"({"scontrol_timeout_s":60})",
       "scontrol_timeout_s: not a whole number of seconds from 1 to 20"},
      {R"({"node_name":"a b"})", "node_name: 'a b' is not the name of one Slurm node"},
      {R"({"node_name":"n[1-4]"})", "node_name: 'n[1-4]' is not the name of one Slurm node"},
      {R"({"drain_limit":0})", kBadLimit},
      {R"({"drain_limit":"0%"})", kBadLimit},
      {R"({"drain_limit":"101%"})", kBadLimit},
      {R"({"drain_limit":"10"})", kBadLimit},
      {R"({"drain_limit":"ten%"})", kBadLimit},
      {R"({"drain_limit":-1})", kBadLimit},
      {R"({"drain_limit":true})", kBadLimit},
      {R"({"drain_limt":5})", "unknown key 'drain_limt' (did you mean 'drain_limit'?)"},
      {R"({"drain_splay_s":601})", "drain_splay_s: not a whole number of seconds from 0 to 600"},
      {R"({"sinfo":""})", "sinfo: empty"},
      {R"({"drain_when_daemon_unreachable":"yes"})",
       "drain_when_daemon_unreachable: not true or false"},
      {"[1]", "not a JSON object"},
      {"{", "not valid JSON"},
  };
  for (const auto& [text, message] : cases) {
    std::string error;
    EXPECT_FALSE(parse_config(text, &error)) << text;
    EXPECT_EQ(error, message) << text;
  }
}

TEST(SlurmDrainLimit, CountsEachNodeOnceAndOnlyDrainsOfOursOfOtherNodes) {
  // sinfo --noheader --Node --format=%N|%E: a node once per partition it is in; "none" when it
  // has no reason.
  const std::string out =
      "n1|rdma-eventd: mlx5_0/1 down\n"
      "n2|none\n"
      "n3|admin: swap the PSU\n"
      "n1|rdma-eventd: mlx5_0/1 down\n"  // n1 in a second partition
      "n4|rdma-eventd: mlx5_1/1 fatal | gone\n"
      "self|rdma-eventd: mlx5_0/1 flapping\n"
      "n5|none  \n";
  std::string error;
  const auto count = count_drains(out, "rdma-eventd:", "self", &error);
  ASSERT_TRUE(count) << error;
  EXPECT_EQ(count->nodes, 6u);
  EXPECT_EQ(count->ours, 2u) << "n1 and n4; not the admin's n3, not this node";
  EXPECT_FALSE(count_drains("", "rdma-eventd:", "self", &error));
  EXPECT_EQ(error, "no node listed");
  EXPECT_FALSE(count_drains("slurm_load_partitions: Unable to contact slurm controller\n",
                            "rdma-eventd:", "self", &error));
  EXPECT_EQ(error,
            "a line that is not NODE|REASON: 'slurm_load_partitions: Unable to contact slurm "
            "controller'");
}

TEST(SlurmDrainLimit, AShareRoundsDownButAllowsOneNodeAndAsksForThePartitions) {
  EXPECT_EQ(drains_allowed({DrainLimit::kPercent, 10}, 1000), 100u);
  EXPECT_EQ(drains_allowed({DrainLimit::kPercent, 10}, 19), 1u);
  EXPECT_EQ(drains_allowed({DrainLimit::kPercent, 10}, 4), 1u) << "at least one node";
  EXPECT_EQ(drains_allowed({DrainLimit::kPercent, 100}, 4), 4u);
  EXPECT_EQ(drains_allowed({DrainLimit::kNodes, 3}, 1000), 3u);
  EXPECT_EQ(drains_allowed({DrainLimit::kOff, 0}, 1000), SIZE_MAX);
  EXPECT_EQ(
      sinfo_args("gpu,all"),
      (std::vector<std::string>{"--noheader", "--Node", "--format=%N|%E", "--partition=gpu,all"}));
  EXPECT_EQ(sinfo_args(""), (std::vector<std::string>{"--noheader", "--Node", "--format=%N|%E"}));
}

TEST(SlurmReason, WorstFirstThenByPort) {
  EXPECT_EQ(drain_reason("rdma-eventd:",
                         {slurm_port("mlx5_0", 1, "flapping", true, 3),
                          slurm_port("mlx5_1", 2, "fatal"), slurm_port("mlx5_1", 1, "fatal"),
                          slurm_port("mlx5_2", 1, "down"), slurm_port("mlx5_3", 1, "gone")}),
            "rdma-eventd: mlx5_1/1 fatal, mlx5_1/2 fatal, mlx5_3/1 gone, mlx5_0/1 flapping "
            "(3 downs), mlx5_2/1 down");
}

TEST(SlurmReason, PortsOfOurReasonAreReadBack) {
  using rdma_eventd_slurm::ports_in_reason;
  EXPECT_EQ(ports_in_reason("rdma-eventd: mlx5_1/1 fatal, mlx5_0/1 flapping (3 downs/1h), "
                            "mlx5_2/1 degraded (errors, x/1) +2 more",
                            "rdma-eventd:"),
            (std::vector<std::string>{"mlx5_1/1", "mlx5_0/1", "mlx5_2/1"}));
  EXPECT_EQ(ports_in_reason("rdma-eventd: mlx5_0/1 missing", "rdma-eventd:"),
            (std::vector<std::string>{"mlx5_0/1"}));
  EXPECT_TRUE(ports_in_reason("rdma-eventd: rdma-eventd unreachable", "rdma-eventd:").empty());
  EXPECT_TRUE(ports_in_reason("admin: mlx5_0/1 cable", "rdma-eventd:").empty());
  EXPECT_TRUE(ports_in_reason("rdma-eventd: /1 x, mlx5_0/ y, mlx5_0/1x z", "rdma-eventd:").empty());
  // A name is never made of pieces around a parenthesis (found by fuzz_slurm_reason).
  EXPECT_TRUE(ports_in_reason("rdma-eventd: mlx5_0/(x)_2/1 flapping", "rdma-eventd:").empty());
}

TEST(SlurmReason, AFlappingPortSaysItsDownsInTheDaemonsWindow) {
  auto flapping = [](uint32_t window_s) {
    HealthReply::Port p = slurm_port("mlx5_0", 1, "flapping", true, 3);
    p.window_s = window_s;
    return drain_reason("rdma-eventd:", {p});
  };
  EXPECT_EQ(flapping(3600), "rdma-eventd: mlx5_0/1 flapping (3 downs/1h)");
  EXPECT_EQ(flapping(7200), "rdma-eventd: mlx5_0/1 flapping (3 downs/2h)");
  EXPECT_EQ(flapping(600), "rdma-eventd: mlx5_0/1 flapping (3 downs/10m)");
  EXPECT_EQ(flapping(90), "rdma-eventd: mlx5_0/1 flapping (3 downs/90s)");
  // A daemon that does not say its window.
  EXPECT_EQ(flapping(0), "rdma-eventd: mlx5_0/1 flapping (3 downs)");
}

TEST(SlurmReason, BoundedWithTheCountOfPortsLeftOut) {
  std::vector<HealthReply::Port> many;
  for (uint32_t i = 0; i < 40; ++i) {
    many.push_back(slurm_port(("mlx5_" + std::to_string(i)).c_str(), 1, "down"));
  }
  const std::string r = drain_reason("rdma-eventd:", many);
  EXPECT_LE(r.size(), kMaxReasonBytes);
  // Devices sort by name: mlx5_0, mlx5_1, mlx5_10, ... and as many as fit come first.
  EXPECT_EQ(r.substr(0, 50), "rdma-eventd: mlx5_0/1 down, mlx5_1/1 down, mlx5_10");
  const size_t shown = static_cast<size_t>(std::count(r.begin(), r.end(), ','));
  EXPECT_TRUE(r.ends_with(" +" + std::to_string(40 - shown - 1) + " more")) << r;
}

TEST(SlurmWanted, NoPortInServiceIsNothingToJudgeNotHealthy) {
  // A host whose only port never came up (or that has no port left) proves nothing: the
  // node is left as it is, as rdma-eventctl health says "unknown".
  const Config c;
  EXPECT_EQ(wanted_for({slurm_port("mlx5_0", 1, "down", false)}, c),
            (Wanted{Wanted::kUnknown, ""}));
  EXPECT_EQ(wanted_for({}, c), (Wanted{Wanted::kUnknown, ""}));
}

TEST(SlurmWanted, OurDrainStandsUntilEveryPortItNamesIsBackAndHealthy) {
  const Config c;
  const HealthReply::Port healthy_other = slurm_port("mlx5_1", 1, "healthy");
  const std::string gone = "rdma-eventd: mlx5_0/1 gone";
  // The adapter removed, then forgotten by the daemon: still drained, and the reason says so.
  HealthReply h = slurm_health({healthy_other});
  EXPECT_EQ(wanted_state(&h, c, gone), (Wanted{Wanted::kDrain, "rdma-eventd: mlx5_0/1 missing"}));
  h = slurm_health({});
  EXPECT_EQ(wanted_state(&h, c, gone), (Wanted{Wanted::kDrain, "rdma-eventd: mlx5_0/1 missing"}));
  // A reboot dropped the daemon's state: the dead port reads never up, and is not in service.
  h = slurm_health({slurm_port("mlx5_0", 1, "down", false), healthy_other});
  EXPECT_EQ(wanted_state(&h, c, "rdma-eventd: mlx5_0/1 down"),
            (Wanted{Wanted::kDrain, "rdma-eventd: mlx5_0/1 down (never up)"}));
  // Back, and healthy: proven.
  h = slurm_health({slurm_port("mlx5_0", 1, "healthy"), healthy_other});
  EXPECT_EQ(wanted_state(&h, c, gone), (Wanted{Wanted::kHealthy, ""}));
  // Another port fails meanwhile: both named, the missing one ranked with gone ones.
  h = slurm_health({slurm_port("mlx5_1", 1, "down")});
  EXPECT_EQ(wanted_state(&h, c, gone),
            (Wanted{Wanted::kDrain, "rdma-eventd: mlx5_0/1 missing, mlx5_1/1 down"}));
  // Health switched off in the daemon: nothing is known, nothing is changed.
  HealthReply off;
  EXPECT_EQ(wanted_state(&off, c, gone), (Wanted{Wanted::kUnknown, ""}));
}

TEST(SlurmWanted, APortKeptInServiceOnPurposeNeverHoldsOurDrain) {
  // mlx5_1/1 degraded (rate_below_expected) is not in drain_on: it holds the node as it is
  // when nothing of ours is there, but once the port our drain was for is healthy again the
  // drain is over; while that port is not healthy itself, the drain stands.
  const Config c;
  const std::string prefix = c.reason_prefix;
  const std::string ours = "rdma-eventd: mlx5_0/1 flapping (3 downs/1h)";
  HealthReply h =
      slurm_health({slurm_port("mlx5_0", 1, "healthy"), slurm_port("mlx5_1", 1, "degraded")});
  EXPECT_EQ(wanted_state(&h, c, ""), (Wanted{Wanted::kHold, ""}));
  EXPECT_EQ(wanted_state(&h, c, ours), (Wanted{Wanted::kNothingDrains, ""}));
  h = slurm_health({slurm_port("mlx5_0", 1, "degraded"), slurm_port("mlx5_1", 1, "degraded")});
  EXPECT_EQ(wanted_state(&h, c, ours), (Wanted{Wanted::kHold, ""}))
      << "the port it was drained for is not healthy yet";
  const NodeState drained = slurm_node("IDLE", {"DRAIN"}, ours);
  EXPECT_EQ(decide({Wanted::kNothingDrains, ""}, drained, prefix),
            (Action{Action::kResume, "",
                    "every port it was drained for is healthy, and no other port's verdict "
                    "drains"}));
  EXPECT_EQ(decide({Wanted::kNothingDrains, ""}, slurm_node("IDLE"), prefix).kind, Action::kNone);
  EXPECT_EQ(
      decide({Wanted::kNothingDrains, ""}, slurm_node("IDLE", {"DRAIN"}, "admin: swap"), prefix)
          .kind,
      Action::kNone)
      << "someone else's drain is theirs";
}

TEST(SlurmWanted, OnlyPortsInServiceWithAVerdictOfTheSetDrain) {
  const Config c;
  // A port never up (not counted) is down by design: no drain.
  EXPECT_EQ(
      wanted_for({slurm_port("mlx5_0", 1, "healthy"), slurm_port("mlx5_0", 2, "down", false)}, c),
      (Wanted{Wanted::kHealthy, ""}));
  EXPECT_EQ(wanted_for({slurm_port("mlx5_0", 1, "flapping", true, 3)}, c),
            (Wanted{Wanted::kDrain, "rdma-eventd: mlx5_0/1 flapping (3 downs)"}));
  // Degraded is not in the default set: hold, neither drain nor resume.
  EXPECT_EQ(wanted_for({slurm_port("mlx5_0", 1, "degraded")}, c), (Wanted{Wanted::kHold, ""}));
  HealthReply off;
  EXPECT_EQ(wanted_state(&off, c), (Wanted{Wanted::kUnknown, ""}));
  EXPECT_EQ(wanted_state(nullptr, c), (Wanted{Wanted::kUnknown, ""}));
  Config strict;
  strict.drain_when_daemon_unreachable = true;
  strict.drain_on = {"degraded"};
  EXPECT_EQ(wanted_state(nullptr, strict),
            (Wanted{Wanted::kDrain, "rdma-eventd: rdma-eventd unreachable"}));
  EXPECT_EQ(wanted_for({slurm_port("mlx5_0", 1, "degraded")}, strict),
            (Wanted{Wanted::kDrain, "rdma-eventd: mlx5_0/1 degraded (rate_below_expected)"}));
}

HealthReply::Port degraded_for(const char* device, uint32_t n, const char* reason) {
  HealthReply::Port p = slurm_port(device, n, "degraded");
  p.reason = reason;
  return p;
}

TEST(SlurmWanted, ALinkQualityReasonInDrainOnDrainsAPortDegradedForIt) {
  Config c;
  c.drain_on.insert("bit_errors");
  EXPECT_EQ(
      wanted_for({degraded_for("mlx5_0", 1, "bit_errors"), slurm_port("mlx5_1", 1, "healthy")}, c),
      (Wanted{Wanted::kDrain, "rdma-eventd: mlx5_0/1 degraded (bit_errors)"}));
  // Degraded for another reason, or for another link-quality fault, holds: neither drained
  // nor resumed.
  EXPECT_EQ(wanted_for({degraded_for("mlx5_0", 1, "link_recoveries")}, c),
            (Wanted{Wanted::kHold, ""}));
  EXPECT_EQ(wanted_for({degraded_for("mlx5_0", 1, "rate_below_expected")}, c),
            (Wanted{Wanted::kHold, ""}));
  // Clean again: healthy, proven.
  HealthReply::Port clean = slurm_port("mlx5_0", 1, "healthy");
  clean.reason = "clean_period_elapsed";
  EXPECT_EQ(wanted_for({clean}, c), (Wanted{Wanted::kHealthy, ""}));
  // A port not in service is not drained for its reason either.
  HealthReply::Port never_up = degraded_for("mlx5_0", 2, "bit_errors");
  never_up.counted = false;
  EXPECT_EQ(wanted_for({never_up, slurm_port("mlx5_0", 1, "healthy")}, c),
            (Wanted{Wanted::kHealthy, ""}));
}

TEST(SlurmWanted, TheLinkQualityReasonsDrainNothingByDefault) {
  const Config c;
  for (const char* reason :
       {"bit_errors", "link_recoveries", "transport_errors", "firmware_errors", "queue_errors"}) {
    EXPECT_EQ(wanted_for({degraded_for("mlx5_0", 1, reason)}, c), (Wanted{Wanted::kHold, ""}))
        << reason;
  }
}

HealthReply::Port not_judged_for(const char* device, uint32_t n, const char* reason) {
  HealthReply::Port p = slurm_port(device, n, "healthy");
  p.link_quality = "unknown";
  p.link_quality_reason = reason;
  return p;
}

TEST(SlurmWanted, ALinkNotJudgedDrainsOnlyWhereDrainOnNamesItAndForAReasonThatLasts) {
  Config c;
  // Off by default: a healthy port whose counters hang is healthy to the default follower.
  EXPECT_EQ(wanted_for({not_judged_for("mlx5_0", 1, "read_hung")}, c),
            (Wanted{Wanted::kHealthy, ""}));
  c.drain_on.insert("not_judged");
  EXPECT_EQ(wanted_for({not_judged_for("mlx5_0", 1, "read_hung"),
                        not_judged_for("mlx5_1", 1, "pegged"), slurm_port("mlx5_2", 1, "healthy")},
                       c),
            (Wanted{Wanted::kDrain,
                    "rdma-eventd: mlx5_0/1 not_judged (read_hung), mlx5_1/1 not_judged (pegged)"}));
  // A first read (or none yet) is judged at the next one; a port that is down says so itself;
  // a port without such counters by its nature (rxe, a RoCE netdev without FEC statistics)
  // would drain every node of its fabric for ever.
  for (const char* passing :
       {"baseline", "not_read", "link_down", "no_error_counters", "no_fec_statistics"}) {
    EXPECT_EQ(wanted_for({not_judged_for("mlx5_0", 1, passing)}, c), (Wanted{Wanted::kHealthy, ""}))
        << passing;
  }
  // Judged clean: nothing to drain.
  HealthReply::Port clean = slurm_port("mlx5_0", 1, "healthy");
  clean.link_quality = "clean";
  EXPECT_EQ(wanted_for({clean}, c), (Wanted{Wanted::kHealthy, ""}));
}

TEST(SlurmWanted, AReasonDrainsOnlyADegradedPortAndRanksWithDegraded) {
  Config c;
  c.drain_on = {"fatal", "flapping", "link_recoveries", "transport_errors", "firmware_errors"};
  // Worst first: the degraded ports after the fatal and flapping ones, then by port; each
  // says its reason.
  EXPECT_EQ(
      wanted_for(
          {degraded_for("mlx5_0", 1, "transport_errors"),
           degraded_for("mlx5_0", 2, "link_recoveries"), slurm_port("mlx5_1", 1, "fatal"),
           slurm_port("mlx5_2", 1, "flapping", true, 3),
           degraded_for("mlx5_3", 1, "rate_below_last_healthy"),
           degraded_for("mlx5_4", 1, "firmware_errors"), degraded_for("mlx5_5", 1, "queue_errors")},
          c),
      (Wanted{Wanted::kDrain,
              "rdma-eventd: mlx5_1/1 fatal, mlx5_2/1 flapping (3 downs), mlx5_0/1 degraded "
              "(transport_errors), mlx5_0/2 degraded (link_recoveries), mlx5_4/1 degraded "
              "(firmware_errors)"}));
  // A reason is only ever a reason of degraded: a down port whose reason reads like one (a
  // daemon from elsewhere) is judged by its verdict, which drain_on does not name here.
  HealthReply::Port down = slurm_port("mlx5_0", 1, "down");
  down.reason = "link_recoveries";
  EXPECT_EQ(wanted_for({down}, c), (Wanted{Wanted::kHold, ""}));
}

const std::string kSlurmPrefix = "rdma-eventd:";
const Wanted kSlurmDrainFlap{Wanted::kDrain, "rdma-eventd: mlx5_0/1 flapping (3 downs)"};
const Wanted kSlurmHealthy{Wanted::kHealthy, ""};

TEST(SlurmDecide, DrainsAFreeNodeAndResumesOnlyItsOwnDrain) {
  EXPECT_EQ(decide(kSlurmDrainFlap, slurm_node("IDLE"), kSlurmPrefix).kind, Action::kDrain);
  EXPECT_EQ(decide(kSlurmDrainFlap, slurm_node("ALLOCATED"), kSlurmPrefix).reason,
            kSlurmDrainFlap.reason);
  EXPECT_EQ(decide(kSlurmDrainFlap, slurm_node("IDLE", {"NOT_RESPONDING"}), kSlurmPrefix).kind,
            Action::kDrain);
  EXPECT_EQ(
      decide(kSlurmHealthy, slurm_node("IDLE", {"DRAIN"}, kSlurmDrainFlap.reason), kSlurmPrefix)
          .kind,
      Action::kResume);
  EXPECT_EQ(decide(kSlurmHealthy, slurm_node("IDLE"), kSlurmPrefix).kind, Action::kNone);
}

TEST(SlurmDecide, NeverTouchesSomeoneElsesHoldNorAddsOursOnTop) {
  const NodeState theirs[] = {
      slurm_node("IDLE", {"DRAIN"}, "admin: cable swap"),
      slurm_node("IDLE", {"DRAIN"}, "NHC: check_hw_ib failed"),
      slurm_node("DOWN", {}, "Not responding"),
      slurm_node("DOWN", {"DRAIN"}, "rdma-eventd: but set down by someone"),
      // A maintenance reservation as scontrol 22.05 prints it (State=IDLE+MAINTENANCE+RESERVED),
      // and in sinfo's short form.
      slurm_node("IDLE", {"MAINTENANCE", "RESERVED"}),
      slurm_node("IDLE", {"MAINT"}),
      slurm_node("FUTURE"),
      slurm_node("IDLE", {}, "a reason left by someone"),
      // The prolog's drains have a prefix of their own: an operator resumes them.
      slurm_node("IDLE", {"DRAIN"},
                 "rdma-eventd-prolog: mlx5_0/1 not active after 30s before job 7"),
  };
  for (const NodeState& n : theirs) {
    EXPECT_EQ(decide(kSlurmDrainFlap, n, kSlurmPrefix).kind, Action::kNone) << n.reason;
    EXPECT_EQ(decide(kSlurmHealthy, n, kSlurmPrefix).kind, Action::kNone) << n.reason;
  }
  EXPECT_EQ(decide(kSlurmDrainFlap, theirs[0], kSlurmPrefix).why,
            "not drained: the node is held by someone else (state IDLE, reason 'admin: cable "
            "swap')");
}

TEST(SlurmDecide, AReservationThatIsNotMaintenanceDoesNotHoldTheNode) {
  // A reservation holds the node for some users' jobs; the hardware is still broken for them.
  EXPECT_EQ(decide(kSlurmDrainFlap, slurm_node("IDLE", {"RESERVED"}), kSlurmPrefix).kind,
            Action::kDrain);
  EXPECT_EQ(decide(kSlurmDrainFlap, slurm_node("ALLOCATED", {"RESERVED"}), kSlurmPrefix).kind,
            Action::kDrain);
}

TEST(SlurmDecide, RewritesItsReasonOnlyWhenThePortsChange) {
  const NodeState ours = slurm_node("IDLE", {"DRAIN"}, kSlurmDrainFlap.reason);
  EXPECT_EQ(decide(kSlurmDrainFlap, ours, kSlurmPrefix).kind, Action::kNone);
  // A fourth down changes the count, not the set of ports: no rewrite for every down.
  EXPECT_EQ(
      decide({Wanted::kDrain, "rdma-eventd: mlx5_0/1 flapping (4 downs)"}, ours, kSlurmPrefix).kind,
      Action::kNone);
  const Wanted both{Wanted::kDrain, "rdma-eventd: mlx5_1/1 fatal, mlx5_0/1 flapping (3 downs)"};
  EXPECT_EQ(decide(both, ours, kSlurmPrefix),
            (Action{Action::kUpdateReason, both.reason, "the set of bad ports changed"}));
  EXPECT_EQ(scontrol_args(decide(both, ours, kSlurmPrefix), "testnode"),
            (std::vector<std::string>{"update", "nodename=testnode", "state=drain",
                                      "reason=" + both.reason}));
}

TEST(SlurmDecide, ALinkQualityDrainIsOursToResume) {
  const std::string reason = "rdma-eventd: mlx5_0/1 degraded (bit_errors)";
  EXPECT_EQ(decide({Wanted::kDrain, reason}, slurm_node("IDLE"), kSlurmPrefix),
            (Action{Action::kDrain, reason, "a port in service has a verdict that drains"}));
  const NodeState ours = slurm_node("IDLE", {"DRAIN"}, reason);
  EXPECT_EQ(decide(kSlurmHealthy, ours, kSlurmPrefix).kind, Action::kResume);
  // Another link fault of the same port is the same port and verdict: not rewritten.
  EXPECT_EQ(decide({Wanted::kDrain, "rdma-eventd: mlx5_0/1 degraded (link_recoveries)"}, ours,
                   kSlurmPrefix)
                .kind,
            Action::kNone);
}

TEST(SlurmDecide, UnknownOrHeldVerdictsChangeNothing) {
  const NodeState ours = slurm_node("IDLE", {"DRAIN"}, kSlurmDrainFlap.reason);
  EXPECT_EQ(decide({Wanted::kUnknown, ""}, ours, kSlurmPrefix).kind, Action::kNone);
  EXPECT_EQ(decide({Wanted::kHold, ""}, ours, kSlurmPrefix).kind, Action::kNone);
  EXPECT_EQ(decide({Wanted::kUnknown, ""}, slurm_node("IDLE"), kSlurmPrefix).kind, Action::kNone);
  EXPECT_EQ(scontrol_args(decide(kSlurmHealthy, ours, kSlurmPrefix), "testnode"),
            (std::vector<std::string>{"update", "nodename=testnode", "state=resume"}));
}

}  // namespace slurm_policy_test
