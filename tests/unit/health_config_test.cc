// The configuration of port health ("health") and of the journal budget ("journal.budget").
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "config/config.h"
#include "config_fixture.h"

namespace rdma_eventd::daemon {
namespace {

TEST(HealthConfig, TheDefaultsAreTheDocumentedOnes) {
  const Config c = config_of("{}");
  HealthConfig h;
  h.flap_downs = 3;
  h.flap_window_s = 3600;
  h.flap_quiet_s = 600;
  h.degraded_below_last_healthy = true;
  h.expected = {};
  h.forget_gone_after_s = 3600;
  h.errors[static_cast<size_t>(ErrorSource::kApplication)] = ErrorThreshold{true, 10, 60, 600};
  EXPECT_EQ(c.health, h);
  const JournalBudgetConfig b{true, 2, 200, 100, 2000, 10};
  EXPECT_EQ(c.journal_budget, b);
}

TEST(HealthConfig, EveryHealthKeyIsRead) {
  const Config c = config_of(R"({"health": {
    "flap_downs": 5, "flap_window_s": 600, "flap_quiet_s": 120,
    "degraded_below_last_healthy": false, "forget_gone_after_s": 86400,
    "application_errors": {"count": false, "errors": 4, "window_s": 30, "quiet_s": 900},
    "expected": [{"devices": "mlx5_*", "ports": [1, 2], "width": "4x", "speed": "hdr"},
                 {"devices": "rxe*"}]}})");
  HealthConfig h;
  h.flap_downs = 5;
  h.flap_window_s = 600;
  h.flap_quiet_s = 120;
  h.degraded_below_last_healthy = false;
  h.forget_gone_after_s = 86400;
  h.expected = {{*DevicePattern::parse("mlx5_*", nullptr), {1, 2}, 4, LinkSpeed::kHdr},
                {*DevicePattern::parse("rxe*", nullptr), {}, 0, LinkSpeed::kUnknown}};
  h.errors[static_cast<size_t>(ErrorSource::kApplication)] = ErrorThreshold{false, 4, 30, 900};
  EXPECT_EQ(c.health, h);
}

TEST(HealthConfig, EveryBudgetKeyIsRead) {
  const Config c = config_of(R"({"journal": {"budget": {
    "enabled": false, "port_rate": 5, "port_burst": 50, "host_rate": 200, "host_burst": 4000,
    "summary_interval_s": 30}}})");
  const JournalBudgetConfig b{false, 5, 50, 200, 4000, 30};
  EXPECT_EQ(c.journal_budget, b);
  EXPECT_TRUE(c.journal_enabled);  // the rest of "journal" keeps its defaults
}

TEST(HealthConfig, HealthErrorsNameTheKeyAndTheReason) {
  EXPECT_EQ(error_of(R"({"health": []})"), "test.json: health: expected an object, got an array");
  EXPECT_EQ(error_of(R"({"health": {"flap_down": 3}})"),
            "test.json: health.flap_down: unknown key (known: flap_downs, flap_window_s, "
            "flap_quiet_s, degraded_below_last_healthy, expected, expected_adapters, "
            "forget_gone_after_s, enabled, application_errors, firmware_errors, queue_errors, "
            "devlink_reporters)");
  EXPECT_EQ(error_of(R"({"health": {"flap_downs": 1}})"),
            "test.json: health.flap_downs: must be from 2 to 100");
  EXPECT_EQ(error_of(R"({"health": {"flap_downs": 101}})"),
            "test.json: health.flap_downs: must be from 2 to 100");
  EXPECT_EQ(error_of(R"({"health": {"flap_window_s": 0}})"),
            "test.json: health.flap_window_s: must be from 1 to 604800");
  EXPECT_EQ(error_of(R"({"health": {"flap_quiet_s": 604801}})"),
            "test.json: health.flap_quiet_s: must be from 1 to 604800");
  EXPECT_EQ(error_of(R"({"health": {"flap_quiet_s": "10m"}})"),
            "test.json: health.flap_quiet_s: expected an unsigned integer, got a string");
  EXPECT_EQ(error_of(R"({"health": {"forget_gone_after_s": -1}})"),
            "test.json: health.forget_gone_after_s: expected an unsigned integer, got a number");
  EXPECT_EQ(error_of(R"({"health": {"degraded_below_last_healthy": 1}})"),
            "test.json: health.degraded_below_last_healthy: expected a boolean, got a number");
  EXPECT_EQ(error_of(R"({"health": {"application_errors": true}})"),
            "test.json: health.application_errors: expected an object, got a boolean");
  EXPECT_EQ(error_of(R"({"health": {"application_errors": {"limit": 3}}})"),
            "test.json: health.application_errors.limit: unknown key (known: count, errors, "
            "window_s, quiet_s)");
  EXPECT_EQ(error_of(R"({"health": {"application_errors": {"errors": 0}}})"),
            "test.json: health.application_errors.errors: must be from 1 to 1000");
  EXPECT_EQ(error_of(R"({"health": {"application_errors": {"window_s": 604801}}})"),
            "test.json: health.application_errors.window_s: must be from 1 to 604800");
  EXPECT_EQ(error_of(R"({"health": {"application_errors": {"quiet_s": 0}}})"),
            "test.json: health.application_errors.quiet_s: must be from 1 to 604800");
  EXPECT_EQ(error_of(R"({"health": {"application_errors": {"count": "yes"}}})"),
            "test.json: health.application_errors.count: expected a boolean, got a string");
}

TEST(HealthConfig, ExpectedAdaptersAreNodeGuidsSortedAndEachOnce) {
  EXPECT_EQ(config_of(R"({"health": {"expected_adapters":
              ["0c42:a103:00f6:5e44", "0c42:a103:006d:0b3a"]}})")
                .health.expected_adapters,
            (std::vector<std::string>{"0c42:a103:006d:0b3a", "0c42:a103:00f6:5e44"}));
  EXPECT_EQ(config_of("{}").health.expected_adapters, std::vector<std::string>{});
  EXPECT_EQ(error_of(R"({"health": {"expected_adapters": 8}})"),
            "test.json: health.expected_adapters: expected an array of node GUIDs, got a number");
  const std::string shape =
      "' is not a node GUID as rdma-eventctl inventory shows it (0c42:a103:00f6:5e44)";
  for (const char* bad : {"0c42a10300f65e44", "0C42:A103:00F6:5E44", "0c42:a103:00f6:5e4",
                          "0c42:a103:00f6:5e44:", "0000:0000:0000:0000", "mlx5_0"}) {
    EXPECT_EQ(error_of(std::string(R"({"health": {"expected_adapters": [")") + bad + R"("]}})"),
              std::string("test.json: health.expected_adapters[0]: '") + bad + shape)
        << bad;
  }
  EXPECT_EQ(error_of(R"({"health": {"expected_adapters": [7]}})"),
            "test.json: health.expected_adapters[0]: expected a string, got a number");
  EXPECT_EQ(error_of(R"({"health": {"expected_adapters":
              ["0c42:a103:00f6:5e44", "0c42:a103:00f6:5e44"]}})"),
            "test.json: health.expected_adapters[1]: '0c42:a103:00f6:5e44' is listed twice");
  std::string many = R"({"health": {"expected_adapters": [)";
  for (int i = 0; i < 1025; ++i) {
    char guid[32];
    std::snprintf(guid, sizeof guid, "%s\"0c42:a103:0000:%04x\"", i ? "," : "", i + 1);
    many += guid;
  }
  EXPECT_EQ(error_of(many + "]}}"), "test.json: health.expected_adapters: at most 1024 adapters");
}

TEST(HealthConfig, ExpectationErrorsNameTheEntry) {
  EXPECT_EQ(error_of(R"({"health": {"expected": {}}})"),
            "test.json: health.expected: expected an array of objects, got an object");
  EXPECT_EQ(error_of(R"({"health": {"expected": ["mlx5_*"]}})"),
            "test.json: health.expected[0]: expected an object, got a string");
  EXPECT_EQ(error_of(R"({"health": {"expected": [{"width": "4x"}]}})"),
            "test.json: health.expected[0].devices: missing: a glob on device names");
  EXPECT_EQ(error_of(R"({"health": {"expected": [{"devices": ""}]}})"),
            "test.json: health.expected[0].devices: empty pattern");
  EXPECT_EQ(error_of(R"({"health": {"expected": [{"devices": "a", "rate": 200}]}})"),
            "test.json: health.expected[0].rate: unknown key (known: devices, ports, width, "
            "speed)");
  EXPECT_EQ(error_of(R"({"health": {"expected": [{"devices": "a"}, {"devices": "b",
                                                  "width": "3x"}]}})"),
            "test.json: health.expected[1].width: unknown width '3x' (1x, 2x, 4x, 8x, 12x)");
  EXPECT_EQ(error_of(R"({"health": {"expected": [{"devices": "a", "width": "unknown"}]}})"),
            "test.json: health.expected[0].width: unknown width 'unknown' (1x, 2x, 4x, 8x, 12x)");
  EXPECT_EQ(error_of(R"({"health": {"expected": [{"devices": "a", "speed": "gdr"}]}})"),
            "test.json: health.expected[0].speed: unknown speed 'gdr' (sdr, ddr, qdr, fdr10, "
            "fdr, edr, hdr, ndr, xdr)");
  EXPECT_EQ(error_of(R"({"health": {"expected": [{"devices": "a", "ports": [1, 0]}]}})"),
            "test.json: health.expected[0].ports[1]: must be from 1 to 255");
  EXPECT_EQ(error_of(R"({"health": {"expected": [{"devices": "a", "ports": 1}]}})"),
            "test.json: health.expected[0].ports: expected an array of port numbers, got a "
            "number");
}

TEST(HealthConfig, BudgetErrorsNameTheKeyAndTheReason) {
  EXPECT_EQ(error_of(R"({"journal": {"budget": 5}})"),
            "test.json: journal.budget: expected an object, got a number");
  EXPECT_EQ(error_of(R"({"journal": {"budget": {"rate": 5}}})"),
            "test.json: journal.budget.rate: unknown key (known: enabled, port_rate, port_burst, "
            "host_rate, host_burst, summary_interval_s)");
  EXPECT_EQ(error_of(R"({"journal": {"budget": {"enabled": "no"}}})"),
            "test.json: journal.budget.enabled: expected a boolean, got a string");
  EXPECT_EQ(error_of(R"({"journal": {"budget": {"port_rate": 0}}})"),
            "test.json: journal.budget.port_rate: must be from 1 to 1000000");
  EXPECT_EQ(error_of(R"({"journal": {"budget": {"port_burst": 1.5}}})"),
            "test.json: journal.budget.port_burst: expected an unsigned integer, got a number");
  EXPECT_EQ(error_of(R"({"journal": {"budget": {"host_rate": 1000001}}})"),
            "test.json: journal.budget.host_rate: must be from 1 to 1000000");
  EXPECT_EQ(error_of(R"({"journal": {"budget": {"host_burst": 0}}})"),
            "test.json: journal.budget.host_burst: must be from 1 to 1000000");
  EXPECT_EQ(error_of(R"({"journal": {"budget": {"summary_interval_s": 3601}}})"),
            "test.json: journal.budget.summary_interval_s: must be from 1 to 3600");
  EXPECT_EQ(error_of(R"({"journal": {"identifer": "x"}})"),
            "test.json: journal.identifer: unknown key (known: enabled, identifier, budget)");
}

}  // namespace
}  // namespace rdma_eventd::daemon
