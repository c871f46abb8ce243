// The limits on what one client can make the daemon hold or do that are not tested elsewhere:
// filters per subscription, requests per second, and connections per user. (Subscribers in
// all: socket_test; request line length: requests_test; pending output: stream_test.)
#include <gtest/gtest.h>

#include "hub_support.h"
#include "paths.h"

namespace rdma_eventd::subtest {
namespace {

json status_of(LineClient& c, int id) {
  c.send(json{{"op", "status"}, {"id", id}}.dump() + "\n");
  return c.read_until(reply_to(id), 10s).back();
}

TEST(Limits, ASubscribeOverMaxFiltersIsRefusedAndTheFilterInForceStays) {
  SimFabric sim(topology("two-adapters"));
  HubDaemon d(sim, {.socket = R"("max_filters": 4)"});
  GreetedClient c(d);
  c.send(R"({"op":"subscribe","id":1,"events":["port_err"],"ports":["mlx5_0/1","mlx5_1/1"]})"
         "\n");
  EXPECT_EQ(c.require_json(10s)["filter"],
            json::parse(R"({"events":["port_err"],"ports":["mlx5_0/1","mlx5_1/1"]})"));
  c.send(R"({"op":"subscribe","id":2,"events":["port_err","port_active","lid_change"],)"
         R"("devices":["mlx5_1"],"ports":["mlx5_1/2"]})"
         "\n");
  EXPECT_EQ(c.require_json(10s),
            json({{"type", "error"},
                  {"op", "subscribe"},
                  {"id", 2},
                  {"error", "too_many_filters"},
                  {"message",
                   "events, devices and ports have 5 entries together; socket.max_filters is 4"}}));
  // The first filter still selects: mlx5_1/2 is not in it, mlx5_0/1 is.
  inject(sim, {"port", "down", "mlx5_1/2"});
  inject(sim, {"port", "down", "mlx5_0/1"});
  const json record = c.require_json(10s);
  EXPECT_EQ(record["seq"], 2);
  EXPECT_EQ(record["device"], "mlx5_0");
  const json st = status_of(c, 3);
  EXPECT_EQ(st["subscribers"]["max_filters"], 4);
  EXPECT_EQ(st["subscribers"]["list"][0]["filter"],
            json::parse(R"({"events":["port_err"],"ports":["mlx5_0/1","mlx5_1/1"]})"));
}

TEST(Limits, RequestsOverTheRateAreRefusedNotExecutedAndTheConnectionStays) {
  // At 5 per second (a burst of 5), six requests sent at once: five pings are answered, the
  // subscribe is refused with its id and op and not executed.
  SimFabric sim(topology("two-adapters"));
  HubDaemon d(sim, {.socket = R"("max_requests_per_second": 5)"});
  GreetedClient c(d), observer(d);
  std::string burst;
  for (int id = 1; id <= 5; ++id)
    burst += json{{"op", "ping"}, {"id", id}}.dump() + "\n";
  burst += R"({"op":"subscribe","id":6,"events":["lid_change"]})"
           "\n";
  c.send(burst);
  for (int id = 1; id <= 5; ++id)
    EXPECT_EQ(c.require_json(10s),
              json({{"type", "reply"}, {"op", "ping"}, {"id", id}, {"seq", 0}}));
  EXPECT_EQ(
      c.require_json(10s),
      json({{"type", "error"},
            {"op", "subscribe"},
            {"id", 6},
            {"error", "rate_limited"},
            {"message", "over socket.max_requests_per_second (5); the request was not executed"}}));
  // Not executed: the filter still selects everything.
  inject(sim, {"port", "down", "mlx5_0/1"});
  EXPECT_EQ(c.require_json(10s)["event"], "port_err");
  // The bucket refills at the rate: a ping goes through again within a second or so. What is
  // awaited is time passing, at the daemon's clock: asked again and again.
  int refused_more = 0;
  int id = 10;
  ASSERT_TRUE(rdmatest::wait_until(
      [&] {
        c.send(json{{"op", "ping"}, {"id", ++id}}.dump() + "\n");
        const json l = c.read_until(reply_to(id), 10s).back();
        refused_more += l["type"] == "error";
        return l["type"] == "reply";
      },
      10s));
  const json st = status_of(observer, 1)["subscribers"];
  EXPECT_EQ(st["rate_limited"], 1 + refused_more);
  EXPECT_EQ(st["max_requests_per_second"], 5);
  EXPECT_EQ(st["list"][0]["rate_limited"], 1 + refused_more);
  EXPECT_EQ(st["list"][1]["rate_limited"], 0);  // the observer has its own budget

  // A reload applies a new rate to connected subscribers at once.
  reload(d, R"("max_requests_per_second": 1000)");
  std::string many;
  for (int i = 100; i < 150; ++i)
    many += json{{"op", "ping"}, {"id", i}}.dump() + "\n";
  observer.send(many);
  for (const json& l : observer.read_until(reply_to(149), 10s))
    EXPECT_EQ(l["type"], "reply") << l.dump();
}

TEST(Limits, OneUserHoldsAtMostMaxSubscribersPerUserAndRootIsExempt) {
  SimFabric sim(topology("two-adapters"));
  HubDaemon d(sim, {.socket = R"("mode": "0666", "max_subscribers_per_user": 3)"});
  open_directory_to_everyone(d);
  const Credentials user{4242, 4242, {}};
  std::vector<std::unique_ptr<LineClient>> held;
  for (int i = 0; i < 3; ++i) {
    held.push_back(std::make_unique<LineClient>(d.socket(), user));
    EXPECT_EQ(held.back()->require_json(10s)["type"], "hello");
  }
  {
    LineClient fourth(d.socket(), user);
    EXPECT_EQ(fourth.read_to_eof(10s), refused_for_user(4242, 3));
  }
  // Another user, and root as often as it likes, still get in.
  LineClient other(d.socket(), Credentials{4243, 4243, {}});
  EXPECT_EQ(other.require_json(10s)["type"], "hello");
  std::vector<std::unique_ptr<LineClient>> root;
  for (int i = 0; i < 5; ++i) {
    root.push_back(std::make_unique<LineClient>(d.socket()));
    EXPECT_EQ(root.back()->require_json(10s)["type"], "hello");
  }
  // Once one of the user's connections is gone, the user may connect again: the daemon gives
  // the slot back before it closes the connection, so the end of file says it is free.
  held.front()->shutdown_write();
  EXPECT_TRUE(held.front()->read_to_eof(10s).empty());
  LineClient again(d.socket(), user);
  EXPECT_EQ(again.require_json(10s)["type"], "hello");
  const json st = status_of(*root[0], 1)["subscribers"];
  EXPECT_EQ(st["refused_by"]["max_subscribers_per_user"], 1);
  EXPECT_EQ(st["refused"], 1);
  EXPECT_EQ(st["max_subscribers_per_user"], 3);
}

}  // namespace
}  // namespace rdma_eventd::subtest
