#include "config/config.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "config_fixture.h"

namespace rdma_eventd::daemon {
namespace {

std::vector<DevicePattern> patterns(std::initializer_list<std::string_view> texts) {
  std::vector<DevicePattern> out;
  for (auto t : texts)
    out.push_back(*DevicePattern::parse(t, nullptr));
  return out;
}

TEST(Config, TheShippedDefaultFileIsValidAndMatchesTheBuiltInDefaults) {
  ConfigResult r = load_config(std::string(RDMA_EVENTD_SOURCE_DIR) + "/config/rdma-eventd.json");
  ASSERT_TRUE(std::holds_alternative<Config>(r)) << std::get<ConfigError>(r).message();
  EXPECT_EQ(std::get<Config>(r), Config{});
}

// The shipped file is where an operator looks up what can be changed: it lists the severity of
// every event whose severity is configurable, so that a new event kind cannot be left out.
TEST(Config, TheShippedDefaultFileListsEveryConfigurableSeverity) {
  std::ifstream in(std::string(RDMA_EVENTD_SOURCE_DIR) + "/config/rdma-eventd.json");
  const nlohmann::json severity = nlohmann::json::parse(in).at("severity");
  std::vector<std::string> missing;
  for (int k = 0; k < kEventKindCount; ++k) {
    const auto kind = static_cast<EventKind>(k);
    // These take their verdict's or their change's severity.
    if (kind == EventKind::kPortHealth || kind == EventKind::kLinkQuality) continue;
    if (!severity.contains(std::string(event_name(kind)))) missing.emplace_back(event_name(kind));
  }
  EXPECT_EQ(missing, std::vector<std::string>{});
  EXPECT_FALSE(severity.contains("port_health"));
  EXPECT_FALSE(severity.contains("link_quality"));
}

TEST(Config, AnEmptyObjectMeansDefaults) {
  EXPECT_EQ(config_of("{}"), Config{});
}

TEST(Config, EveryKeyIsRead) {
  const Config c = config_of(R"({
    "log_level": "debug",
    "devices": {"include": ["mlx5_*"], "exclude": ["mlx5_1", "0x248a070300a1b2c1"]},
    "severity": {"gid_change": "warning"},
    "journal": {"enabled": false, "identifier": "rdma-test"}
  })");
  EXPECT_EQ(c.log_level, "debug");
  EXPECT_EQ(c.devices.include(), patterns({"mlx5_*"}));
  EXPECT_EQ(c.devices.exclude(), patterns({"mlx5_1", "0x248a070300a1b2c1"}));
  EXPECT_EQ(c.severities[static_cast<size_t>(EventKind::kGidChange)], Severity::kWarning);
  EXPECT_EQ(c.severities[static_cast<size_t>(EventKind::kPortErr)], Severity::kError);
  EXPECT_FALSE(c.journal_enabled);
  EXPECT_EQ(c.journal_identifier, "rdma-test");
}

TEST(Config, ErrorsNameTheFileTheKeyAndTheReason) {
  EXPECT_EQ(config_error(R"({"log_levle": "info"})").message(),
            "test.json: log_levle: unknown key (known: log_level, devices, severity, journal, "
            "socket, health, reports, link_health, devlink_health)");
  EXPECT_EQ(config_error(R"({"devices": {"include": "mlx5_0"}})").message(),
            "test.json: devices.include: expected an array of strings, got a string");
  EXPECT_EQ(config_error(R"({"devices": {"exclude": ["ok", 3]}})").message(),
            "test.json: devices.exclude[1]: expected a string, got a number");
  EXPECT_EQ(config_error(R"({"devices": {"include": ["mlx5_*", ""]}})").message(),
            "test.json: devices.include[1]: empty pattern");
  EXPECT_EQ(config_error(R"({"severity": {"port_down": "error"}})").message(),
            "test.json: severity.port_down: unknown event name (see docs/records.md for the list)");
  EXPECT_EQ(config_error(R"({"severity": {"port_err": "loud"}})").message(),
            "test.json: severity.port_err: unknown severity 'loud' (debug, info, notice, warning, "
            "error, critical)");
  EXPECT_EQ(config_error(R"({"log_level": "chatty"})").message(),
            "test.json: log_level: unknown level 'chatty' (trace, debug, info, warning, error, "
            "critical, off)");
  EXPECT_EQ(config_error(R"({"journal": {"enabled": "yes"}})").message(),
            "test.json: journal.enabled: expected a boolean, got a string");
  EXPECT_EQ(config_error("[]").message(),
            "test.json: expected a JSON object at the top level, got an array");
}

TEST(Config, TheSocketSectionIsRead) {
  const Config c = config_of(R"({"socket": {
    "enabled": false, "path": "/run/x/e.sock", "mode": "0600", "group": "rdma",
    "max_subscribers": 10, "max_queued_bytes": 65536, "max_request_bytes": 512,
    "ring_records": 0}})");
  const SocketConfig want{false, "/run/x/e.sock", 0600, "rdma", 10, 65536, 512, 0};
  EXPECT_EQ(c.socket, want);
  EXPECT_EQ(config_of("{}").socket, SocketConfig{});
}

TEST(Config, SocketErrorsNameTheKey) {
  EXPECT_EQ(config_error(R"({"socket": {"path": "run/e.sock"}})").message(),
            "test.json: socket.path: must be an absolute path");
  EXPECT_EQ(config_error(R"({"socket": {"path": "/)" + std::string(120, 'x') + R"("}})").message(),
            "test.json: socket.path: longer than 107 bytes, the limit of a Unix socket address");
  EXPECT_EQ(config_error(R"({"socket": {"mode": "0998"}})").message(),
            "test.json: socket.mode: '0998' is not a permission mode like \"0660\"");
  EXPECT_EQ(config_error(R"({"socket": {"mode": 660}})").message(),
            "test.json: socket.mode: expected a string of octal digits, got a number");
  EXPECT_EQ(config_error(R"({"socket": {"max_subscribers": 0}})").message(),
            "test.json: socket.max_subscribers: must be from 1 to 65536");
  EXPECT_EQ(config_error(R"({"socket": {"max_queued_bytes": -5}})").message(),
            "test.json: socket.max_queued_bytes: expected an unsigned integer, got a number");
  // "-0" is 0, as it reads back when the value is written out again.
  EXPECT_EQ(config_error(R"({"socket": {"max_subscribers": -0}})").message(),
            "test.json: socket.max_subscribers: must be from 1 to 65536");
  EXPECT_EQ(std::get<Config>(parse_config(R"({"socket": {"ring_records": -0}})", "test.json"))
                .socket.ring_records,
            0u);
  EXPECT_EQ(config_error(R"({"socket": {"max_request_bytes": 100}})").message(),
            "test.json: socket.max_request_bytes: must be from 256 to 1048576");
  EXPECT_EQ(config_error(R"({"socket": {"ring": 5}})").message(),
            "test.json: socket.ring: unknown key (known: enabled, path, mode, group, "
            "max_subscribers, max_queued_bytes, max_request_bytes, ring_records, allow_users, "
            "allow_groups, max_subscribers_per_user, max_filters, max_requests_per_second)");
}

TEST(Config, AllowListsTakeNamesAndNumericIdsAndResolveTheNames) {
  // nobody/nogroup and root exist on every Debian system; numbers need no passwd entry.
  const Config c = config_of(R"({"socket": {
    "allow_users": ["nobody", 4242, "root"], "allow_groups": [4343, "nogroup"]}})");
  EXPECT_EQ(c.socket.allow_users, (std::vector<uint32_t>{65534, 4242, 0}));
  EXPECT_EQ(c.socket.allow_groups, (std::vector<uint32_t>{4343, 65534}));
  EXPECT_TRUE(SocketConfig{}.allow_users.empty());
  EXPECT_TRUE(SocketConfig{}.allow_groups.empty());
}

TEST(Config, AllowListErrorsNameTheKeyAndTheName) {
  EXPECT_EQ(config_error(R"({"socket": {"allow_users": ["nobody", "no-such-user-x"]}})").message(),
            "test.json: socket.allow_users[1]: no user named 'no-such-user-x'");
  EXPECT_EQ(config_error(R"({"socket": {"allow_groups": ["no-such-group-x"]}})").message(),
            "test.json: socket.allow_groups[0]: no group named 'no-such-group-x'");
  EXPECT_EQ(config_error(R"({"socket": {"allow_users": [-1]}})").message(),
            "test.json: socket.allow_users[0]: a numeric id is an integer from 0 to 4294967294");
  EXPECT_EQ(config_error(R"({"socket": {"allow_users": [4294967295]}})").message(),
            "test.json: socket.allow_users[0]: a numeric id is an integer from 0 to 4294967294");
  EXPECT_EQ(config_error(R"({"socket": {"allow_groups": [true]}})").message(),
            "test.json: socket.allow_groups[0]: expected a name or a numeric id, got a boolean");
  EXPECT_EQ(config_error(R"({"socket": {"allow_groups": [""]}})").message(),
            "test.json: socket.allow_groups[0]: empty name");
  EXPECT_EQ(config_error(R"({"socket": {"allow_users": "nobody"}})").message(),
            "test.json: socket.allow_users: expected an array of names and numeric ids, got a "
            "string");
}

TEST(Config, TheNewLimitsAreReadAndBounded) {
  const Config c = config_of(R"({"socket": {"max_subscribers_per_user": 3, "max_filters": 8,
                                            "max_requests_per_second": 20}})");
  EXPECT_EQ(c.socket.max_subscribers_per_user, 3u);
  EXPECT_EQ(c.socket.max_filters, 8u);
  EXPECT_EQ(c.socket.max_requests_per_second, 20u);
  const SocketConfig defaults;
  EXPECT_EQ(defaults.max_subscribers_per_user, 128u);
  EXPECT_EQ(defaults.max_filters, 256u);
  EXPECT_EQ(defaults.max_requests_per_second, 100u);
  EXPECT_EQ(config_error(R"({"socket": {"max_subscribers_per_user": 0}})").message(),
            "test.json: socket.max_subscribers_per_user: must be from 1 to 65536");
  EXPECT_EQ(config_error(R"({"socket": {"max_filters": 65537}})").message(),
            "test.json: socket.max_filters: must be from 1 to 65536");
  EXPECT_EQ(config_error(R"({"socket": {"max_requests_per_second": 0}})").message(),
            "test.json: socket.max_requests_per_second: must be from 1 to 1000000");
}

TEST(Config, InvalidJsonSaysWhere) {
  const ConfigError e = config_error("{\n  \"log_level\": \"info\",\n}");
  EXPECT_EQ(e.key, "");
  EXPECT_NE(e.reason.find("invalid JSON: parse error at line 3"), std::string::npos) << e.reason;
}

TEST(Config, AMissingFileIsAnErrorNamingIt) {
  ConfigResult r = load_config("/nonexistent/rdma-eventd.json");
  ASSERT_TRUE(std::holds_alternative<ConfigError>(r));
  EXPECT_EQ(std::get<ConfigError>(r).message(),
            "/nonexistent/rdma-eventd.json: cannot read: No such file or directory");
}

TEST(Config, ADirectoryIsNotAConfigFile) {
  ConfigResult r = load_config("/tmp");
  ASSERT_TRUE(std::holds_alternative<ConfigError>(r));
  EXPECT_EQ(std::get<ConfigError>(r).message(), "/tmp: cannot read: Is a directory");
}

TEST(DeviceFilter, IncludeThenExcludeByNameGlobOrGuid) {
  const DeviceFilter f(patterns({"mlx5_*", "0x1111222233334444"}),
                       patterns({"mlx5_1", "248a:0703:00a1:b2c9"}));
  EXPECT_TRUE(f.selects("mlx5_0", 0x248a070300a1b2c0ull));
  EXPECT_FALSE(f.selects("mlx5_1", 0x248a070300a1b2c1ull));  // excluded by name
  EXPECT_FALSE(f.selects("mlx5_2", 0x248a070300a1b2c9ull));  // excluded by GUID
  EXPECT_FALSE(f.selects("rxe0", 0x5555ull));                // not included
  EXPECT_TRUE(f.selects("rxe0", 0x1111222233334444ull));     // included by GUID
}

TEST(DeviceFilter, AnEmptyIncludeListIncludesEverything) {
  const DeviceFilter f({}, patterns({"mlx4_*"}));
  EXPECT_TRUE(f.selects("mlx5_0", 1));
  EXPECT_FALSE(f.selects("mlx4_0", 2));
}

TEST(DeviceFilter, TheDefaultSelectsEveryDevice) {
  EXPECT_EQ(DeviceFilter().include(), patterns({"*"}));
  EXPECT_TRUE(DeviceFilter().exclude().empty());
  EXPECT_TRUE(DeviceFilter().selects("anything", 0));
}

TEST(DeviceFilter, PatternsReadAsASubscribeFiltersDevices) {
  // Only the two GUID forms of 18 and 19 characters name a GUID; a GUID-shaped text that is not
  // one, and the bare 16 digits, are names (globs), as in a subscribe filter. A backslash
  // escapes as in fnmatch(3).
  const DeviceFilter f(patterns({"0X248A070300A1B2C0", "248a:0703:00a1:b2cz", "1111222233334444",
                                 "mlx\\5_9", "roce[0-3]"}),
                       {});
  EXPECT_TRUE(f.selects("any", 0x248a070300a1b2c0ull));
  EXPECT_TRUE(f.selects("248a:0703:00a1:b2cz", 1));
  EXPECT_FALSE(f.selects("other", 0x248a070300a1b2c1ull));
  EXPECT_TRUE(f.selects("1111222233334444", 2));
  EXPECT_FALSE(f.selects("x", 0x1111222233334444ull));
  EXPECT_TRUE(f.selects("mlx5_9", 3));
  EXPECT_FALSE(f.selects("mlx\\5_9", 3));
  EXPECT_TRUE(f.selects("roce2", 4));
  EXPECT_FALSE(f.selects("roce4", 4));
}

}  // namespace
}  // namespace rdma_eventd::daemon
