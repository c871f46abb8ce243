// The daemon's command-line options for the subscriber socket.
#include <gtest/gtest.h>

#include <vector>

#include "app/options.h"

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

}  // namespace
}  // namespace rdma_eventd::daemon
