// The health state document: what is written is read back whole, and every document that
// cannot be trusted is rejected with its reason.
#include "core/health_state_file.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/clock.h"
#include "core/port_health.h"
#include "state_file_fixture.h"

namespace rdma_eventd::daemon {
namespace {

constexpr std::string_view kBoot = "6f2f1b0c-8d5e-4a57-9a58-2f4c7f0e1d33";
const Instant kSaved{.wall_us = 1795342530000000, .mono_us = 5000 * kMicrosPerSecond};
const Instant kLater{.wall_us = 1795342531000000, .mono_us = 5001 * kMicrosPerSecond};

// A state with every field away from its default.
std::vector<DeviceHealthState> sample() {
  PortHealthState flapping;
  flapping.port = 1;
  flapping.health = PortHealth::kFlapping;
  flapping.reason = HealthReason::kFlapsInWindow;
  flapping.since = {.wall_us = 1795342529000001, .mono_us = 4000 * kMicrosPerSecond};
  flapping.ever_up = true;
  flapping.link_up = true;
  flapping.rate = {1, LinkSpeed::kHdr};
  flapping.last_healthy = {4, LinkSpeed::kHdr};
  flapping.downs_mono_us = {3000 * kMicrosPerSecond, 3500 * kMicrosPerSecond,
                            4000 * kMicrosPerSecond};
  flapping.flapping = true;
  flapping.quiet_since_mono_us = 4100 * kMicrosPerSecond;
  flapping.errors[0] = {
      {4200 * kMicrosPerSecond, 4300 * kMicrosPerSecond}, true, 4300 * kMicrosPerSecond};

  PortHealthState gone;
  gone.port = 2;
  gone.health = PortHealth::kGone;
  gone.reason = HealthReason::kDeviceMissing;
  gone.gone = true;
  gone.fatal = true;
  gone.gone_reason = HealthReason::kDeviceMissing;
  gone.gone_since_mono_us = 4900 * kMicrosPerSecond;
  gone.errors[1] = {{4400 * kMicrosPerSecond}, false, 4400 * kMicrosPerSecond};

  PortHealthState never_up;  // defaults: down, never_up
  never_up.port = 1;
  return {{"mlx5_0", "0c42:a103:00f6:5e44", {flapping, gone}},
          {"mlx5_1", "0c42:a103:006d:0b3a", {never_up}}};
}

// The sample as the tests write it on this boot at kSaved and read it at kLater.
const StateFile<PortHealthState> kFile{kHealthStateFile, kBoot, kSaved, kLater, sample()};

TEST(HealthStateFile, WhatIsWrittenIsReadBackWhole) {
  kFile.expect_sample_read_back_whole();
}

TEST(HealthStateFile, AModelsStateSurvivesTheRoundTrip) {
  PortHealthModel model{HealthConfig{}};
  PortHealthModel::Transitions t;
  PortInfo p;
  p.port = 1;
  p.state = PortState::kActive;
  p.lanes = 4;
  p.speed = LinkSpeed::kNdr;
  model.observe_port("mlx5_0", "0c42:a103:00f6:5e44", p, kSaved, t);
  const std::string text = kHealthStateFile.to_json(model.export_state(), kBoot, kSaved);
  const auto r = kHealthStateFile.from_json(text, kBoot, kLater);
  ASSERT_TRUE(std::holds_alternative<std::vector<DeviceHealthState>>(r)) << why_rejected(r);
  PortHealthModel restored{HealthConfig{}};
  restored.restore(std::get<std::vector<DeviceHealthState>>(r), kLater);
  EXPECT_EQ(restored.verdicts(kLater), model.verdicts(kLater));
}

TEST(HealthStateFile, ADocumentFromAnotherBootIsRejected) {
  kFile.expect_another_boots_rejected();
}

TEST(HealthStateFile, ADocumentOfANewerVersionIsRejectedBeforeAnythingElseIsRead) {
  const std::string text = R"({"version": 2, "whatever": "a newer daemon writes"})";
  EXPECT_EQ(kFile.rejection_of(text),
            "written by a newer rdma-eventd (state version 2; this one reads version 1)");
  EXPECT_EQ(kFile.rejection_of(R"({"version": 0})"), "corrupt: version: unknown version");
}

TEST(HealthStateFile, ACorruptDocumentIsRejectedNamingWhatIsWrong) {
  const std::string text = kFile.written();
  EXPECT_EQ(kFile.rejection_of(text.substr(0, text.size() / 2)).substr(0, 31),
            "corrupt: invalid JSON: parse er");
  EXPECT_EQ(kFile.rejection_of("[]"), "corrupt: expected an object");
  EXPECT_EQ(kFile.rejection_of_edit([](auto& d) { d["devices"][0]["ports"][0].erase("flapping"); }),
            "corrupt: devices[0].ports[0].flapping: missing");
  EXPECT_EQ(
      kFile.rejection_of_edit([](auto& d) { d["devices"][1]["ports"][0]["health"] = "sick"; }),
      "corrupt: devices[1].ports[0].health: unknown name 'sick'");
  EXPECT_EQ(kFile.rejection_of_edit([](auto& d) { d["devices"][0]["ports"][0]["link_up"] = 1; }),
            "corrupt: devices[0].ports[0].link_up: expected a boolean");
  EXPECT_EQ(kFile.rejection_of_edit([](auto& d) { d["devices"][0]["ports"][1]["port"] = 1; }),
            "corrupt: devices[0].ports[1].port: ports not in increasing order");
  EXPECT_EQ(kFile.rejection_of_edit([](auto& d) { d["devices"][1]["device"] = "mlx5_0"; }),
            "corrupt: devices[1].device: listed twice");
  EXPECT_EQ(
      kFile.rejection_of_edit([](auto& d) { d["devices"][0]["ports"][0]["rate"]["width"] = "3x"; }),
      "corrupt: devices[0].ports[0].rate.width: unknown name '3x'");
}

TEST(HealthStateFile, TimesMustComeBeforeTheDocumentWasSavedAndItBeforeNow) {
  EXPECT_EQ(kFile.rejection_of_edit([](auto& d) {
    d["devices"][0]["ports"][0]["downs_monotonic_us"][2] = 6000 * kMicrosPerSecond;
  }),
            "corrupt: devices[0].ports[0].downs_monotonic_us[2]: not a time in order before the "
            "document was saved");
  EXPECT_EQ(kFile.rejection_of_edit([](auto& d) {
    d["devices"][0]["ports"][0]["downs_monotonic_us"][0] = 3600 * kMicrosPerSecond;
  }),
            "corrupt: devices[0].ports[0].downs_monotonic_us[1]: not a time in order before the "
            "document was saved");
  EXPECT_EQ(kFile.rejection_of_edit(
                [](auto& d) { d["devices"][0]["ports"][1]["gone_since_monotonic_us"] = -1; }),
            "corrupt: devices[0].ports[1].gone_since_monotonic_us: not a time before the document "
            "was saved");
  // Saved "after" now on the same boot id: the clock cannot have gone back.
  const std::string text = kFile.written();
  EXPECT_EQ(why_rejected(kHealthStateFile.from_json(
                text, kBoot, {.wall_us = 0, .mono_us = 4999 * kMicrosPerSecond})),
            "corrupt: saved_at.monotonic_us: later than now on this boot's monotonic clock");
}

TEST(HealthStateFile, ADocumentLargerThanTheDaemonWouldWriteIsRejected) {
  EXPECT_EQ(kFile.rejection_of_edit([](auto& d) {
    for (int i = 0; i < 101; ++i)
      d["devices"][0]["ports"][0]["downs_monotonic_us"].push_back(4000 * kMicrosPerSecond);
  }),
            "corrupt: devices[0].ports[0].downs_monotonic_us: more than 100 entries");
  EXPECT_EQ(kFile.rejection_of_edit([](auto& d) { d["devices"][0]["ports"][0]["port"] = 0; }),
            "corrupt: devices[0].ports[0].port: not a port number (1 to 255)");
}

}  // namespace
}  // namespace rdma_eventd::daemon
