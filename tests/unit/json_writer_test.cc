#include "schema/json_writer.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace rdma_eventd {
namespace {

TEST(JsonWriter, NestedObjectsAndArraysAreWellFormed) {
  std::string out;
  JsonWriter w(out);
  w.begin_object();
  w.field("a", 1);
  w.key("list");
  w.begin_array();
  w.value(uint64_t{2});
  w.begin_object();
  w.field("x", true);
  w.end_object();
  w.begin_array();
  w.end_array();
  w.end_array();
  w.key("empty");
  w.begin_object();
  w.end_object();
  w.field("d", 2.5);
  w.key("n");
  w.null();
  w.end_object();
  EXPECT_EQ(out, R"({"a":1,"list":[2,{"x":true},[]],"empty":{},"d":2.5,"n":null})");
}

TEST(JsonWriter, EscapesControlCharactersAndQuotes) {
  std::string out;
  append_json_string(out, std::string("a\"b\\c\n\t\x01", 8));
  EXPECT_EQ(out, R"("a\"b\\c\n\t\u0001")");
}

TEST(JsonWriter, InvalidUtf8BecomesReplacementCharacterAndStaysValidJson) {
  std::string out;
  append_json_string(out, "ok \xC3\xA9 bad \xFF\xC3 end");
  auto parsed = nlohmann::json::parse(out);  // throws on invalid UTF-8
  EXPECT_EQ(parsed.get<std::string>(), "ok \xC3\xA9 bad \xEF\xBF\xBD\xEF\xBF\xBD end");
}

TEST(JsonWriter, RejectsOverlongAndSurrogateEncodings) {
  std::string out;
  append_json_string(out, "\xC0\xAF \xED\xA0\x80");
  EXPECT_NO_THROW(nlohmann::json::parse(out));
  EXPECT_EQ(out.find("\xC0"), std::string::npos);
}

}  // namespace
}  // namespace rdma_eventd
