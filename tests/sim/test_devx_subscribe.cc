// mlx5dv_devx_subscribe_devx_event(_fd) without an object: the kernel's checks (devx.c) in its
// order: a DEVX context, the list's size in bytes, at most 16 events, each allowed by the firmware
// (the user_unaffiliated_events mask, or PORT_CHANGE alone on legacy firmware).
#include <cerrno>

#include "devx_test.h"

namespace simtest {
namespace {

// The channel's subscriptions as `rdma-sim stats` lists them: event numbers.
std::vector<int> subscribed(const SimFabric& sim, uint64_t channel_id) {
  std::vector<int> events;
  const json stats = sim.stats();
  for (const json& c : stats["channels"])
    if (c["id"] == channel_id)
      for (const json& s : c["subscriptions"])
        events.push_back(s["event"]);
  return events;
}

TEST(DevxSubscribe, TheFirmwareMaskDecides) {
  Sim sim(devx_variants());
  DevxShell sh(sim);
  const std::string full = sh("channel " + sh.open("mlx5_0"))["ch"];
  EXPECT_EQ(sh("subscribe " + full + " 1 0x16,0x17,0x22,0x09")["ret"], 0);
  const std::string partial = sh("channel " + sh.open("mlx5_1"))["ch"];
  json r = sh("subscribe " + partial + " 2 0x16");  // no module events on mlx5_1
  EXPECT_EQ(r["ret"], EINVAL);
  EXPECT_EQ(r["errno_name"], "EINVAL");
  EXPECT_EQ(r["ret_is_errno"], true);
  // One event refused refuses the whole call: nothing is subscribed.
  EXPECT_EQ(sh("subscribe " + partial + " 2 0x09,0x16,0x17")["ret"], EINVAL);
  EXPECT_EQ(subscribed(sim, 2), std::vector<int>{});
  EXPECT_EQ(sh("subscribe " + partial + " 2 0x09,0x17")["ret"], 0);
  EXPECT_EQ(subscribed(sim, 1), (std::vector<int>{0x16, 0x17, 0x22, 0x09}));
  EXPECT_EQ(subscribed(sim, 2), (std::vector<int>{0x09, 0x17}));
}

TEST(DevxSubscribe, LegacyFirmwareAllowsPortChangeOnly) {
  Sim sim(devx_variants());
  DevxShell sh(sim);
  const std::string ch = sh("channel " + sh.open("mlx5_2"))["ch"];
  for (const std::string event : {"0x16", "0x17", "0x22", "0x08"})
    EXPECT_EQ(sh("subscribe " + ch + " 1 " + event)["ret"], EINVAL) << event;
  EXPECT_EQ(sh("subscribe " + ch + " 1 0x09")["ret"], 0);
}

TEST(DevxSubscribe, TheListIsSixteenEventsAtMostGivenInBytes) {
  Sim sim(devx_variants());
  DevxShell sh(sim);
  const std::string ch = sh("channel " + sh.open("mlx5_0"))["ch"];
  std::string sixteen = "0x09";
  for (int i = 1; i < 16; ++i)
    sixteen += i % 2 ? ",0x16" : ",0x17";
  EXPECT_EQ(sh("subscribe " + ch + " 1 " + sixteen)["ret"], 0);
  EXPECT_EQ(sh("subscribe " + ch + " 1 " + sixteen + ",0x22")["ret"], EINVAL);  // 17
  // events_sz is a size in bytes: an odd size or none is refused; 4 bytes are two events.
  EXPECT_EQ(sh("subscribe " + ch + " 2 0x16,0x17 3")["ret"], EINVAL);
  EXPECT_EQ(sh("subscribe " + ch + " 2 0x16 0")["ret"], EINVAL);
  EXPECT_EQ(sh("subscribe " + ch + " 2 0x16,0x17 2")["ret"], 0);  // only the first
  // Numbers past 255 are refused even where the mask has no say.
  EXPECT_EQ(sh("subscribe " + ch + " 2 256")["ret"], EINVAL);
  EXPECT_EQ(sh("subscribe " + ch + " 2 0x109")["ret"], EINVAL);
  EXPECT_EQ(subscribed(sim, 1).size(), 17u);
}

TEST(DevxSubscribe, ADevxContextIsRequired) {
  // mlx5_4 has a single user UCTX: the second context is a plain one. Its channel can be made
  // (the kernel does not ask for a DEVX context there) but not subscribed.
  Sim sim(devx_variants());
  DevxShell sh(sim);
  sh.open("mlx5_4");
  const std::string plain = sh.open("mlx5_4", "verbs");
  const std::string ch = sh("channel " + plain)["ch"];
  EXPECT_EQ(sh("subscribe " + ch + " 1 0x09")["ret"], EINVAL);
  EXPECT_EQ(sh("subscribe_fd " + ch + " 0x09")["ret"], EINVAL);
}

TEST(DevxSubscribe, AnEventfdSubscriptionIsSignaledInsteadOfQueued) {
  Sim sim(devx_variants());
  DevxShell sh(sim);
  const std::string ch = sh("channel " + sh.open("mlx5_0"))["ch"];
  EXPECT_EQ(sh("subscribe_fd " + ch + " 0x16")["ret"], 0);
  EXPECT_EQ(sh("subscribe_fd " + ch + " 0x16 pipe")["ret"], EINVAL);  // not an eventfd
  EXPECT_EQ(sh("subscribe_fd " + ch + " 0x16 none")["ret"], EBADF);
  EXPECT_EQ(sh("subscribe_fd " + ch + " 0x30")["ret"], EINVAL);  // not in the mask
  EXPECT_EQ(sh("eventfd " + ch + " 0")["errno"], EAGAIN);
  const json r = sim.ctl_json({"module", "unplug", "mlx5_0/1"});
  EXPECT_EQ(r["devx_events"][0]["signaled"], 1);
  EXPECT_EQ(r["devx_events"][0]["queued"], 0);
  ctl_ok(sim, {"module", "plug", "mlx5_0/1"});
  EXPECT_EQ(sh("eventfd " + ch + " 0")["value"], 2);
  // Nothing was queued on the channel itself.
  expect_nothing_to_read(sh, ch);
}

}  // namespace
}  // namespace simtest
