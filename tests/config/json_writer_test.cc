#include "config/json_writer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <string>

#include "sim/check.h"
#include "tests/support/json_value.h"

namespace clustersim::sim {
namespace {

// The text of one value written by `fill`.
template <class Fill>
std::string json(Fill fill, int indent = 0, int wrap_levels = JsonWriter::kAuto) {
  std::ostringstream out;
  JsonWriter writer(out, indent, wrap_levels);
  fill(writer);
  writer.finish();
  return out.str();
}

std::string number_text(double x) {
  return json([x](JsonWriter& w) { w.number(x); });
}

TEST(JsonWriter, CompactObjectsAndArrays) {
  const std::string text = json([](JsonWriter& w) {
    w.begin_object();
    w.key("name").str("llama");
    w.key("gpus").int64(8);
    w.key("ok").boolean(true);
    w.key("none").null();
    w.key("list").begin_array().int64(1).int64(-2).begin_object().end_object().end_array();
    w.key("empty").begin_array().end_array();
    w.end_object();
  });
  EXPECT_EQ(text, R"({"name":"llama","gpus":8,"ok":true,"none":null,"list":[1,-2,{}],"empty":[]})");
}

TEST(JsonWriter, IndentedLayout) {
  const std::string text = json(
      [](JsonWriter& w) {
        w.begin_object();
        w.key("a").int64(1);
        w.key("b").begin_array().int64(2).begin_object().key("c").boolean(false).end_object();
        w.end_array();
        w.key("d").begin_object().end_object();
        w.end_object();
      },
      2);
  EXPECT_EQ(text,
            "{\n"
            "  \"a\": 1,\n"
            "  \"b\": [\n"
            "    2,\n"
            "    {\n"
            "      \"c\": false\n"
            "    }\n"
            "  ],\n"
            "  \"d\": {}\n"
            "}");
}

TEST(JsonWriter, WrapLevelsKeepDeeperContainersOnOneLine) {
  // Trace layout: the events array one per line, each event inline.
  const std::string text = json(
      [](JsonWriter& w) {
        w.begin_object().key("events").begin_array();
        w.begin_object().key("x").int64(1).key("y").begin_array().int64(2).int64(3).end_array();
        w.end_object();
        w.begin_object().key("x").int64(4).end_object();
        w.end_array().key("unit").str("ns").end_object();
      },
      1, 2);
  EXPECT_EQ(text,
            "{\n"
            " \"events\": [\n"
            "  {\"x\": 1, \"y\": [2, 3]},\n"
            "  {\"x\": 4}\n"
            " ],\n"
            " \"unit\": \"ns\"\n"
            "}");
}

TEST(JsonWriter, WrapLevelsWithoutIndentKeepCompactSeparators) {
  const std::string text = json(
      [](JsonWriter& w) {
        w.begin_object().key("events").begin_array();
        w.begin_object().key("x").int64(1).key("y").begin_array().int64(2).end_array();
        w.end_object();
        w.int64(4);
        w.end_array().key("unit").str("ns").end_object();
      },
      0, 2);
  EXPECT_EQ(text,
            "{\n"
            "\"events\":[\n"
            "{\"x\":1,\"y\":[2]},\n"
            "4\n"
            "],\n"
            "\"unit\":\"ns\"\n"
            "}");
}

TEST(JsonWriter, EscapesStringsAsRfc8259Requires) {
  EXPECT_EQ(json_quote("plain"), R"("plain")");
  EXPECT_EQ(json_quote("a\"b\\c/d"), R"("a\"b\\c/d")");
  EXPECT_EQ(json_quote("\b\f\n\r\t"), R"("\b\f\n\r\t")");
  EXPECT_EQ(json_quote(std::string("nul\0x\x01\x1f\x7f", 8)), R"("nul\u0000x\u0001\u001f)"
                                                              "\x7f\"");
  EXPECT_EQ(json_quote("µs → ok"), "\"µs → ok\"");
  EXPECT_EQ(json_quote(""), R"("")");
  // Keys are escaped the same way.
  EXPECT_EQ(json([](JsonWriter& w) { w.begin_object().key("a\"\n").int64(0).end_object(); }),
            R"({"a\"\n":0})");
}

TEST(JsonWriter, IntegersAtTheirLimits) {
  EXPECT_EQ(json([](JsonWriter& w) {
              w.begin_array()
                  .int64(0)
                  .int64(std::numeric_limits<int64_t>::min())
                  .int64(std::numeric_limits<int64_t>::max())
                  .uint64(std::numeric_limits<uint64_t>::max())
                  .end_array();
            }),
            "[0,-9223372036854775808,9223372036854775807,18446744073709551615]");
}

TEST(JsonWriter, DoublesAreShortestRoundTrip) {
  EXPECT_EQ(number_text(0.1), "0.1");
  EXPECT_EQ(number_text(2.0), "2");
  EXPECT_EQ(number_text(-1.5), "-1.5");
  EXPECT_EQ(number_text(0.0), "0");
  EXPECT_EQ(number_text(1.0 / 3.0), "0.3333333333333333");
  EXPECT_EQ(number_text(1e21), "1e+21");
  EXPECT_EQ(number_text(-0.0), "0");
  EXPECT_EQ(number_text(1.25e-7), "1.25e-7");
  EXPECT_EQ(number_text(1e-6), "0.000001");
  EXPECT_EQ(number_text(-0.0006), "-0.0006");
  EXPECT_EQ(number_text(123456789.0), "123456789");
  EXPECT_EQ(number_text(1e16), "10000000000000000");
  EXPECT_EQ(number_text(1.5e20), "150000000000000000000");
  EXPECT_EQ(number_text(-2.5e-300), "-2.5e-300");
  EXPECT_EQ(number_text(4.9e-324), "5e-324");
  EXPECT_EQ(number_text(5762.123456789), "5762.123456789");
  EXPECT_EQ(number_text(std::numeric_limits<double>::max()), "1.7976931348623157e+308");
  for (double x : {0.1, 1.0 / 3.0, 6.02214076e23, 4.9e-324, 123456.789e-11, 1e-6, 9.999e20,
                   -12345.678, 5762.5}) {
    EXPECT_EQ(std::strtod(number_text(x).c_str(), nullptr), x) << number_text(x);
  }
}

TEST(JsonWriter, OutputReadsBackThroughAStrictParser) {
  const std::string tricky = "q\"b\\s/\b\f\n\r\t\x01\x1f µ → 😀";
  const std::string text = json(
      [&](JsonWriter& w) {
        w.begin_object().key(tricky).str(tricky).key("n").begin_array();
        for (double x : {0.1, -2.5e-300, 1e21, 1e-6}) w.number(x);
        w.decimal(-1005, 3).end_array().end_object();
      },
      2);
  const test_support::JsonValue v = test_support::parse_json(text);
  ASSERT_EQ(v.members.size(), 2u);
  EXPECT_EQ(v.members[0].key, tricky);
  EXPECT_EQ(v.members[0].value.text, tricky);
  const auto& n = v["n"].items;
  ASSERT_EQ(n.size(), 5u);
  EXPECT_EQ(n[0].number, 0.1);
  EXPECT_EQ(n[1].number, -2.5e-300);
  EXPECT_EQ(n[2].number, 1e21);
  EXPECT_EQ(n[3].number, 1e-6);
  EXPECT_EQ(n[4].number, -1.005);
}

TEST(JsonWriter, NonFiniteDoublesAreNull) {
  EXPECT_EQ(number_text(std::nan("")), "null");
  EXPECT_EQ(number_text(std::numeric_limits<double>::infinity()), "null");
  EXPECT_EQ(number_text(-std::numeric_limits<double>::infinity()), "null");
}

TEST(JsonWriter, DecimalsAreExact) {
  const auto decimal = [](int64_t units, int scale) {
    return json([&](JsonWriter& w) { w.decimal(units, scale); });
  };
  EXPECT_EQ(decimal(12345, 3), "12.345");
  EXPECT_EQ(decimal(12000, 3), "12");
  EXPECT_EQ(decimal(12300, 3), "12.3");
  EXPECT_EQ(decimal(5, 3), "0.005");
  EXPECT_EQ(decimal(0, 3), "0");
  EXPECT_EQ(decimal(-1005, 3), "-1.005");
  EXPECT_EQ(decimal(-5, 3), "-0.005");
  EXPECT_EQ(decimal(42, 0), "42");
  EXPECT_EQ(decimal(std::numeric_limits<int64_t>::min(), 3), "-9223372036854775.808");
  EXPECT_EQ(decimal(1, 18), "0.000000000000000001");
}

TEST(JsonWriter, MisuseFailsAnInvariant) {
  std::ostringstream out;
  {
    JsonWriter w(out);
    w.begin_object();
    EXPECT_THROW(w.int64(1), InvariantError);  // value without a key
  }
  {
    JsonWriter w(out);
    w.begin_array();
    EXPECT_THROW(w.key("a"), InvariantError);  // key in an array
    EXPECT_THROW(w.end_object(), InvariantError);
  }
  {
    JsonWriter w(out);
    w.begin_object().key("a");
    EXPECT_THROW(w.key("b"), InvariantError);  // key after key
    EXPECT_THROW(w.end_object(), InvariantError);
  }
  {
    JsonWriter w(out);
    w.int64(1);
    EXPECT_THROW(w.int64(2), InvariantError);  // second top-level value
  }
  {
    JsonWriter w(out);
    EXPECT_THROW(w.finish(), InvariantError);  // nothing written
    w.begin_array();
    EXPECT_FALSE(w.complete());
    EXPECT_THROW(w.finish(), InvariantError);  // unclosed
    w.end_array();
    EXPECT_TRUE(w.complete());
    EXPECT_THROW(w.end_array(), InvariantError);
  }
}

}  // namespace
}  // namespace clustersim::sim
