// Inputs the fuzz targets (tests/fuzz) found mishandled, kept as plain tests so that the regular
// suite guards them too. Each reproducer is also in the fuzz corpus.
#include <gtest/gtest.h>

#include <string>
#include <variant>

#include "config/config.h"
#include "rdma_eventd/protocol.h"
#include "schema/protocol_json.h"

namespace rdma_eventd {
namespace {

// A number beyond the range of a double is valid JSON syntax that nlohmann refuses with
// out_of_range, not parse_error: it escaped the parsers' handlers, so one request line ended the
// daemon (the exception stopped the loop) and one bad configuration aborted it instead of exiting
// 78 with a message.
TEST(HostileInput, ARequestWithAHugeNumberIsInvalidJsonNotAnException) {
  for (const char* line : {"42E642E6", R"({"op":"since","seq":1e400})", R"({"id":-1e999})"}) {
    auto r = parse_request(line);
    ASSERT_TRUE(std::holds_alternative<RequestError>(r)) << line;
    const RequestError& e = std::get<RequestError>(r);
    EXPECT_EQ(e.code, ErrorCode::kInvalidJson) << line;
    EXPECT_EQ(e.message.rfind("invalid JSON: number overflow parsing '", 0), 0u) << e.message;
  }
}

TEST(HostileInput, AConfigurationWithAHugeNumberIsAConfigError) {
  auto r = daemon::parse_config(R"({"socket": {"ring_records": 1e400}})", "test.json");
  ASSERT_TRUE(std::holds_alternative<daemon::ConfigError>(r));
  const auto& e = std::get<daemon::ConfigError>(r);
  EXPECT_EQ(e.key, "");
  EXPECT_EQ(e.message(), "test.json: invalid JSON: number overflow parsing '1e400'");
}

// An id is a number or a string. Any other value was kept as its JSON text, written by a
// recursion as deep as the value nests: a line of '[' overflowed the client's stack.
TEST(HostileInput, ALineWithADeeplyNestedIdDoesNotOverflowTheClientsStack) {
  const size_t depth = 1'000'000;
  const std::string line = R"({"type":"reply","op":"ping","id":)" + std::string(depth, '[') +
                           std::string(depth, ']') + R"(,"seq":1})";
  std::string why;
  auto parsed = parse_line(line, &why);
  ASSERT_TRUE(parsed) << why;
  ASSERT_NE(parsed->reply(), nullptr);
  EXPECT_EQ(parsed->reply()->id, "");
  EXPECT_EQ(parsed->reply()->seq, 1u);
}

}  // namespace
}  // namespace rdma_eventd
