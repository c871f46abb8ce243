// rdma-eventctl's command-line parser: one option table per command, the options every command
// has, and GNU getopt's forms (--name=value, -lVALUE, bundled letters, options after arguments).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli.h"

namespace rdma_eventctl {
namespace {

// Parses `args` (after the command name) against a table like wait's: -t/--timeout VALUE,
// -q/--quiet. What came out, as one line, or the usage error.
struct Parsed {
  std::string text;  // "args=a,b timeout=5s quiet socket=/x", or "usage: ..."
};

Parsed parse(std::vector<std::string> args, Arguments order = Arguments::kAnywhere) {
  args.insert(args.begin(), "wait");
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  Global g{.socket = "/default"};
  std::string timeout = "none";
  bool quiet = false;
  try {
    const auto rest =
        parse_command_line(static_cast<int>(args.size()), argv.data(), "HELP TEXT\n", g,
                           {{"timeout", 't', true, [&](const char* v) { timeout = v; }},
                            flag_option("quiet", quiet, 'q')},
                           order);
    if (!rest) return {"ended"};
    std::string text = "args=";
    for (size_t i = 0; i < rest->size(); ++i)
      text += (i ? "," : "") + std::string((*rest)[i]);
    return {text + " timeout=" + timeout + (quiet ? " quiet" : "") + " socket=" + g.socket};
  } catch (const UsageError& e) {
    return {"usage: " + e.message};
  }
}

TEST(EventctlCommandLine, OptionsAndArgumentsInAnyOrderInEveryForm) {
  EXPECT_EQ(parse({"mlx5_0/1", "-t", "5s", "active", "--quiet"}).text,
            "args=mlx5_0/1,active timeout=5s quiet socket=/default");
  EXPECT_EQ(parse({"--timeout=30s", "a", "b"}).text, "args=a,b timeout=30s socket=/default");
  EXPECT_EQ(parse({"-t500ms", "a"}).text, "args=a timeout=500ms socket=/default");
  EXPECT_EQ(parse({"-qt", "1m", "a"}).text, "args=a timeout=1m quiet socket=/default");
  EXPECT_EQ(parse({"a", "--socket", "/run/x.sock"}).text, "args=a timeout=none socket=/run/x.sock");
  EXPECT_EQ(parse({"--", "-t"}).text, "args=-t timeout=none socket=/default");
}

TEST(EventctlCommandLine, UsageErrorsNameTheOption) {
  EXPECT_EQ(parse({"a", "-t"}).text, "usage: option '-t' needs a value");
  EXPECT_EQ(parse({"a", "--timeout"}).text, "usage: option '--timeout' needs a value");
  EXPECT_EQ(parse({"--nope"}).text, "usage: unknown option '--nope'");
  EXPECT_EQ(parse({"--socket"}).text, "usage: option '--socket' needs a value");
}

TEST(EventctlCommandLine, HelpPrintsTheCommandsTextAndEndsIt) {
  testing::internal::CaptureStdout();
  const Parsed p = parse({"a", "-h", "--nope"});
  EXPECT_EQ(testing::internal::GetCapturedStdout(), "HELP TEXT\n");
  EXPECT_EQ(p.text, "ended");
}

TEST(EventctlCommandLine, CommandFirstLeavesTheCommandsOptionsToIt) {
  EXPECT_EQ(parse({"--socket", "/s", "monitor", "-q", "--json"}, Arguments::kCommandFirst).text,
            "args=monitor,-q,--json timeout=none socket=/s");
}

TEST(EventctlCommandLine, ColorTakesAutoAlwaysOrNever) {
  ColorWhen when = ColorWhen::kAuto;
  const OptionSpec color = color_option(when);
  color.apply("never");
  EXPECT_EQ(when, ColorWhen::kNever);
  try {
    color.apply("sometimes");
    ADD_FAILURE() << "accepted 'sometimes'";
  } catch (const UsageError& e) {
    EXPECT_EQ(e.message, "--color: auto, always or never, not 'sometimes'");
  }
}

}  // namespace
}  // namespace rdma_eventctl
