#include "config/text_fields.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace clustersim::sim {
namespace {

TEST(TextFields, LinesAreNumberedAndLoseTheirBreaks) {
  const auto lines = split_lines("a\r\nb\n\nc");
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0].number, 1);
  EXPECT_EQ(lines[0].text, "a");
  EXPECT_EQ(lines[2].text, "");
  EXPECT_EQ(lines[3].number, 4);
  EXPECT_EQ(lines[3].text, "c");
}

TEST(TextFields, CommaFieldsKeepTheColumnOfTheirFirstCharacter) {
  const auto fields = split_commas("op, 8 ,,x");
  ASSERT_EQ(fields.size(), 4u);
  EXPECT_EQ(fields[0].text, "op");
  EXPECT_EQ(fields[0].column, 1);
  EXPECT_EQ(fields[1].text, "8");
  EXPECT_EQ(fields[1].column, 5);
  EXPECT_EQ(fields[2].text, "");
  EXPECT_EQ(fields[3].text, "x");
  EXPECT_EQ(fields[3].column, 9);
}

TEST(TextFields, QuotedCommaFieldsKeepTheirCommas) {
  // 1-based columns: the quoted text starts after its quote.
  const auto fields = split_commas(R"(a, "x=1,2 y=3" ,b,"open)");
  ASSERT_EQ(fields.size(), 4u);
  EXPECT_EQ(fields[0].text, "a");
  EXPECT_EQ(fields[1].text, "x=1,2 y=3");
  EXPECT_EQ(fields[1].column, 5);
  EXPECT_EQ(fields[2].text, "b");
  EXPECT_EQ(fields[3].text, "open");  // unclosed: to the end of the line
  EXPECT_EQ(split_commas(R"("a,b")").size(), 1u);
}

TEST(TextFields, BlankSeparatedTokens) {
  const auto tokens = split_blanks("  1024\t 256  float");
  ASSERT_EQ(tokens.size(), 3u);
  EXPECT_EQ(tokens[0].text, "1024");
  EXPECT_EQ(tokens[0].column, 3);
  EXPECT_EQ(tokens[1].column, 9);
  EXPECT_EQ(tokens[2].text, "float");
  EXPECT_EQ(trim_blanks(" \tx y\r"), "x y");
}

TEST(TextFields, NumbersAreParsedWhole) {
  EXPECT_EQ(parse_number<int64_t>("65536"), 65536);
  EXPECT_FALSE(parse_number<int64_t>("65536B").has_value());
  EXPECT_FALSE(parse_number<int64_t>("").has_value());
  EXPECT_DOUBLE_EQ(*parse_number<double>("13.67"), 13.67);
  EXPECT_FALSE(parse_number<double>("inf").has_value());
  EXPECT_FALSE(parse_number<double>("nan").has_value());
}

TEST(TextFields, AsciiLowerFoldsOnlyAsciiLetters) {
  EXPECT_EQ(ascii_lower("AllReduce LL128 NVLS"), "allreduce ll128 nvls");
  EXPECT_EQ(ascii_lower("az_AZ-09[@`{"), "az_az-09[@`{");
  // UTF-8 bytes are negative chars: kept as they are ("µS" -> "µs").
  EXPECT_EQ(ascii_lower("\xc2\xb5S"), "\xc2\xb5s");
  EXPECT_EQ(ascii_lower('Q'), 'q');
  EXPECT_EQ(ascii_lower(""), "");
}

}  // namespace
}  // namespace clustersim::sim
