// The link quality state document: what is written is read back whole, and every document that
// cannot be trusted (another boot, saved "later" than now, corrupt, larger than the daemon
// writes) is rejected with its reason.
#include "core/link_quality_state.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <variant>
#include <vector>

#include "core/clock.h"
#include "core/link_quality.h"
#include "state_file_fixture.h"

namespace rdma_eventd::daemon {
// Named, not anonymous: the unity build puts several test files in one translation unit.
namespace link_quality_state_test {

constexpr std::string_view kThisBoot = "6f2f1b0c-8d5e-4a57-9a58-2f4c7f0e1d33";
constexpr int64_t kS = kMicrosPerSecond;
const Instant kSavedAt{.wall_us = 1795342530000000, .mono_us = 5000 * kS};
const Instant kNow{.wall_us = 1795342531000000, .mono_us = 5001 * kS};

Instant mono(int64_t seconds) {
  return {.wall_us = 1795342530000000 - (5000 - seconds) * kS, .mono_us = seconds * kS};
}

// A state with every field away from its default.
std::vector<DeviceLinkQualityState> saved_state() {
  LinkQualityState bad;
  bad.sampled = true;
  bad.since = mono(4200);
  bad.first_sample = mono(4000);
  bad.last_sample = mono(4900);
  bad.last_rate = {4, LinkSpeed::kHdr};
  bad.ber_window_s = 7500;
  bad.downs_seen_pending = 1;
  bad.faults = {{LinkFault::kBitErrors, {"symbol_error"}},
                {LinkFault::kTransportErrors, {"hw_counters/out_of_sequence", "hw_counters/x"}}};
  bad.counters = {
      {"hw_counters/out_of_sequence", 1ull << 40, true, false, 0, 4300 * kS, {{4300 * kS, 9}}},
      {"link_error_recovery", 255, true, true, 1795342529000000, 4100 * kS, {}},
      {"symbol_error", 12, true, false, 0, 4200 * kS, {{4100 * kS, 2}, {4200 * kS, 10}}}};
  LinkQualityState clean;
  clean.sampled = true;
  clean.since = mono(4000);
  clean.first_sample = mono(4000);
  clean.last_sample = mono(4000);
  clean.counters = {{"link_downed", 3, false, false, 0, 4000 * kS, {}}};
  return {{"mlx5_0", "0c42:a103:00f6:5e44", {{1, bad}, {2, clean}}},
          {"mlx5_1", "0c42:a103:006d:0b3a", {}}};
}

// The saved state as the tests write it on this boot at kSavedAt and read it at kNow.
const StateFile<PortLinkQualityState> kFile{kLinkQualityStateFile, kThisBoot, kSavedAt, kNow,
                                            saved_state()};

TEST(LinkQualityStateFile, WhatIsWrittenIsReadBackWhole) {
  kFile.expect_sample_read_back_whole();
}

TEST(LinkQualityStateFile, APortsStateSurvivesTheRoundTrip) {
  LinkQualityConfig config;
  PortLinkQuality port;
  std::vector<LinkQualityChange> out;
  const LinkRate ndr{4, LinkSpeed::kNdr};
  port.sample(config, {ndr, true, 0, {{"symbol_error", 16, 0}}}, mono(4000), out);
  port.sample(config, {ndr, true, 0, {{"symbol_error", 16, 5}}}, mono(4060), out);
  ASSERT_TRUE(port.bad());
  const std::string text = kLinkQualityStateFile.to_json(
      {{"mlx5_0", "0c42:a103:00f6:5e44", {{1, port.export_state()}}}}, kThisBoot, kSavedAt);
  const auto r = kLinkQualityStateFile.from_json(text, kThisBoot, kNow);
  ASSERT_TRUE(std::holds_alternative<std::vector<DeviceLinkQualityState>>(r)) << why_rejected(r);
  PortLinkQuality restored;
  restored.restore(std::get<std::vector<DeviceLinkQualityState>>(r).at(0).ports.at(0).state);
  EXPECT_EQ(restored.export_state(), port.export_state());
  LinkQualityView before = port.view();
  before.unknown = "not_read";  // until its first read across the restart
  EXPECT_EQ(restored.view(), before);
}

TEST(LinkQualityStateFile, ADocumentFromAnotherBootIsRejected) {
  kFile.expect_another_boots_rejected();
}

TEST(LinkQualityStateFile, ADocumentSavedLaterThanNowOrOfANewerVersionIsRejected) {
  const std::string text = kFile.written();
  EXPECT_EQ(why_rejected(kLinkQualityStateFile.from_json(text, kThisBoot, mono(4999))),
            "corrupt: saved_at.monotonic_us: later than now on this boot's monotonic clock");
  EXPECT_EQ(kFile.rejection_of(R"({"version": 2, "whatever": "a newer daemon writes"})"),
            "written by a newer rdma-eventd (state version 2; this one reads version 1)");
}

TEST(LinkQualityStateFile, ACorruptDocumentIsRejectedNamingWhatIsWrong) {
  const std::string text = kFile.written();
  EXPECT_EQ(kFile.rejection_of(text.substr(0, text.size() / 2)).substr(0, 31),
            "corrupt: invalid JSON: parse er");
  EXPECT_EQ(kFile.rejection_of_edit([](auto& d) { d["devices"][0]["ports"][0].erase("faults"); }),
            "corrupt: devices[0].ports[0].faults: missing");
  EXPECT_EQ(kFile.rejection_of_edit(
                [](auto& d) { d["devices"][0]["ports"][0]["faults"][0]["fault"] = "noise"; }),
            "corrupt: devices[0].ports[0].faults[0].fault: unknown name 'noise'");
  EXPECT_EQ(kFile.rejection_of_edit([](auto& d) {
    d["devices"][0]["ports"][0]["counters"][2]["value"] = 65536;  // 16 bits
  }),
            "corrupt: devices[0].ports[0].counters[2].value: more than 65535");
  EXPECT_EQ(kFile.rejection_of_edit(
                [](auto& d) { d["devices"][0]["ports"][0]["counters"][0]["value"] = -1; }),
            "corrupt: devices[0].ports[0].counters[0].value: expected an integer, not negative");
  EXPECT_EQ(kFile.rejection_of_edit([](auto& d) {
    d["devices"][0]["ports"][0]["counters"][2]["name"] = "link_downed";
  }),
            "corrupt: devices[0].ports[0].counters[2].name: counters listed twice or out of order");
  EXPECT_EQ(kFile.rejection_of_edit([](auto& d) {
    d["devices"][0]["ports"][0]["counters"][2]["steps"][1][0] = 4100 * kS;
  }),
            "corrupt: devices[0].ports[0].counters[2].steps[1]: not a time in order before the "
            "document was saved");
  EXPECT_EQ(kFile.rejection_of_edit([](auto& d) {
    d["devices"][0]["ports"][0]["counters"][2]["steps"][0] = {4100 * kS};
  }),
            "corrupt: devices[0].ports[0].counters[2].steps[0]: expected [monotonic_us, growth]");
  EXPECT_EQ(kFile.rejection_of_edit([](auto& d) {
    d["devices"][0]["ports"][0]["counters"][0]["last_growth_monotonic_us"] = 6000 * kS;
  }),
            "corrupt: devices[0].ports[0].counters[0].last_growth_monotonic_us: not a time before "
            "the document was saved");
  EXPECT_EQ(kFile.rejection_of_edit([](auto& d) { d["devices"][1]["device"] = "mlx5_0"; }),
            "corrupt: devices[1].device: listed twice");
}

TEST(LinkQualityStateFile, ADocumentLargerThanTheDaemonWouldWriteIsRejected) {
  EXPECT_EQ(kFile.rejection_of_edit([](auto& d) {
    auto& steps = d["devices"][0]["ports"][0]["counters"][2]["steps"];
    steps = nlohmann::json::array();
    for (int64_t i = 0; i <= static_cast<int64_t>(kMaxStateSteps); ++i)
      steps.push_back({i * kS, 1});
  }),
            "corrupt: devices[0].ports[0].counters[2].steps: more than 256 entries");
  EXPECT_EQ(kFile.rejection_of_edit([](auto& d) {
    auto& counters = d["devices"][0]["ports"][1]["counters"];
    for (size_t i = 0; i < kMaxStateCounters; ++i)
      counters.push_back(counters[0]);
  }),
            "corrupt: devices[0].ports[1].counters: more than 64 entries");
  EXPECT_EQ(kFile.rejection_of_edit([](auto& d) {
    d["devices"][0]["ports"][1]["counters"][0]["name"] = std::string(256, 'x');
  }),
            "corrupt: devices[0].ports[1].counters[0].name: not a counter's name (1 to 255 "
            "characters)");
  EXPECT_EQ(kFile.rejection_of_edit([](auto& d) {
    auto& devices = d["devices"];
    for (size_t i = 0; i < kMaxStateDevices; ++i)
      devices.push_back({{"device", "d" + std::to_string(i)}});
  }),
            "corrupt: devices: more than 1024 entries");
}

}  // namespace link_quality_state_test
}  // namespace rdma_eventd::daemon
