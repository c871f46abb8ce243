// The daemon's command line, and which configuration file counts.
#include "app/options.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

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

TEST(SocketOptions, NeitherByDefault) {
  auto r = parse({});
  ASSERT_TRUE(std::holds_alternative<Options>(r));
  EXPECT_FALSE(std::get<Options>(r).socket_path);
  EXPECT_FALSE(std::get<Options>(r).no_socket);
}

TEST(SocketOptions, SocketTakesAPathAndNoSocketDisables) {
  auto r = parse({"--socket", "/tmp/t/e.sock", "--no-socket"});
  ASSERT_TRUE(std::holds_alternative<Options>(r));
  EXPECT_EQ(std::get<Options>(r).socket_path, "/tmp/t/e.sock");
  EXPECT_TRUE(std::get<Options>(r).no_socket);
  auto missing = parse({"--socket"});
  ASSERT_TRUE(std::holds_alternative<EarlyExit>(missing));
  EXPECT_EQ(std::get<EarlyExit>(missing).code, kExitUsage);
  EXPECT_NE(std::get<EarlyExit>(missing).text.find("'--socket' needs a value"), std::string::npos);
}

TEST(SocketOptions, HelpListsThem) {
  auto h = parse({"--help"});
  ASSERT_TRUE(std::holds_alternative<EarlyExit>(h));
  const std::string& text = std::get<EarlyExit>(h).text;
  EXPECT_NE(text.find("--socket PATH"), std::string::npos);
  EXPECT_NE(text.find("--no-socket"), std::string::npos);
}

TEST(ConfigFile, CountsWhenGivenOrWhenTheDefaultExists) {
  // -c names a file: it counts even when missing (then loading it is the error). The default
  // path counts only when there is a file; otherwise the built-in defaults apply.
  char dir[] = "/tmp/rdma-options-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string present = std::string(dir) + "/rdma-eventd.json";
  const std::string absent = std::string(dir) + "/none.json";
  ASSERT_TRUE(::close(::creat(present.c_str(), 0644)) == 0);

  Options given{.config_path = absent, .config_path_given = true};
  EXPECT_EQ(config_file(given), absent);
  ASSERT_TRUE(std::holds_alternative<ConfigError>(load_configuration(given)));
  EXPECT_EQ(std::get<ConfigError>(load_configuration(given)).message(),
            absent + ": cannot read: No such file or directory");

  Options default_absent{.config_path = absent};
  EXPECT_EQ(config_file(default_absent), std::nullopt);
  EXPECT_TRUE(std::holds_alternative<Config>(load_configuration(default_absent)));

  Options default_present{.config_path = present};
  EXPECT_EQ(config_file(default_present), present);
  ::unlink(present.c_str());
  ::rmdir(dir);
}

}  // namespace
}  // namespace rdma_eventd::daemon
