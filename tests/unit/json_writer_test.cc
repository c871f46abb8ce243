#include "schema/json_writer.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

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

// JSON's escaping, one byte at a time, for ASCII input (what the word-at-a-time scan decides on).
std::string escaped_ascii(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\b') {
      out += "\\b";
    } else if (c == '\f') {
      out += "\\f";
    } else if (u < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + '"';
}

TEST(JsonWriter, EverySpecialByteIsEscapedAtEveryPositionAndItsNeighboursAreNot) {
  // Strings are scanned in words of 4, 8 and 16 bytes, the last overlapping the one before:
  // each byte that needs an escape, and each byte next to one in value, at every position of
  // strings of 1 to 40 bytes among plain letters.
  std::string bytes;
  for (int c = 0; c < 0x20; ++c)
    bytes += static_cast<char>(c);
  bytes += " !\"#[\\]\x7f";
  for (size_t len = 1; len <= 40; ++len) {
    for (size_t at = 0; at < len; ++at) {
      for (const char c : bytes) {
        std::string s(len, 'a');
        s[at] = c;
        std::string out;
        append_json_string(out, s);
        ASSERT_EQ(out, escaped_ascii(s)) << "length " << len << ", byte " << int(c) << " at " << at;
      }
    }
  }
  // Bytes from 0x80 on start UTF-8, checked and kept, or replaced when invalid.
  for (size_t len = 1; len <= 40; ++len) {
    for (size_t at = 0; at < len; ++at) {
      std::string s(len, 'a');
      s.replace(at, 1, "\xC3\xA9");
      std::string out;
      append_json_string(out, s);
      EXPECT_EQ(out, '"' + s + '"');
      s = std::string(len, 'a');
      s[at] = '\xFF';
      out.clear();
      append_json_string(out, s);
      EXPECT_EQ(nlohmann::json::parse(out).get<std::string>(),
                std::string(at, 'a') + "\xEF\xBF\xBD" + std::string(len - 1 - at, 'a'));
    }
  }
}

TEST(JsonWriter, WritingThroughAPointerGivesTheAppendedBytesWithinTheBound) {
  // write_json_string is what records use: the same bytes as append_json_string, for plain,
  // escaped, UTF-8 and invalid text, and never more than json_string_bound says.
  const std::string cases[] = {"",
                               "mlx5_0",
                               "248a:0703:00a1:b2c0",
                               std::string("a\"b\\c\n\t\x01", 8),
                               std::string(40, '\x1f'),
                               "ok \xC3\xA9 bad \xFF\xC3 end",
                               std::string(33, '\xFF')};
  for (const std::string& s : cases) {
    std::string appended;
    append_json_string(appended, s);
    std::string buffer(json_string_bound(s) + 8, '#');
    char* end = write_json_string(buffer.data(), s);
    const auto written = static_cast<size_t>(end - buffer.data());
    ASSERT_LE(written, json_string_bound(s)) << appended;
    EXPECT_EQ(buffer.substr(0, written), appended);
    EXPECT_EQ(buffer.substr(written), std::string(buffer.size() - written, '#')) << appended;
  }
}

}  // namespace
}  // namespace rdma_eventd
