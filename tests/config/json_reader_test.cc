#include "config/json_reader.h"

#include <gtest/gtest.h>

#include <string>

namespace clustersim::sim {
namespace {

using Kind = JsonValue::Kind;

std::string error_of(std::string_view text) {
  try {
    parse_json(text, "t.json");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(JsonReader, ReadsEveryKindWithPositions) {
  const JsonValue v = parse_json(
      "{\"a\": [1, -2.5e2, true, false, null],\n"
      "  \"b\": {\"c\": \"x\"}, \"big\": 9223372036854775808, \"min\": -9223372036854775808}",
      "t.json");
  ASSERT_TRUE(v.is(Kind::kObject));
  EXPECT_EQ(v.line, 1);
  EXPECT_EQ(v.column, 1);
  ASSERT_EQ(v.members.size(), 4u);
  EXPECT_EQ(v.members[0].key, "a");
  EXPECT_EQ(v.members[1].key, "b");
  const JsonValue& a = *v.find("a");
  ASSERT_EQ(a.items.size(), 5u);
  EXPECT_EQ(a.column, 7);
  EXPECT_TRUE(a.items[0].is_integer);
  EXPECT_EQ(a.items[0].integer, 1);
  EXPECT_EQ(a.items[0].column, 8);
  EXPECT_FALSE(a.items[1].is_integer);
  EXPECT_EQ(a.items[1].number, -250.0);
  EXPECT_EQ(a.items[1].text, "-2.5e2");
  EXPECT_TRUE(a.items[2].boolean);
  EXPECT_TRUE(a.items[3].is(Kind::kBool));
  EXPECT_FALSE(a.items[3].boolean);
  EXPECT_TRUE(a.items[4].is(Kind::kNull));
  const JsonValue& c = *v.find("b")->find("c");
  EXPECT_EQ(c.text, "x");
  EXPECT_EQ(c.line, 2);
  EXPECT_EQ(c.column, 14);
  EXPECT_EQ(c.where("t.json").to_string(), "t.json:2:14");
  EXPECT_FALSE(v.find("big")->is_integer);  // 2^63 does not fit int64
  EXPECT_EQ(v.find("big")->number, 9223372036854775808.0);
  EXPECT_TRUE(v.find("min")->is_integer);
  EXPECT_EQ(v.find("min")->integer, INT64_MIN);
  EXPECT_EQ(v.find("nope"), nullptr);
  EXPECT_EQ(a.find("a"), nullptr);
}

TEST(JsonReader, DecodesEscapesAndSurrogatePairs) {
  const JsonValue v =
      parse_json(R"("q\" b\\ s\/ \b\f\n\r\t \u0041\u00e9\u20AC \ud83d\ude00")", "t.json");
  EXPECT_EQ(v.text, "q\" b\\ s/ \b\f\n\r\t A\xc3\xa9\xe2\x82\xac \xf0\x9f\x98\x80");
}

TEST(JsonReader, DuplicateKeysKeepTheLastValueAtTheFirstPosition) {
  const JsonValue v = parse_json(R"({"k": 1, "j": 2, "k": 3})", "t.json");
  ASSERT_EQ(v.members.size(), 2u);
  EXPECT_EQ(v.members[0].key, "k");
  EXPECT_EQ(v.members[0].value.integer, 3);
  EXPECT_EQ(v.members[0].value.column, 23);
}

TEST(JsonReader, AcceptsSurroundingWhitespaceAndEmptyContainers) {
  const JsonValue v = parse_json(" \r\n\t[ {} , [ ] ] \n", "t.json");
  ASSERT_EQ(v.items.size(), 2u);
  EXPECT_EQ(v.line, 2);
  EXPECT_EQ(v.column, 2);
  EXPECT_TRUE(v.items[0].members.empty());
  EXPECT_TRUE(v.items[1].items.empty());
}

TEST(JsonReader, SyntaxErrorsNameLineColumnExpectedAndFound) {
  EXPECT_EQ(error_of("{\"a\": 1\n  x}"),
            "t.json:2:3: error: expected ',' or '}' after an object member, found 'x'");
  EXPECT_EQ(error_of("{\"a\" 1}"),
            "t.json:1:6: error: expected ':' after an object key, found '1'");
  EXPECT_EQ(error_of("{\"a\": 1,}"),
            "t.json:1:9: error: expected a string key after ',', found '}'");
  EXPECT_EQ(error_of("{a: 1}"), "t.json:1:2: error: expected a string key or '}', found 'a'");
  EXPECT_EQ(error_of("[1,]"), "t.json:1:4: error: expected a value after ',', found ']'");
  EXPECT_EQ(error_of("[1 2]"),
            "t.json:1:4: error: expected ',' or ']' after an array item, found '2'");
  EXPECT_EQ(error_of("[True]"),
            "t.json:1:2: error: expected a value (object, array, string, number, true, false or "
            "null), found 'True'");
  EXPECT_EQ(error_of("[truex]"),
            "t.json:1:2: error: expected a value (object, array, string, number, true, false or "
            "null), found 'truex'");
  EXPECT_EQ(error_of("{} {}"),
            "t.json:1:4: error: expected end of file after the JSON value, found '{'");
  EXPECT_EQ(error_of(""),
            "t.json:1:1: error: expected a value (object, array, string, number, true, false or "
            "null), found end of file");
}

TEST(JsonReader, NumberErrors) {
  EXPECT_EQ(error_of("[01]"),
            "t.json:1:3: error: expected '.', 'e' or the end of the number after a leading 0, "
            "found '1'");
  EXPECT_EQ(error_of("[-a]"), "t.json:1:3: error: expected a digit after '-', found 'a'");
  EXPECT_EQ(error_of("[1.]"), "t.json:1:4: error: expected a digit after '.', found ']'");
  EXPECT_EQ(error_of("[1e+]"), "t.json:1:5: error: expected a digit in the exponent, found ']'");
  EXPECT_EQ(error_of("[+1]"),
            "t.json:1:2: error: expected a value (object, array, string, number, true, false or "
            "null), found '+'");
  EXPECT_EQ(error_of("[.5]"),
            "t.json:1:2: error: expected a value (object, array, string, number, true, false or "
            "null), found '.'");
  EXPECT_EQ(error_of("[1e400]"),
            "t.json:1:2: error: expected a number within the range of a double, found 1e400");
}

TEST(JsonReader, StringErrors) {
  EXPECT_EQ(error_of("[\"a\nb\"]"),
            "t.json:1:4: error: expected '\"' or a character in a string (control characters "
            "must be escaped), found a line break");
  EXPECT_EQ(error_of(R"(["\x"])"),
            "t.json:1:4: error: expected an escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX) "
            "after '\\', found 'x'");
  EXPECT_EQ(error_of(R"(["\u12G4"])"),
            "t.json:1:7: error: expected 4 hex digits after \\u, found 'G4'");
  EXPECT_EQ(error_of(R"(["\ud83d x"])"),
            "t.json:1:9: error: expected a low surrogate (\\uDC00-\\uDFFF) after \\uD83D, found "
            "' '");
  EXPECT_EQ(error_of(R"(["\ud83d\u0041"])"),
            "t.json:1:9: error: expected a low surrogate (\\uDC00-\\uDFFF) after \\uD83D, found "
            "\\u0041");
  EXPECT_EQ(error_of(R"(["\ude00"])"),
            "t.json:1:3: error: expected a high surrogate (\\uD800-\\uDBFF) before the low "
            "surrogate \\uDE00, found none");
}

TEST(JsonReader, TruncatedInput) {
  EXPECT_EQ(error_of("{\"traceEvents\": [\n  {\"name\": \"ab"),
            "t.json:2:15: error: unexpected end of file in a string (opened at 2:12)");
  EXPECT_EQ(error_of("[\"a\\"),
            "t.json:1:5: error: unexpected end of file in a string (opened at 1:2)");
  EXPECT_EQ(error_of("[\"\\u00"),
            "t.json:1:7: error: unexpected end of file in a string (opened at 1:2)");
  EXPECT_EQ(error_of("{\"a\": 1"),
            "t.json:1:8: error: unexpected end of file in an object (opened at 1:1); expected "
            "',' or '}' after an object member");
  EXPECT_EQ(error_of("{\"a\":"),
            "t.json:1:6: error: unexpected end of file in an object (opened at 1:1); expected a "
            "value after ':'");
  EXPECT_EQ(error_of("[1,\n"),
            "t.json:2:1: error: unexpected end of file in an array (opened at 1:1); expected a "
            "value");
  EXPECT_EQ(error_of("[1"),
            "t.json:1:3: error: unexpected end of file in an array (opened at 1:1); expected "
            "',' or ']' after an array item");
}

TEST(JsonReader, RefusesNestingBeyondTheLimit) {
  const std::string deep(static_cast<size_t>(kMaxJsonDepth) + 1, '[');
  EXPECT_EQ(error_of(deep),
            "t.json:1:513: error: expected at most 512 nested arrays and objects, found more");
  const std::string ok = std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']');
  EXPECT_NO_THROW(parse_json(ok, "t.json"));
}

TEST(JsonReader, DescribesValuesAndPaths) {
  const JsonValue v = parse_json(R"([1.50, "s", {}, [], null, true])", "t.json");
  EXPECT_EQ(v.items[0].describe(), "1.50");
  EXPECT_EQ(v.items[1].describe(), "\"s\"");
  EXPECT_EQ(v.items[2].describe(), "an object");
  EXPECT_EQ(v.items[3].describe(), "an array");
  EXPECT_EQ(v.items[4].describe(), "null");
  EXPECT_EQ(v.items[5].describe(), "true");
  EXPECT_EQ(v.items[1].kind_name(), "a string");
  EXPECT_EQ(json_path_member("", "traceEvents"), "traceEvents");
  EXPECT_EQ(json_path_member(json_path_index("traceEvents", 12), "dur"), "traceEvents[12].dur");
  EXPECT_EQ(json_path_member("args", "External id"), "args[\"External id\"]");
}

TEST(JsonReader, ReadsAFileAndReportsAMissingOne) {
  try {
    read_json_file("/nonexistent/t.json");
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "/nonexistent/t.json: error: cannot read the file: no such file");
  }
}

}  // namespace
}  // namespace clustersim::sim
