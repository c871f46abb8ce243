#include "app/options.h"

#include <gtest/gtest.h>

#include <vector>

namespace rdma_eventd::daemon {
namespace {

std::variant<Options, EarlyExit> parse(std::vector<std::string> args) {
  args.insert(args.begin(), "rdma-eventd");
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  return parse_options(static_cast<int>(args.size()), argv.data());
}

TEST(Options, DefaultsAndEveryFlag) {
  auto r =
      parse({"-c", "/tmp/x.json", "--log-level", "debug", "-f", "--print-records", "--no-journal"});
  ASSERT_TRUE(std::holds_alternative<Options>(r));
  const Options& o = std::get<Options>(r);
  EXPECT_EQ(o.config_path, "/tmp/x.json");
  EXPECT_TRUE(o.config_path_given);
  EXPECT_EQ(o.log_level, "debug");
  EXPECT_TRUE(o.foreground);
  EXPECT_TRUE(o.print_records);
  EXPECT_TRUE(o.no_journal);
  EXPECT_FALSE(o.check_config);
}

TEST(Options, HelpAndVersionExitZero) {
  auto h = parse({"--help"});
  ASSERT_TRUE(std::holds_alternative<EarlyExit>(h));
  EXPECT_EQ(std::get<EarlyExit>(h).code, 0);
  EXPECT_NE(std::get<EarlyExit>(h).text.find("--check-config"), std::string::npos);
  auto v = parse({"-V"});
  ASSERT_TRUE(std::holds_alternative<EarlyExit>(v));
  EXPECT_EQ(std::get<EarlyExit>(v).text.rfind("rdma-eventd ", 0), 0u);
}

TEST(Options, UsageErrorsExit64AndNameTheProblem) {
  auto u = parse({"--frobnicate"});
  ASSERT_TRUE(std::holds_alternative<EarlyExit>(u));
  EXPECT_EQ(std::get<EarlyExit>(u).code, kExitUsage);
  EXPECT_NE(std::get<EarlyExit>(u).text.find("unknown option '--frobnicate'"), std::string::npos);
  auto m = parse({"-c"});
  ASSERT_TRUE(std::holds_alternative<EarlyExit>(m));
  EXPECT_NE(std::get<EarlyExit>(m).text.find("needs a value"), std::string::npos);
  auto extra = parse({"stray"});
  ASSERT_TRUE(std::holds_alternative<EarlyExit>(extra));
  EXPECT_NE(std::get<EarlyExit>(extra).text.find("unexpected argument 'stray'"), std::string::npos);
}

}  // namespace
}  // namespace rdma_eventd::daemon
