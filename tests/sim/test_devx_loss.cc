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

TEST(DevxLoss, AnAllocationFailureIsOneEoverflowAheadOfTheEventsStillQueued) {
  Sim sim(devx_variants());
  DevxShell sh(sim);
  const std::string ch = sh.channel(sh.open("mlx5_0"), "0x16", 1);
  ctl_ok(sim, {"module", "plug", "mlx5_0/1"});
  ctl_ok(sim, {"module", "unplug", "mlx5_0/1"});
  EXPECT_EQ(ctl_ok(sim, {"alloc-fail", "mlx5_0"}),
            "mlx5_0: the next 1 event of channel 1 will fail to allocate\n");
  const json dropped = sim.ctl_json({"module", "disable", "mlx5_0/1"});
  EXPECT_EQ(dropped["devx_events"][0]["dropped"], 1);
  EXPECT_EQ(dropped["devx_events"][0]["queued"], 0);
  EXPECT_EQ(dropped["message"],
            "mlx5_0/1: module 3 disabled: port_module_event to 1 channel (1 dropped)");
  ctl_ok(sim, {"module", "error", "mlx5_0/1", "bad_cable"});

  sh("nonblock " + ch + " 1");
  const json first = sh("get " + ch + " 72");
  EXPECT_EQ(first["ret"], -1);
  EXPECT_EQ(first["errno_name"], "EOVERFLOW");
  EXPECT_EQ(module_status(sh, ch), 1);  // plugged, unplugged, then the error: disabled was lost
  EXPECT_EQ(module_status(sh, ch), 2);
  EXPECT_EQ(module_status(sh, ch), 3);
  EXPECT_EQ(sh("get " + ch + " 72")["errno_name"], "EAGAIN");
  const json c = sim.stats()["channels"][0];
  EXPECT_EQ(c["queued"], 3);
  EXPECT_EQ(c["read"], 3);
  EXPECT_EQ(c["dropped"], 1);
  EXPECT_EQ(sim.stats()["devx_totals"]["dropped"], 1);
}

TEST(DevxLoss, ALostEventAloneDoesNotMakeTheChannelReadable) {
  // The kernel's poll looks at the event list only; the overflow is told by the next read.
  Sim sim(devx_variants());
  DevxShell sh(sim);
  const std::string ch = sh.channel(sh.open("mlx5_0"), "0x17", 1);
  ctl_ok(sim, {"alloc-fail", "mlx5_0", "--count", "2"});
  ctl_ok(sim, {"temp-warn", "mlx5_0", "1"});
  ctl_ok(sim, {"temp-warn", "mlx5_0", "2"});
  EXPECT_EQ(sh("poll " + ch + " 0"), json({{"ret", 0}, {"revents", json::array()}}));
  sh("nonblock " + ch + " 1");
  EXPECT_EQ(sh("get " + ch + " 72")["errno_name"], "EOVERFLOW");  // once for both
  EXPECT_EQ(sh("get " + ch + " 72")["errno_name"], "EAGAIN");
  ctl_ok(sim, {"temp-warn", "mlx5_0", "3"});
  EXPECT_EQ(sh("get " + ch + " 72")["ret"], 72);
}

TEST(DevxLoss, AllocationFailuresOnEveryDataChannelOfADevice) {
  Sim sim(devx_variants());
  DevxShell sh(sim);
  const std::string a = sh.channel(sh.open("mlx5_0"), "0x16", 1);
  const std::string b = sh.channel(sh.open("mlx5_0"), "0x16", 2);
  const std::string omit = sh("channel " + sh.open("mlx5_0") + " omit")["ch"];
  ASSERT_EQ(sh("subscribe " + omit + " 3 0x16")["ret"], 0);
  expect_refused(sim, {"alloc-fail", "mlx5_0", "--channel", "3"},
                 "no open DEVX channel 3 on mlx5_0 that keeps event data (OMIT_EV_DATA channels "
                 "allocate nothing)");
  expect_refused(sim, {"alloc-fail", "mlx5_1"},
                 "no open DEVX channel on mlx5_1 that keeps event data (OMIT_EV_DATA channels "
                 "allocate nothing)");
  const json armed = sim.ctl_json({"alloc-fail", "mlx5_0", "--count", "2"});
  EXPECT_EQ(armed["channels"], json({1, 2}));
  for (const std::string action : {"plug", "unplug", "disable"})
    ctl_ok(sim, {"module", action, "mlx5_0/1"});
  for (const std::string& ch : {a, b}) {
    sh("nonblock " + ch + " 1");
    EXPECT_EQ(sh("get " + ch + " 72")["errno_name"], "EOVERFLOW");
    EXPECT_EQ(module_status(sh, ch), 4);  // disabled: the first two were lost
    EXPECT_EQ(sh("get " + ch + " 72")["errno_name"], "EAGAIN");
  }
  sh("nonblock " + omit + " 1");
  EXPECT_EQ(sh("get " + omit + " 8")["cookie"], 3);
  EXPECT_EQ(sh("get " + omit + " 8")["errno_name"], "EAGAIN");
}

TEST(DevxLoss, AStormHasNoQueueCap) {
  // More records than the channel's socket holds (about 175,000): the rest waits in the
  // simulator, and every one arrives, in order, none lost.
  Sim sim(devx_variants());
  DevxShell sh(sim);
  const std::string ch = sh.channel(sh.open("mlx5_0"), "0x16", 1);
  const json storm =
      sim.ctl_json({"devx-storm", "--count", "400000", "--devices", "mlx5_0"}, kTimeout * 3);
  EXPECT_EQ(storm["queued"], 400000);
  EXPECT_NE(storm["message"].get<std::string>().find("events/s"), std::string::npos);
  EXPECT_GT(sim.stats()["channels"][0]["backlog"], 0);
  const json d = sh("drain " + ch + " 400000 60000");
  EXPECT_EQ(d["read"], 400000) << d;
  EXPECT_EQ(d["first_seq"], 0);
  EXPECT_EQ(d["last_seq"], 399999);
  EXPECT_EQ(d["consecutive"], true);
  EXPECT_EQ(d["overflows"], json::array());
  EXPECT_EQ(d["types"], json({{"22", 400000}}));
  const json c = sim.stats()["channels"][0];
  EXPECT_EQ(c["read"], 400000);
  EXPECT_EQ(c["backlog"], 0);
}

TEST(DevxLoss, HotUnplugDestroysTheChannel) {
  Sim sim(devx_variants());
  DevxShell sh(sim);
  const std::string ctx = sh.open("mlx5_0");
  const std::string pending = sh.channel(ctx, "0x16", 1);
  const std::string waiting = sh.channel(ctx, "0x17", 2);
  ctl_ok(sim, {"module", "plug", "mlx5_0/1"});
  ctl_ok(sim, {"module", "unplug", "mlx5_0/1"});
  // A reader blocked on an empty channel is woken with EIO.
  sh.send("get " + waiting + " 72");
  EXPECT_TRUE(sh.silent_for(std::chrono::milliseconds(300)));
  ctl_ok(sim, {"unplug", "mlx5_0"});
  const json woken = sh.receive();
  EXPECT_EQ(woken["ret"], -1);
  EXPECT_EQ(woken["errno_name"], "EIO");
  // The pending events were freed: readable forever, with RDHUP, and nothing to read.
  const json revents = json::array({"IN", "RDNORM", "RDHUP"});
  EXPECT_EQ(sh("poll " + pending + " 0"), json({{"ret", 1}, {"revents", revents}}));
  sh("nonblock " + pending + " 1");
  EXPECT_EQ(sh("get " + pending + " 72")["errno_name"], "EAGAIN");
  sh("nonblock " + pending + " 0");
  EXPECT_EQ(sh("get " + pending + " 72")["errno_name"], "EIO");
  EXPECT_EQ(sh("get_async " + ctx), json({{"type", IBV_EVENT_DEVICE_FATAL}, {"port", 0}}));
  // Every command on the disassociated context fails with EIO.
  EXPECT_EQ(sh("subscribe " + pending + " 1 0x16")["errno_name"], "EIO");
  EXPECT_EQ(sh("caps " + ctx + " 0")["errno_name"], "EIO");
  EXPECT_EQ(sh("channel " + ctx)["errno_name"], "EIO");
  json stats = sim.stats();
  EXPECT_EQ(stats["channels"][0]["state"], "destroyed");
  EXPECT_EQ(stats["channels"][0]["queued"], 2);
  EXPECT_EQ(stats["channels"][0]["read"], 0);
  // Its fd closed, the channel is gone.
  sh("destroy " + pending);
  sh("destroy " + waiting);
  stats = sim.wait_stats([](const json& s) { return s["devx_totals"]["channels_open"] == 0; });
  EXPECT_EQ(stats["channels"][0]["state"], "closed");

  // Plugged back, the device has DEVX again for new contexts.
  ctl_ok(sim, {"replug", "mlx5_0"});
  sh("list");
  const std::string again = sh.channel(sh.open("mlx5_0"), "0x16", 3);
  ctl_ok(sim, {"module", "plug", "mlx5_0/1"});
  EXPECT_EQ(module_status(sh, again), 1);
}

TEST(DevxLoss, ClosingTheContextDestroysItsChannels) {
  // As for the kernel, which destroys a context's objects when its file is released. (rdma-core
  // wants channels destroyed first; a process that exits closes them in any order.)
  Sim sim(devx_variants());
  DevxShell sh(sim);
  const std::string ctx = sh.open("mlx5_0");
  const std::string ch = sh.channel(ctx, "0x16", 1);
  ctl_ok(sim, {"module", "plug", "mlx5_0/1"});
  EXPECT_EQ(sh("close " + ctx)["ret"], 0);
  sim.wait_stats([](const json& s) { return s["channels"][0]["state"] == "destroyed"; });
  EXPECT_EQ(sh("poll " + ch + " 0")["revents"], json::array({"IN", "RDNORM", "RDHUP"}));
  sh("nonblock " + ch + " 1");
  EXPECT_EQ(sh("get " + ch + " 72")["errno_name"], "EAGAIN");
}

TEST(DevxLoss, DevxDestroyEndsAChannelAndTheDeviceGoesOn) {
  // rdma-sim devx-destroy: one channel ends as on disassociation, with no event; the other
  // channel and the context go on.
  Sim sim(devx_variants());
  DevxShell sh(sim);
  const std::string ctx = sh.open("mlx5_0");
  const std::string ended = sh.channel(ctx, "0x16", 1);
  const std::string kept = sh.channel(ctx, "0x16", 2);
  ctl_ok(sim, {"module", "plug", "mlx5_0/1"});
  EXPECT_EQ(ctl_ok(sim, {"devx-destroy", "mlx5_0", "--channel", "1"}),
            "mlx5_0: DEVX channel 1 destroyed\n");
  expect_refused(sim, {"devx-destroy", "mlx5_0", "--channel", "1"},
                 "no open DEVX channel 1 on mlx5_0");
  EXPECT_EQ(sh("poll " + ended + " 0"), json({{"ret", 1}, {"revents", {"IN", "RDNORM", "RDHUP"}}}));
  sh("nonblock " + ended + " 1");
  EXPECT_EQ(sh("get " + ended + " 72")["errno_name"], "EAGAIN");
  ctl_ok(sim, {"module", "unplug", "mlx5_0/1"});
  EXPECT_EQ(module_status(sh, kept), 1);
  EXPECT_EQ(module_status(sh, kept), 2);
  ctl_ok(sim, {"port", "down", "mlx5_0/1"});
  EXPECT_EQ(sh("get_async " + ctx), json({{"type", IBV_EVENT_PORT_ERR}, {"port", 1}}));
  const json stats = sim.stats();
  EXPECT_EQ(stats["channels"][0]["state"], "destroyed");
  EXPECT_EQ(stats["channels"][1]["state"], "open");
}

}  // namespace
}  // namespace simtest
