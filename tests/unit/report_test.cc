// Application reports, the pure parts: the report request (parse and write back), the
// app_report record (JSON round trip and text), the reporter allow-list and the cgroup names.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "hub/access_policy.h"
#include "rdma_eventd/protocol.h"
#include "rdma_eventd/record.h"
#include "record_fixture.h"
#include "schema/protocol_json.h"
#include "schema/record_text.h"

namespace rdma_eventd {
namespace {

using nlohmann::json;

std::variant<Request, RequestError> parsed(const std::string& body) {
  return parse_request(R"({"op":"report","id":4,)" + body + "}");
}

RequestError error_of(const std::string& body) {
  auto r = parsed(body);
  EXPECT_TRUE(std::holds_alternative<RequestError>(r)) << body;
  return std::holds_alternative<RequestError>(r) ? std::get<RequestError>(r) : RequestError{};
}

TEST(ReportRequest, EveryKeyByNameOrNumberAndBackToTheSameLine) {
  const auto r =
      parsed(R"("event":"qp_fatal","device":"mlx5_0","port":1,"qp_num":4660,"detail":"rank 3")");
  ASSERT_TRUE(std::holds_alternative<Request>(r));
  const Request& req = std::get<Request>(r);
  EXPECT_EQ(req.op, Op::kReport);
  EXPECT_EQ(req.report, (Report{1, "mlx5_0", 1, 4660, "rank 3"}));
  EXPECT_EQ(request_json(req), R"({"op":"report","id":4,"event":"qp_fatal","device":"mlx5_0",)"
                               R"("port":1,"qp_num":4660,"detail":"rank 3"})");
  const auto by_number = parsed(R"("event":14,"device":"mlx5_1","srq":0)");
  ASSERT_TRUE(std::holds_alternative<Request>(by_number));
  EXPECT_EQ(std::get<Request>(by_number).report, (Report{14, "mlx5_1", 0, 0, ""}));
}

TEST(ReportRequest, OnlyTheFailuresOfObjectsAreReportable) {
  for (const char* name : {"cq_err", "qp_fatal", "qp_req_err", "qp_access_err", "path_mig_err",
                           "srq_err", "wq_fatal"}) {
    const ReportableEvent* e = reportable_event(name);
    ASSERT_NE(e, nullptr) << name;
    EXPECT_EQ(reportable_event(e->type), e);
  }
  // Unaffiliated events (the daemon's own) and the routine affiliated ones.
  for (int type : {4, 5, 6, 8, 9, 10, 11, 12, 13, 15, 16, 17, 18, 20, -1, 255})
    EXPECT_EQ(reportable_event(type), nullptr) << type;
  const RequestError e = error_of(R"("event":"comm_est","device":"mlx5_0")");
  EXPECT_EQ(e.code, ErrorCode::kBadReport);
  EXPECT_EQ(e.message,
            "event: \"comm_est\" is not a reportable affiliated event (cq_err, qp_fatal, "
            "qp_req_err, qp_access_err, path_mig_err, srq_err, wq_fatal)");
  EXPECT_EQ(e.id, "4");
  EXPECT_EQ(error_of(R"("event":9,"device":"mlx5_0")").code, ErrorCode::kBadReport);
  EXPECT_EQ(error_of(R"("event":4096,"device":"mlx5_0")").code, ErrorCode::kBadReport);
}

TEST(ReportRequest, EachMalformedKeyIsNamed) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"("device":"mlx5_0")", "event: missing"},
      {R"("event":true,"device":"mlx5_0")", "event: expected a name or an ibv_event_type number"},
      {R"("event":"qp_fatal")", "device: expected a device name (1 to 64 bytes)"},
      {R"("event":"qp_fatal","device":"")", "device: expected a device name (1 to 64 bytes)"},
      {R"("event":"qp_fatal","device":")" + std::string(65, 'd') + "\"",
       "device: expected a device name (1 to 64 bytes)"},
      {R"("event":"qp_fatal","device":"d","port":0)", "port: expected a port number from 1 to 255"},
      {R"("event":"qp_fatal","device":"d","port":256)",
       "port: expected a port number from 1 to 255"},
      {R"("event":"qp_fatal","device":"d","cq":1)", "cq: not for qp_fatal (its object is qp_num)"},
      {R"("event":"qp_fatal","device":"d","qp_num":4294967296)",
       "qp_num: expected an integer from 0 to 4294967295"},
      {R"("event":"qp_fatal","device":"d","qp_num":"1")",
       "qp_num: expected an integer from 0 to 4294967295"},
      {R"("event":"qp_fatal","device":"d","detail":7)", "detail: expected a string"},
      {R"("event":"qp_fatal","device":"d","detail":"tab\there")",
       "detail: control characters are not allowed"},
      {R"("event":"qp_fatal","device":"d","detail":"del\u007f")",
       "detail: control characters are not allowed"},
      {R"("event":"qp_fatal","device":"d","detail":")" + std::string(257, 'x') + "\"",
       "detail: longer than 256 bytes"},
  };
  for (const auto& [body, message] : cases) {
    const RequestError e = error_of(body);
    EXPECT_EQ(e.code, ErrorCode::kBadRequest) << body;
    EXPECT_EQ(e.message, message) << body;
  }
  // Exactly 256 bytes, UTF-8 included, is fine.
  const std::string most = "é" + std::string(254, 'x');
  const auto ok = parsed(R"("event":"cq_err","device":"d","detail":")" + most + "\"");
  ASSERT_TRUE(std::holds_alternative<Request>(ok));
  EXPECT_EQ(std::get<Request>(ok).report.detail, most);
}

Record app_report() {
  Record r = stamped(
      record_about(EventKind::kAppReport, Severity::kError, "mlx5_0", "0c42:a103:00f6:5e44"), 42,
      "847eff512abbab7d6f447f3d16f8a903", 1764045067513622, "node17");
  r.event_type = 1;
  r.object = "qp";
  r.object_id = 4660;
  r.detail = "job 17 rank 3";
  r.reporter = {40213, 1000, 1000, "report_app", "job17.service", "/system.slice/job17.service"};
  return r;
}

TEST(AppReportRecord, RoundTripsThroughJsonWithEveryKey) {
  const Record r = app_report();
  const std::string line = to_json(r);
  const json j = json::parse(line);
  EXPECT_EQ(j["event"], "app_report");
  EXPECT_EQ(j["reported_event"], "qp_fatal");
  EXPECT_EQ(j["reporter"],
            json::parse(R"({"pid":40213,"uid":1000,"gid":1000,"comm":"report_app",)"
                        R"("unit":"job17.service","cgroup":"/system.slice/job17.service"})"));
  std::string error;
  const auto back = record_from_json(line, &error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(*back, r);
  json missing = j;
  missing["reporter"].erase("comm");
  EXPECT_FALSE(record_from_json(missing.dump(), &error));
}

TEST(AppReportRecord, ItsSentenceSaysWhatAndWho) {
  Record r = app_report();
  EXPECT_EQ(event_text(r, plain_state_text),
            "application reported qp_fatal on QP 4660 (pid 40213 report_app, uid 1000, unit "
            "job17.service): job 17 rank 3");
  r.object_id = -1;
  r.detail.clear();
  r.reporter.unit.clear();
  r.reporter.comm.clear();
  EXPECT_EQ(event_text(r, plain_state_text),
            "application reported qp_fatal (pid 40213 ?, uid 1000)");
  r.port = 2;
  EXPECT_EQ(subject_text(r), "mlx5_0 port 2");
}

TEST(AppReportRecord, FiltersMatchItLikeAnyRecord) {
  const Record r = app_report();
  Filter f;
  f.events = {EventKind::kAppReport};
  EXPECT_TRUE(f.matches(key_of(r)));
  f.events = {EventKind::kDeviceFatal};
  EXPECT_FALSE(f.matches(key_of(r)));
}

}  // namespace

namespace daemon {
namespace {

std::vector<gid_t> groups_4300() {
  return {4300};
}

TEST(ReportPolicy, EmptyListsLetEveryoneReportOtherwiseRootTheListedAndTheirGroups) {
  ReportsConfig open;
  EXPECT_EQ(report_refusal(open, Peer{1, 4242, 4242}, groups_4300), std::nullopt);
  ReportsConfig c;
  c.allow_users = {4243};
  c.allow_groups = {4300};
  EXPECT_EQ(report_refusal(c, Peer{1, 0, 0}, groups_4300), std::nullopt);
  EXPECT_EQ(report_refusal(c, Peer{1, 4243, 4243}, groups_4300), std::nullopt);
  EXPECT_EQ(report_refusal(c, Peer{1, 4244, 4300}, [] { return std::vector<gid_t>{}; }),
            std::nullopt);
  EXPECT_EQ(report_refusal(c, Peer{1, 4244, 4244}, groups_4300), std::nullopt);
  EXPECT_EQ(report_refusal(c, Peer{1, 4242, 4242}, [] { return std::vector<gid_t>{4242}; }),
            "uid 4242 (gid 4242) may not report: not in reports.allow_users and in none of "
            "reports.allow_groups");
}

TEST(ReportsConfigKeys, DefaultsNamesAndBoundsAreChecked) {
  const auto defaults = parse_config("{}", "t.json");
  ASSERT_TRUE(std::holds_alternative<Config>(defaults));
  EXPECT_EQ(std::get<Config>(defaults).reports, ReportsConfig{});
  EXPECT_EQ(ReportsConfig{}.max_per_second, 10u);
  const auto c = parse_config(
      R"({"reports": {"allow_users": ["root", 4243], "allow_groups": [4300], "max_per_second": 3}})",
      "t.json");
  ASSERT_TRUE(std::holds_alternative<Config>(c)) << std::get<ConfigError>(c).message();
  EXPECT_EQ(std::get<Config>(c).reports, (ReportsConfig{{0, 4243}, {4300}, 3}));
  for (const auto& [text, message] : std::vector<std::pair<std::string, std::string>>{
           {R"({"reports": {"max_per_second": 0}})", "t.json: reports.max_per_second: "},
           {R"({"reports": {"max_per_second": 10001}})", "t.json: reports.max_per_second: "},
           {R"({"reports": {"allow_users": ["no-such-user-here"]}})",
            "t.json: reports.allow_users[0]: no user named 'no-such-user-here'"},
           {R"({"reports": {"rate": 1}})", "t.json: reports.rate: unknown key"},
           {R"({"reports": []})", "t.json: reports: "}}) {
    const auto bad = parse_config(text, "t.json");
    ASSERT_TRUE(std::holds_alternative<ConfigError>(bad)) << text;
    EXPECT_EQ(std::get<ConfigError>(bad).message().rfind(message, 0), 0u)
        << text << ": " << std::get<ConfigError>(bad).message();
  }
}

TEST(ReportsConfigKeys, TheReportersLimitsAreReadAndBounded) {
  EXPECT_EQ(ReportsConfig{}.max_reporters, 4096u);
  EXPECT_EQ(ReportsConfig{}.max_reporters_per_user, 1024u);
  const auto c = parse_config(
      R"({"reports": {"max_reporters": 300, "max_reporters_per_user": 200}})", "t.json");
  ASSERT_TRUE(std::holds_alternative<Config>(c)) << std::get<ConfigError>(c).message();
  EXPECT_EQ(std::get<Config>(c).reports.max_reporters, 300u);
  EXPECT_EQ(std::get<Config>(c).reports.max_reporters_per_user, 200u);
  for (const auto& [text, message] : std::vector<std::pair<std::string, std::string>>{
           {R"({"reports": {"max_reporters": 0}})",
            "t.json: reports.max_reporters: must be from 1 to 65536"},
           {R"({"reports": {"max_reporters_per_user": 65537}})",
            "t.json: reports.max_reporters_per_user: must be from 1 to 65536"},
           {R"({"reports": {"max_reporters": "many"}})", "t.json: reports.max_reporters: "}}) {
    const auto bad = parse_config(text, "t.json");
    ASSERT_TRUE(std::holds_alternative<ConfigError>(bad)) << text;
    EXPECT_EQ(std::get<ConfigError>(bad).message().rfind(message, 0), 0u)
        << text << ": " << std::get<ConfigError>(bad).message();
  }
}

TEST(ReportPolicy, TheUnitIsTheLastServiceOrScopeOfTheCgroupV2Path) {
  EXPECT_EQ(cgroup_path("0::/system.slice/job17.service\n"), "/system.slice/job17.service");
  EXPECT_EQ(cgroup_path("12:pids:/x\n1:name=systemd:/user.slice\n0::/user.slice/a.scope\n"),
            "/user.slice/a.scope");
  EXPECT_EQ(cgroup_path("12:pids:/x\n"), "");
  EXPECT_EQ(cgroup_path(""), "");
  EXPECT_EQ(unit_of_cgroup("/system.slice/job17.service"), "job17.service");
  EXPECT_EQ(unit_of_cgroup("/system.slice/job17.service/payload"), "job17.service");
  EXPECT_EQ(unit_of_cgroup("/user.slice/user-1000.slice/session-3.scope"), "session-3.scope");
  EXPECT_EQ(unit_of_cgroup("/user.slice/user-1000.slice"), "");
  EXPECT_EQ(unit_of_cgroup("/"), "");
  EXPECT_EQ(unit_of_cgroup("/.service"), "");
}

}  // namespace
}  // namespace daemon
}  // namespace rdma_eventd
