// Names from other hosts in the fleet's outputs (fleet/escape.h): any bytes a host uploads,
// shown so that a terminal never acts on them, a page stays a page, and JSON is always written
// (nlohmann's dump() throws on a string that is not UTF-8) and keeps the name, byte for byte.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "escape.h"
#include "incident_grouper.h"
#include "incidents_output.h"

namespace rdma_eventd_fleet {
namespace {

TEST(FleetEscape, PrintableKeepsTextAndShowsEveryOtherByte) {
  EXPECT_EQ(printable("node01.example.net"), "node01.example.net");
  EXPECT_EQ(printable("n\xc3\xa9ud-\xe6\x97\xa5"), "n\\u00e9ud-\\u65e5");  // beyond ASCII: \u
  EXPECT_EQ(printable("a\x1b[2Jb"), "a\\x1b[2Jb");                         // ESC
  EXPECT_EQ(printable("a\nb\tc\rd\x7f"), "a\\x0ab\\x09c\\x0dd\\x7f");
  EXPECT_EQ(printable("\xc2\x9b"
                      "31m"),
            "\\xc2\\x9b31m");                               // C1 CSI, as UTF-8
  EXPECT_EQ(printable("\xff\xfe"), "\\xff\\xfe");           // not UTF-8
  EXPECT_EQ(printable("\xe6\x97"), "\\xe6\\x97");           // cut short
  EXPECT_EQ(printable("\xc0\xaf"), "\\xc0\\xaf");           // overlong
  EXPECT_EQ(printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a surrogate
  // A backslash is doubled, so that a name cannot pass for an escape.
  EXPECT_EQ(printable("a\\x1b"), "a\\\\x1b");
  EXPECT_EQ(printable(std::string("a\0b", 3)), "a\\x00b");
}

// printable()'s escapes read back: what a reader of the output can do, and the proof that no two
// names print alike.
std::string unescape(std::string_view shown) {
  std::string out;
  for (size_t i = 0; i < shown.size();) {
    if (shown[i] != '\\') {
      out += shown[i++];
      continue;
    }
    const char kind = shown.at(i + 1);
    if (kind == '\\') {
      out += '\\';
      i += 2;
      continue;
    }
    const size_t digits = kind == 'x' ? 2 : kind == 'u' ? 4 : 8;
    const uint32_t v = std::stoul(std::string(shown.substr(i + 2, digits)), nullptr, 16);
    i += 2 + digits;
    if (kind == 'x') {
      out += static_cast<char>(v);
    } else if (v < 0x800) {
      out += static_cast<char>(0xc0 | v >> 6);
      out += static_cast<char>(0x80 | (v & 0x3f));
    } else if (v < 0x10000) {
      out += static_cast<char>(0xe0 | v >> 12);
      out += static_cast<char>(0x80 | (v >> 6 & 0x3f));
      out += static_cast<char>(0x80 | (v & 0x3f));
    } else {
      out += static_cast<char>(0xf0 | v >> 18);
      out += static_cast<char>(0x80 | (v >> 12 & 0x3f));
      out += static_cast<char>(0x80 | (v >> 6 & 0x3f));
      out += static_cast<char>(0x80 | (v & 0x3f));
    }
  }
  return out;
}

TEST(FleetEscape, NoCharacterThatCanReorderHideOrImitateTextIsShownAsItIs) {
  // A right-to-left override that would show "node01" for "10edon", a zero-width space, a
  // byte-order mark, a line separator, a Cyrillic "o" (U+043E) in place of an ASCII one, and
  // a character beyond the Basic Multilingual Plane.
  EXPECT_EQ(printable("\xe2\x80\xae"
                      "10edon"),
            "\\u202e10edon");
  EXPECT_EQ(printable("node\xe2\x80\x8b"
                      "01"),
            "node\\u200b01");
  EXPECT_EQ(printable("\xef\xbb\xbfnode"), "\\ufeffnode");
  EXPECT_EQ(printable("a\xe2\x80\xa8"
                      "b"),
            "a\\u2028b");
  EXPECT_EQ(printable("n\xd0\xbe"
                      "de01"),
            "n\\u043ede01");
  EXPECT_EQ(printable("\xf0\x9f\x98\x80"), "\\U0001f600");
  EXPECT_NE(printable("n\xd0\xbe"
                      "de01"),
            printable("node01"));
}

TEST(FleetEscape, EveryNameReadsBackFromItsPrintableFormAndNoTwoPrintAlike) {
  const std::vector<std::string> names = {"node01",
                                          "\\xff",
                                          "\xff",
                                          "a\\\\b",
                                          "a\\b",
                                          "\\u202e",
                                          "\xe2\x80\xae",
                                          "\\U0001f600",
                                          "\xf0\x9f\x98\x80",
                                          "\xc2\x9b",
                                          "\\xc2\\x9b",
                                          "\x1b[31m",
                                          "\\x1b[31m",
                                          "\xd0\xbe",
                                          "\xed\xa0\x80",
                                          std::string("\0\\", 2),
                                          "\xe6\x97",
                                          "tab\there",
                                          "\xc3\xa9\\",
                                          ""};
  std::set<std::string> shown, in_json;
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    const std::string p = printable(name);
    for (const char c : p)
      EXPECT_TRUE(c >= 0x20 && c < 0x7f) << p;
    EXPECT_EQ(unescape(p), name);
    shown.insert(p);
    in_json.insert(json_text(name));
  }
  EXPECT_EQ(shown.size(), names.size());
  EXPECT_EQ(in_json.size(), names.size());
}

TEST(FleetEscape, JsonTextIsTheNameWhenUtf8AndPrintableOtherwise) {
  EXPECT_TRUE(valid_utf8("n\xc3\xa9ud\x1b"));
  EXPECT_FALSE(valid_utf8("n\xff"));
  EXPECT_EQ(json_text("node\x1b[2J"), "node\x1b[2J");  // the JSON writer escapes it: \u001b
  EXPECT_EQ(nlohmann::json(json_text("node\x1b")).dump(), "\"node\\u001b\"");
  EXPECT_EQ(json_text("n\xff\\"), "n\\xff\\\\");
  EXPECT_EQ(nlohmann::json(json_text("n\xff")).dump(), "\"n\\\\xff\"");
  // A name of four ASCII characters, "\xff", is not the byte 0xff's form: a name with a
  // backslash is written in the escaped form too, where every backslash begins an escape.
  EXPECT_EQ(json_text("\\xff"), "\\\\xff");
  EXPECT_NE(json_text("\\xff"), json_text("\xff"));
  // The fleet's JSON lines are ASCII: a bidi override is \u202e there, as a control is \u001b.
  EXPECT_EQ(dump_ascii(nlohmann::json(json_text("\xe2\x80\xae"
                                                "a\x1b"))),
            "\"\\u202ea\\u001b\"");
}

TEST(FleetEscape, AnIncidentOfHostileNamesIsWrittenAsTextAndJson) {
  // Three hosts whose names and device names hold escapes, bytes that are not UTF-8 and a
  // newline, losing their links together; and a verdict of the same kind.
  const std::vector<std::string> hosts = {"evil\x1b]0;pwned\x07", "bad\xff\xfe", "two\nlines"};
  std::vector<Incident> out;
  IncidentGrouper g({}, [&](Incident&& i) { out.push_back(std::move(i)); });
  for (size_t i = 0; i < hosts.size(); ++i) {
    g.add({.time_us = 1'000'000 + static_cast<int64_t>(i),
           .host = hosts[i],
           .event = "port_err",
           .device = "mlx5_\x9b",
           .port = 1,
           .stream = hosts[i],
           .seq = 1});
  }
  g.add({.time_us = 1'000'010,
         .host = hosts[0],
         .event = "port_health",
         .device = "mlx5_0",
         .port = 1,
         .health = "\x1b[31mred",
         .stream = hosts[0],
         .seq = 2});
  g.finish();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].cls, IncidentClass::kFabric);

  const std::string text = format_incident(out[0]);
  for (const char c : text)
    EXPECT_TRUE(c == '\n' || static_cast<unsigned char>(c) >= 0x20) << text;
  EXPECT_TRUE(valid_utf8(text)) << text;
  EXPECT_NE(text.find("  bad\\xff\\xfe  mlx5_\\x9b/1  1 port_err\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  evil\\x1b]0;pwned\\x07  mlx5_0/1,mlx5_\\x9b/1  1 port_err, 1 "
                      "port_health \\x1b[31mred\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  two\\x0alines  "), std::string::npos) << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 4);  // the incident, three hosts

  const std::string line = incident_json(out[0]).dump();  // no exception
  EXPECT_EQ(line.find('\n'), std::string::npos);
  const auto back = nlohmann::json::parse(line);
  std::vector<std::string> names;
  for (const auto& h : back["hosts"])
    names.push_back(h["host"]);
  // Valid UTF-8 as it was (control characters included, escaped by JSON); the rest printable.
  EXPECT_EQ(names,
            (std::vector<std::string>{"bad\\xff\\xfe", "evil\x1b]0;pwned\x07", "two\nlines"}));
  EXPECT_EQ(back["hosts"][0]["ports"], nlohmann::json::array({"mlx5_\\x9b/1"}));
  EXPECT_EQ(back["events"]["port_health \x1b[31mred"], 1);
}

}  // namespace
}  // namespace rdma_eventd_fleet
