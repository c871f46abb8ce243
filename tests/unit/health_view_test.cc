// The one reading of the daemon's health reply (schema/health_view.h) that rdma-eventctl health
// and rdma-eventd-slurm share: the daemon's order of badness, what counts, what is unknown,
// bounded lists and durations.
#include "schema/health_view.h"

#include <gtest/gtest.h>

#include "core/port_health_types.h"

namespace health_view_test {

using rdma_eventd::bounded_list;
using rdma_eventd::HealthReply;
using rdma_eventd::HealthView;
using rdma_eventd::short_duration;
using rdma_eventd::view_health;

HealthReply::Port view_port(const char* device, uint32_t n, const char* health,
                            bool counted = true) {
  HealthReply::Port p;
  p.device = device;
  p.port = n;
  p.health = health;
  p.counted = counted;
  return p;
}

TEST(HealthView, RanksVerdictsInTheDaemonsOwnOrderOfBadness) {
  using rdma_eventd::daemon::PortHealth;
  for (int i = 0; i < rdma_eventd::daemon::kPortHealthCount; ++i) {
    const std::string_view name = rdma_eventd::daemon::health_name(static_cast<PortHealth>(i));
    EXPECT_EQ(rdma_eventd::kVerdictsByBadness.at(i), name);
    EXPECT_EQ(rdma_eventd::verdict_rank(name), i);
  }
  EXPECT_EQ(rdma_eventd::kVerdictsByBadness.size(),
            static_cast<size_t>(rdma_eventd::daemon::kPortHealthCount));
  // A verdict a newer daemon may add ranks worst: it is shown first, not hidden.
  EXPECT_GT(rdma_eventd::verdict_rank("melted"), rdma_eventd::verdict_rank("fatal"));
}

TEST(HealthView, BadPortsInServiceWorstFirstThenByPort) {
  HealthReply h;
  h.enabled = true;
  h.ports = {view_port("mlx5_0", 1, "flapping"), view_port("mlx5_0", 2, "down", false),
             view_port("mlx5_1", 2, "fatal"),    view_port("mlx5_1", 1, "fatal"),
             view_port("mlx5_2", 1, "gone"),     view_port("mlx5_3", 1, "healthy"),
             view_port("mlx5_4", 1, "degraded")};
  const HealthView v = view_health(h);
  EXPECT_EQ(v.judgement, HealthView::Judgement::kUnhealthy);
  EXPECT_EQ(v.counted, 6u);
  std::vector<std::string> names;
  for (const auto* p : v.bad)
    names.push_back(rdma_eventd::port_name(*p) + " " + p->health);
  EXPECT_EQ(names, (std::vector<std::string>{"mlx5_1/1 fatal", "mlx5_1/2 fatal", "mlx5_2/1 gone",
                                             "mlx5_0/1 flapping", "mlx5_4/1 degraded"}));
}

TEST(HealthView, NothingToJudgeIsUnknownNeverHealthy) {
  HealthReply off;
  EXPECT_EQ(view_health(off).judgement, HealthView::Judgement::kUnknown);
  EXPECT_EQ(view_health(off).unknown_why, "port health is off in rdma-eventd (health.enabled)");
  HealthReply none;
  none.enabled = true;
  none.ports = {view_port("mlx5_0", 1, "down", false)};
  EXPECT_EQ(view_health(none).judgement, HealthView::Judgement::kUnknown);
  EXPECT_EQ(view_health(none).unknown_why, "no RDMA port in service");
  none.ports.clear();
  EXPECT_EQ(view_health(none).judgement, HealthView::Judgement::kUnknown);
  none.ports = {view_port("mlx5_0", 1, "healthy"), view_port("mlx5_0", 2, "down", false)};
  EXPECT_EQ(view_health(none).judgement, HealthView::Judgement::kHealthy);
}

TEST(HealthView, BoundedListKeepsRoomForTheCountLeftOut) {
  EXPECT_EQ(bounded_list("lead:", {"a", "b"}, 80), "lead: a, b");
  EXPECT_EQ(bounded_list("lead:", {}, 80), "lead:");
  // "lead: aaaa +2 more" is 18 bytes; "lead: aaaa, bbbb +1 more" would be 24.
  EXPECT_EQ(bounded_list("lead:", {"aaaa", "bbbb", "cccc"}, 20), "lead: aaaa +2 more");
  EXPECT_EQ(bounded_list("lead:", {"aaaa", "bbbb", "cccc"}, 22), "lead: aaaa, bbbb, cccc");
  EXPECT_EQ(bounded_list("lead:", {"aaaaaaaaaaaaaaaaaaaa"}, 10), "lead: +1 more");
  for (size_t max = 10; max < 60; ++max) {
    const std::string s = bounded_list("x:", std::vector<std::string>(9, "mlx5_0/1 down"), max);
    EXPECT_LE(s.size(), std::max<size_t>(max, std::string("x: +9 more").size())) << s;
  }
}

TEST(HealthView, ShortDurations) {
  EXPECT_EQ(short_duration(3600), "1h");
  EXPECT_EQ(short_duration(7200), "2h");
  EXPECT_EQ(short_duration(600), "10m");
  EXPECT_EQ(short_duration(90), "90s");
  EXPECT_EQ(short_duration(0), "0s");
}

}  // namespace health_view_test
