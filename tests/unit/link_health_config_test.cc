// The configuration of link quality ("link_health", docs/configuration.md): the documented
// defaults, every key read, and errors that name the key and the reason.
#include <gtest/gtest.h>

#include "config/config.h"
#include "config_fixture.h"

namespace rdma_eventd::daemon {
namespace {

TEST(LinkHealthConfig, TheDefaultsAreUfmsRules) {
  const LinkQualityConfig l = config_of("{}").link_health;
  EXPECT_TRUE(l.enabled);
  EXPECT_EQ(l.interval_s, 60u);
  EXPECT_EQ(l.symbol_error, (std::vector<BerWindow>{{1e-14, 720}, {1e-15, 7500}}));
  EXPECT_EQ(l.link_error_recovery, (GrowthRule{"link_error_recovery", 5, 720}));
  EXPECT_EQ(l.transport, std::vector<GrowthRule>{});
  EXPECT_EQ(l.clean_s, 7560u);
  EXPECT_TRUE(l.exclude.empty());
  EXPECT_EQ(l.read_deadline_s, 10u);
  EXPECT_EQ(l.bit_errors_min_speed, LinkSpeed::kHdr);
}

TEST(LinkHealthConfig, EveryKeyIsRead) {
  const LinkQualityConfig l = config_of(R"({"link_health": {
    "enabled": false, "interval_s": 30, "exclude": ["mlx5_4*", "0c42:a103:00f6:5e44"],
    "bit_errors": [{"ber": 1e-13, "window_s": 600}], "bit_errors_min_speed": "edr",
    "read_deadline_s": 5,
    "link_recoveries": {"count": 2, "window_s": 60},
    "transport": [{"counter": "hw_counters/local_ack_timeout_err", "count": 100,
                   "window_s": 300}, {"counter": "port_rcv_errors", "count": 10, "window_s": 60}],
    "clean_s": 3600}})")
                                  .link_health;
  EXPECT_FALSE(l.enabled);
  EXPECT_EQ(l.interval_s, 30u);
  ASSERT_EQ(l.exclude.size(), 2u);
  EXPECT_TRUE(l.exclude[0].matches("mlx5_4", ""));
  EXPECT_TRUE(l.exclude[1].matches("mlx5_0", "0c42:a103:00f6:5e44"));
  EXPECT_EQ(l.symbol_error, (std::vector<BerWindow>{{1e-13, 600}}));
  EXPECT_EQ(l.link_error_recovery, (GrowthRule{"link_error_recovery", 2, 60}));
  EXPECT_EQ(l.transport, (std::vector<GrowthRule>{{"hw_counters/local_ack_timeout_err", 100, 300},
                                                  {"port_rcv_errors", 10, 60}}));
  EXPECT_EQ(l.clean_s, 3600u);
  EXPECT_EQ(l.bit_errors_min_speed, LinkSpeed::kEdr);
  EXPECT_EQ(l.read_deadline_s, 5u);
  // No window at all: no bit error rule.
  EXPECT_TRUE(config_of(R"({"link_health": {"bit_errors": []}})").link_health.symbol_error.empty());
}

TEST(LinkHealthConfig, ErrorsNameTheKeyAndTheReason) {
  EXPECT_EQ(error_of(R"({"link_health": {"interval": 60}})"),
            "test.json: link_health.interval: unknown key (known: enabled, interval_s, "
            "read_deadline_s, exclude, "
            "bit_errors, bit_errors_min_speed, link_recoveries, transport, clean_s)");
  EXPECT_EQ(error_of(R"({"link_health": {"bit_errors_min_speed": "fast"}})"),
            "test.json: link_health.bit_errors_min_speed: a lane speed is needed: sdr, ddr, qdr, "
            "fdr10, fdr, edr, hdr, ndr or xdr");
  EXPECT_EQ(error_of(R"({"link_health": {"read_deadline_s": 0}})")
                .rfind("test.json: link_health.read_deadline_s: ", 0),
            0u);
  EXPECT_EQ(error_of(R"({"link_health": {"interval_s": 0}})"),
            "test.json: link_health.interval_s: must be from 1 to 3600");
  EXPECT_EQ(error_of(R"({"link_health": {"bit_errors": [{"ber": 0.5, "window_s": 60}]}})"),
            "test.json: link_health.bit_errors[0].ber: must be within 1e-18 .. 1e-6");
  EXPECT_EQ(error_of(R"({"link_health": {"bit_errors": [{"window_s": 60}]}})"),
            "test.json: link_health.bit_errors[0].ber: a number is needed (1e-14: one bit in "
            "1e14)");
  EXPECT_EQ(error_of(R"({"link_health": {"transport": [{"count": 1}]}})"),
            "test.json: link_health.transport[0].counter: missing");
  EXPECT_EQ(error_of(R"({"link_health": {"transport": [{"counter": "../../../etc/passwd"}]}})"),
            "test.json: link_health.transport[0].counter: '../../../etc/passwd' is not a counter's "
            "name (a file of counters/, or hw_counters/NAME: letters, digits and '_')");
  EXPECT_EQ(error_of(R"({"link_health": {"link_recoveries": {"counter": "x"}}})"),
            "test.json: link_health.link_recoveries.counter: unknown key (known: count, "
            "window_s)");
  EXPECT_EQ(error_of(R"({"severity": {"link_quality": "error"}})"),
            "test.json: severity.link_quality: link_quality records take the severity of their "
            "change (docs/records.md)");
}

}  // namespace
}  // namespace rdma_eventd::daemon
