// Loss and the end of a channel, as the kernel's devx.c has them: an allocation failure drops
// one event and the next read says EOVERFLOW once, ahead of the events still queued; there is no
// queue cap; a hot-unplug (or the context closing) destroys the channel: pending events are
// freed, readers get EAGAIN (EIO when blocking) and poll reports IN|RDNORM|RDHUP.
#include <infiniband/verbs.h>

#include <cerrno>

#include "devx_test.h"

namespace simtest {
namespace {

json module_status(DevxShell& sh, const std::string& ch) {
  const json r = sh("get " + ch + " 72");
  if (r["ret"] != 72) return r;
  return std::stoi(r["data"].get<std::string>().substr(6, 2), nullptr, 16);
}

// Every test: devx_shell on the devx-variants fabric.
class DevxLoss : public ::testing::Test {
 protected:
  Sim sim_{devx_variants()};
  DevxShell sh_{sim_};
};

TEST_F(DevxLoss, AnAllocationFailureIsOneEoverflowAheadOfTheEventsStillQueued) {
  const std::string ch = sh_.channel(sh_.open("mlx5_0"), "0x16", 1);
  ctl_ok(sim_, {"module", "plug", "mlx5_0/1"});
  ctl_ok(sim_, {"module", "unplug", "mlx5_0/1"});
  EXPECT_EQ(ctl_ok(sim_, {"alloc-fail", "mlx5_0"}),
            "mlx5_0: the next 1 event of channel 1 will fail to allocate\n");
  const json dropped = sim_.ctl_json({"module", "disable", "mlx5_0/1"});
  EXPECT_EQ(dropped["devx_events"][0]["dropped"], 1);
  EXPECT_EQ(dropped["devx_events"][0]["queued"], 0);
  EXPECT_EQ(dropped["message"],
            "mlx5_0/1: module 3 disabled: port_module_event to 1 channel (1 dropped)");
  ctl_ok(sim_, {"module", "error", "mlx5_0/1", "bad_cable"});

  sh_("nonblock " + ch + " 1");
  const json first = sh_("get " + ch + " 72");
  EXPECT_EQ(first["ret"], -1);
  EXPECT_EQ(first["errno_name"], "EOVERFLOW");
  EXPECT_EQ(module_status(sh_, ch), 1);  // plugged, unplugged, then the error: disabled was lost
  EXPECT_EQ(module_status(sh_, ch), 2);
  EXPECT_EQ(module_status(sh_, ch), 3);
  EXPECT_EQ(sh_("get " + ch + " 72")["errno_name"], "EAGAIN");
  const json c = sim_.stats()["channels"][0];
  EXPECT_EQ(c["queued"], 3);
  EXPECT_EQ(c["read"], 3);
  EXPECT_EQ(c["dropped"], 1);
  EXPECT_EQ(sim_.stats()["devx_totals"]["dropped"], 1);
}

TEST_F(DevxLoss, ALostEventAloneDoesNotMakeTheChannelReadable) {
  // The kernel's poll looks at the event list only; the overflow is told by the next read.
  const std::string ch = sh_.channel(sh_.open("mlx5_0"), "0x17", 1);
  ctl_ok(sim_, {"alloc-fail", "mlx5_0", "--count", "2"});
  ctl_ok(sim_, {"temp-warn", "mlx5_0", "1"});
  ctl_ok(sim_, {"temp-warn", "mlx5_0", "2"});
  EXPECT_EQ(sh_("poll " + ch + " 0"), json({{"ret", 0}, {"revents", json::array()}}));
  sh_("nonblock " + ch + " 1");
  EXPECT_EQ(sh_("get " + ch + " 72")["errno_name"], "EOVERFLOW");  // once for both
  EXPECT_EQ(sh_("get " + ch + " 72")["errno_name"], "EAGAIN");
  ctl_ok(sim_, {"temp-warn", "mlx5_0", "3"});
  EXPECT_EQ(sh_("get " + ch + " 72")["ret"], 72);
}

TEST_F(DevxLoss, AllocationFailuresOnEveryDataChannelOfADevice) {
  const std::string a = sh_.channel(sh_.open("mlx5_0"), "0x16", 1);
  const std::string b = sh_.channel(sh_.open("mlx5_0"), "0x16", 2);
  const std::string omit = sh_("channel " + sh_.open("mlx5_0") + " omit")["ch"];
  ASSERT_EQ(sh_("subscribe " + omit + " 3 0x16")["ret"], 0);
  expect_refused(sim_, {"alloc-fail", "mlx5_0", "--channel", "3"},
                 "no open DEVX channel 3 on mlx5_0 that keeps event data (OMIT_EV_DATA channels "
                 "allocate nothing)");
  expect_refused(sim_, {"alloc-fail", "mlx5_1"},
                 "no open DEVX channel on mlx5_1 that keeps event data (OMIT_EV_DATA channels "
                 "allocate nothing)");
  const json armed = sim_.ctl_json({"alloc-fail", "mlx5_0", "--count", "2"});
  EXPECT_EQ(armed["channels"], json({1, 2}));
  for (const std::string action : {"plug", "unplug", "disable"})
    ctl_ok(sim_, {"module", action, "mlx5_0/1"});
  for (const std::string& ch : {a, b}) {
    sh_("nonblock " + ch + " 1");
    EXPECT_EQ(sh_("get " + ch + " 72")["errno_name"], "EOVERFLOW");
    EXPECT_EQ(module_status(sh_, ch), 4);  // disabled: the first two were lost
    EXPECT_EQ(sh_("get " + ch + " 72")["errno_name"], "EAGAIN");
  }
  sh_("nonblock " + omit + " 1");
  EXPECT_EQ(sh_("get " + omit + " 8")["cookie"], 3);
  EXPECT_EQ(sh_("get " + omit + " 8")["errno_name"], "EAGAIN");
}

TEST_F(DevxLoss, AStormHasNoQueueCap) {
  // More records than the channel's socket holds (about 175,000): the rest waits in the
  // simulator, and every one arrives, in order, none lost.
  const std::string ch = sh_.channel(sh_.open("mlx5_0"), "0x16", 1);
  const json storm =
      sim_.ctl_json({"devx-storm", "--count", "400000", "--devices", "mlx5_0"}, kTimeout * 3);
  EXPECT_EQ(storm["queued"], 400000);
  EXPECT_NE(storm["message"].get<std::string>().find("events/s"), std::string::npos);
  EXPECT_GT(sim_.stats()["channels"][0]["backlog"], 0);
  const json d = sh_("drain " + ch + " 400000 60000");
  EXPECT_EQ(d["read"], 400000) << d;
  EXPECT_EQ(d["first_seq"], 0);
  EXPECT_EQ(d["last_seq"], 399999);
  EXPECT_EQ(d["consecutive"], true);
  EXPECT_EQ(d["overflows"], json::array());
  EXPECT_EQ(d["types"], json({{"22", 400000}}));
  const json c = sim_.stats()["channels"][0];
  EXPECT_EQ(c["read"], 400000);
  EXPECT_EQ(c["backlog"], 0);
}

TEST_F(DevxLoss, HotUnplugDestroysTheChannel) {
  const std::string ctx = sh_.open("mlx5_0");
  const std::string pending = sh_.channel(ctx, "0x16", 1);
  const std::string waiting = sh_.channel(ctx, "0x17", 2);
  ctl_ok(sim_, {"module", "plug", "mlx5_0/1"});
  ctl_ok(sim_, {"module", "unplug", "mlx5_0/1"});
  // A reader blocked on an empty channel is woken with EIO.
  sh_.send("get " + waiting + " 72");
  EXPECT_TRUE(sh_.silent_for(std::chrono::milliseconds(300)));
  ctl_ok(sim_, {"unplug", "mlx5_0"});
  const json woken = sh_.receive();
  EXPECT_EQ(woken["ret"], -1);
  EXPECT_EQ(woken["errno_name"], "EIO");
  // The pending events were freed: readable forever, with RDHUP, and nothing to read.
  const json revents = json::array({"IN", "RDNORM", "RDHUP"});
  EXPECT_EQ(sh_("poll " + pending + " 0"), json({{"ret", 1}, {"revents", revents}}));
  expect_nothing_to_read(sh_, pending);
  sh_("nonblock " + pending + " 0");
  EXPECT_EQ(sh_("get " + pending + " 72")["errno_name"], "EIO");
  EXPECT_EQ(sh_("get_async " + ctx), json({{"type", IBV_EVENT_DEVICE_FATAL}, {"port", 0}}));
  // Every command on the disassociated context fails with EIO.
  EXPECT_EQ(sh_("subscribe " + pending + " 1 0x16")["errno_name"], "EIO");
  EXPECT_EQ(sh_("caps " + ctx + " 0")["errno_name"], "EIO");
  EXPECT_EQ(sh_("channel " + ctx)["errno_name"], "EIO");
  json stats = sim_.stats();
  EXPECT_EQ(stats["channels"][0]["state"], "destroyed");
  EXPECT_EQ(stats["channels"][0]["queued"], 2);
  EXPECT_EQ(stats["channels"][0]["read"], 0);
  // Its fd closed, the channel is gone.
  sh_("destroy " + pending);
  sh_("destroy " + waiting);
  stats = sim_.wait_stats([](const json& s) { return s["devx_totals"]["channels_open"] == 0; });
  EXPECT_EQ(stats["channels"][0]["state"], "closed");

  // Plugged back, the device has DEVX again for new contexts.
  ctl_ok(sim_, {"replug", "mlx5_0"});
  sh_("list");
  const std::string again = sh_.channel(sh_.open("mlx5_0"), "0x16", 3);
  ctl_ok(sim_, {"module", "plug", "mlx5_0/1"});
  EXPECT_EQ(module_status(sh_, again), 1);
}

TEST_F(DevxLoss, ClosingTheContextDestroysItsChannels) {
  // As for the kernel, which destroys a context's objects when its file is released. (rdma-core
  // wants channels destroyed first; a process that exits closes them in any order.)
  const std::string ctx = sh_.open("mlx5_0");
  const std::string ch = sh_.channel(ctx, "0x16", 1);
  ctl_ok(sim_, {"module", "plug", "mlx5_0/1"});
  EXPECT_EQ(sh_("close " + ctx)["ret"], 0);
  sim_.wait_stats([](const json& s) { return s["channels"][0]["state"] == "destroyed"; });
  EXPECT_EQ(sh_("poll " + ch + " 0")["revents"], json::array({"IN", "RDNORM", "RDHUP"}));
  expect_nothing_to_read(sh_, ch);
}

TEST_F(DevxLoss, DevxDestroyEndsAChannelAndTheDeviceGoesOn) {
  // rdma-sim devx-destroy: one channel ends as on disassociation, with no event; the other
  // channel and the context go on.
  const std::string ctx = sh_.open("mlx5_0");
  const std::string ended = sh_.channel(ctx, "0x16", 1);
  const std::string kept = sh_.channel(ctx, "0x16", 2);
  ctl_ok(sim_, {"module", "plug", "mlx5_0/1"});
  EXPECT_EQ(ctl_ok(sim_, {"devx-destroy", "mlx5_0", "--channel", "1"}),
            "mlx5_0: DEVX channel 1 destroyed\n");
  expect_refused(sim_, {"devx-destroy", "mlx5_0", "--channel", "1"},
                 "no open DEVX channel 1 on mlx5_0");
  EXPECT_EQ(sh_("poll " + ended + " 0"),
            json({{"ret", 1}, {"revents", {"IN", "RDNORM", "RDHUP"}}}));
  expect_nothing_to_read(sh_, ended);
  ctl_ok(sim_, {"module", "unplug", "mlx5_0/1"});
  EXPECT_EQ(module_status(sh_, kept), 1);
  EXPECT_EQ(module_status(sh_, kept), 2);
  ctl_ok(sim_, {"port", "down", "mlx5_0/1"});
  EXPECT_EQ(sh_("get_async " + ctx), json({{"type", IBV_EVENT_PORT_ERR}, {"port", 1}}));
  const json stats = sim_.stats();
  EXPECT_EQ(stats["channels"][0]["state"], "destroyed");
  EXPECT_EQ(stats["channels"][1]["state"], "open");
}

}  // namespace
}  // namespace simtest
