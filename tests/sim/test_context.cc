// ibv_open_device / ibv_close_device, the async event fd and the accounting.
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <signal.h>

#include "sim_test.h"

namespace simtest {
namespace {

std::string open_ctx(VerbsShell& sh, const std::string& device) {
  const json c = sh("open " + device);
  if (c["null"]) throw rdmatest::HarnessError("open " + device + " failed: " + c.dump());
  return c["ctx"];
}

TEST(Context, IsAnExtendedVerbsContextWithItsOwnAsyncFd) {
  // Each context is a real verbs_context (the inline verbs.h paths use its ops) and has its own
  // async fd: read-only, close-on-exec, blocking, a FIFO in the simulator.
  Sim sim(two_adapters());
  VerbsShell sh(sim);
  sh("list");
  const json a = sh("open L1:mlx5_0");
  const json b = sh("open L1:mlx5_0");
  ASSERT_FALSE(a["null"]);
  ASSERT_FALSE(b["null"]);
  EXPECT_NE(a["async_fd"], b["async_fd"]);
  EXPECT_NE(a["cmd_fd"], b["cmd_fd"]);
  for (const json& c : {a, b}) {
    EXPECT_TRUE(c["abi_extended"]);
    EXPECT_EQ(c["vctx_sz"], sizeof(verbs_context));
    EXPECT_TRUE(c["has_query_port"]);
    EXPECT_TRUE(c["has_query_device_ex"]);
    EXPECT_EQ(c["num_comp_vectors"], 8);
    EXPECT_EQ(c["async_accmode"], O_RDONLY);
    EXPECT_FALSE(c["async_nonblock"]);
    EXPECT_TRUE(c["async_cloexec"]);
    EXPECT_TRUE(c["cmd_cloexec"]);
    EXPECT_TRUE(c["mutex_trylock"]);
  }
  // As with the real library: cmd_fd 3 and async_fd 4 for a program's first context.
  EXPECT_EQ(a["cmd_fd"], 3);
  EXPECT_EQ(a["async_fd"], 4);
  EXPECT_EQ(sh("close " + a["ctx"].get<std::string>())["ret"], 0);
  EXPECT_EQ(sh("close " + b["ctx"].get<std::string>())["ret"], 0);
}

TEST(Context, EachEventIsOneWholeSixteenByteRecord) {
  // The fd carries struct ib_uverbs_async_event_desc records: element (u64), event_type (u32),
  // reserved (u32), little-endian. A 16-byte read takes exactly one.
  Sim sim(two_adapters());
  VerbsShell sh(sim);
  sh("list");
  const std::string c = open_ctx(sh, "L1:mlx5_1");
  ctl_ok(sim, {"port", "down", "mlx5_1/2"});
  ctl_ok(sim, {"port", "up", "mlx5_1/2"});
  EXPECT_EQ(sh("read_raw " + c + " 16"),
            json({{"ret", 16}, {"errno", 0}, {"hex", "02000000000000000a00000000000000"}}));
  EXPECT_EQ(sh("read_raw " + c + " 16"),
            json({{"ret", 16}, {"errno", 0}, {"hex", "02000000000000000900000000000000"}}));
}

TEST(Context, EmptyNonBlockingFdGivesEagainAndNeverEofOrHangup) {
  Sim sim(two_adapters());
  VerbsShell sh(sim);
  sh("list");
  const std::string c = open_ctx(sh, "L1:mlx5_0");
  EXPECT_EQ(sh("poll " + c + " 200")["revents"], 0);  // nothing to read, no POLLHUP
  sh("nonblock " + c + " 1");
  const json r = sh("read_raw " + c + " 16");
  EXPECT_EQ(r["ret"], -1);
  EXPECT_EQ(r["errno"], EAGAIN);
  const json e = sh("get_event " + c);
  EXPECT_EQ(e["ret"], -1);
  EXPECT_EQ(e["errno_name"], "EAGAIN");
  ctl_ok(sim, {"lid", "mlx5_0/1", "12"});
  const json p = sh("poll " + c + " 5000");
  EXPECT_EQ(p["ret"], 1);
  EXPECT_TRUE(p["pollin"]);
  EXPECT_FALSE(p["pollhup"]);
  EXPECT_FALSE(p["pollerr"]);
  const json ev = sh("get_event " + c);
  EXPECT_EQ(ev["ret"], 0);
  EXPECT_EQ(ev["type"], IBV_EVENT_LID_CHANGE);
  EXPECT_EQ(ev["port_num"], 1);
  EXPECT_EQ(sh("poll " + c + " 100")["revents"], 0);
}

TEST(Context, ABlockingGetWaitsForTheNextEvent) {
  Sim sim(two_adapters());
  VerbsShell sh(sim);
  sh("list");
  const std::string c = open_ctx(sh, "L1:mlx5_0");
  sh.send("get_event " + c);
  EXPECT_TRUE(sh.silent_for(200ms));  // blocked in read(): no event yet
  ctl_ok(sim, {"reregister", "mlx5_0/1"});
  const json ev = sh.receive();
  EXPECT_EQ(ev["ret"], 0);
  EXPECT_EQ(ev["type"], IBV_EVENT_CLIENT_REREGISTER);
  EXPECT_EQ(ev["port_num"], 1);
}

TEST(Context, UnaffiliatedEventsGoToEveryContextOfTheDeviceOnly) {
  // Two processes, three contexts on mlx5_0 and one on mlx5_1: a port event of mlx5_0 reaches
  // each mlx5_0 context once and no other.
  Sim sim(two_adapters());
  VerbsShell p1(sim), p2(sim);
  p1("list");
  p2("list");
  const std::string a = open_ctx(p1, "L1:mlx5_0"), b = open_ctx(p1, "L1:mlx5_0");
  const std::string c = open_ctx(p2, "L1:mlx5_0"), other = open_ctx(p2, "L1:mlx5_1");
  const json out = sim.ctl_json({"port", "down", "mlx5_0/1"});
  ASSERT_TRUE(out["ok"]);
  EXPECT_EQ(
      out["events"],
      json::parse(
          R"([{"device":"mlx5_0","type":10,"type_name":"port_err","element":1,"contexts":3}])"));
  for (auto [sh, ctx] : {std::pair{&p1, a}, {&p1, b}, {&p2, c}}) {
    const json ev = (*sh)("get_event " + ctx);
    EXPECT_EQ(ev["type"], IBV_EVENT_PORT_ERR);
    EXPECT_EQ(ev["port_num"], 1);
    (*sh)("nonblock " + ctx + " 1");
    EXPECT_EQ((*sh)("get_event " + ctx)["errno_name"], "EAGAIN");  // exactly once
  }
  p2("nonblock " + other + " 1");
  EXPECT_EQ(p2("get_event " + other)["errno_name"], "EAGAIN");
}

TEST(Context, AccountingCountsQueuedReadAndAckedPerContext) {
  // ibv_get_async_event, ibv_ack_async_event and queries are counted per context (the ack of a
  // port event does nothing else); closing is accounted when the simulator sees the connection
  // go.
  Sim sim(two_adapters());
  VerbsShell sh(sim);
  sh("list");
  const std::string c = open_ctx(sh, "L1:mlx5_0");
  const std::string idle = open_ctx(sh, "L1:mlx5_1");
  ctl_ok(sim, {"port", "down", "mlx5_0/1"});
  ctl_ok(sim, {"port", "up", "mlx5_0/1"});
  ctl_ok(sim, {"sm", "mlx5_0/1", "4"});
  for (int i = 0; i < 3; ++i)
    ASSERT_EQ(sh("get_event " + c)["ret"], 0);
  sh("ack " + c);  // acks the last one only
  for (const std::string q : {"query_port", "query_port_compat", "query_gid", "query_gid_ex",
                              "query_gid_table", "query_pkey"}) {
    const std::string args = q == "query_gid_table"        ? " 8"
                             : q.starts_with("query_port") ? " 1"
                                                           : " 1 0";
    const json r = sh(q + " " + c + args);
    ASSERT_TRUE(r["ret"] == 0 || (q == "query_gid_table" && r["ret"] == 1)) << q << ": " << r;
  }
  const int pid = sh.process().pid();
  json s = sim.stats();
  ASSERT_EQ(s["contexts"].size(), 2u);
  // "devx": rdma-core's mlx5 provider asks every context for DEVX and falls back without it
  // (providers/mlx5/mlx5.c, mlx5_alloc_context), so a plain ibv_open_device of an mlx5 device
  // with DEVX gets a DEVX context.
  EXPECT_EQ(s["contexts"][0], json({{"id", 1},
                                    {"pid", pid},
                                    {"device", "mlx5_0"},
                                    {"device_index", 0},
                                    {"open", true},
                                    {"queued", 3},
                                    {"read", 3},
                                    {"acked", 1},
                                    {"port_queries", 2},
                                    {"gid_queries", 3},
                                    {"pkey_queries", 1},
                                    {"backlog", 0},
                                    {"silenced", false},
                                    {"reader_closed", false},
                                    {"devx", true}}));
  EXPECT_EQ(s["contexts"][1]["device"], "mlx5_1");
  EXPECT_EQ(s["contexts"][1]["port_queries"], 0);
  EXPECT_EQ(s["contexts"][1]["queued"], 0);
  EXPECT_EQ(s["totals"], json({{"contexts_opened", 2},
                               {"contexts_closed", 0},
                               {"contexts_open", 2},
                               {"events_queued", 3},
                               {"events_read", 3},
                               {"events_acked", 1}}));

  // Close with events still queued: ibv_close_device returns 0 at once, the events are dropped.
  ctl_ok(sim, {"gid", "add", "mlx5_0/1", "fe80::99"});
  EXPECT_EQ(sh("close " + c)["ret"], 0);
  s = sim.wait_stats([](const json& st) { return st["totals"]["contexts_closed"] == 1; });
  EXPECT_EQ(s["contexts"][0]["open"], false);
  EXPECT_EQ(s["contexts"][0]["queued"], 4);
  EXPECT_EQ(s["contexts"][0]["read"], 3);
  EXPECT_EQ(s["totals"]["contexts_open"], 1);
}

TEST(Context, AProcessThatDiesClosesItsContexts) {
  Sim sim(two_adapters());
  VerbsShell sh(sim);
  sh("list");
  open_ctx(sh, "L1:mlx5_0");
  open_ctx(sh, "L1:mlx5_1");
  sim.wait_stats([](const json& s) { return s["totals"]["contexts_open"] == 2; });
  sh.process().signal(SIGKILL);
  sh.process().require_exit(kTimeout);
  const json s = sim.wait_stats([](const json& st) { return st["totals"]["contexts_open"] == 0; });
  EXPECT_EQ(s["totals"]["contexts_closed"], 2);
}

}  // namespace
}  // namespace simtest
