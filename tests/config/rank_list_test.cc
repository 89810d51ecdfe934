#include "config/rank_list.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace clustersim::sim {
namespace {

using Ranks = std::vector<int64_t>;

Ranks ranks(std::string_view text, int64_t limit = 1000) {
  const Parsed<Ranks> parsed = parse_rank_list(text, limit);
  EXPECT_TRUE(parsed) << text << ": " << parsed.error;
  return parsed ? *parsed : Ranks{};
}

std::string error(std::string_view text, int64_t limit = 1000) {
  const Parsed<Ranks> parsed = parse_rank_list(text, limit);
  EXPECT_FALSE(parsed) << text;
  return parsed.error;
}

TEST(RankList, NumbersAndRanges) {
  EXPECT_EQ(ranks("0"), (Ranks{0}));
  EXPECT_EQ(ranks("3,17,100-103"), (Ranks{3, 17, 100, 101, 102, 103}));
  EXPECT_EQ(ranks(" 0 - 2 , 8 "), (Ranks{0, 1, 2, 8}));
  EXPECT_EQ(ranks("5-5"), (Ranks{5}));
}

TEST(RankList, EmptyTextIsTheEmptyList) {
  EXPECT_EQ(ranks(""), Ranks{});
  EXPECT_EQ(ranks("  "), Ranks{});
}

TEST(RankList, SortedWithoutDuplicates) {
  EXPECT_EQ(ranks("8,4,0-5,4"), (Ranks{0, 1, 2, 3, 4, 5, 8}));
}

TEST(RankList, Errors) {
  EXPECT_EQ(error("1,,2"), "empty item in the list (two commas, or one at an end)");
  EXPECT_EQ(error("1,"), "empty item in the list (two commas, or one at an end)");
  EXPECT_EQ(error("x"), "item 'x' is not a rank or a range A-B");
  EXPECT_EQ(error("1.5"), "item '1.5' is not a rank or a range A-B");
  EXPECT_EQ(error("-3"), "item '-3' lacks a number");
  EXPECT_EQ(error("3-"), "item '3-' lacks a number");
  EXPECT_EQ(error("1-2-3"), "item '1-2-3' is not a rank or a range A-B");
  EXPECT_EQ(error("7-3"), "range '7-3' ends before it starts");
  EXPECT_EQ(error("99999999999999999999"), "rank '99999999999999999999' is too large");
  EXPECT_EQ(error("0,10-1000"), "rank 1000 (in '10-1000') is not below 1000");
  EXPECT_EQ(error("1000"), "rank 1000 (in '1000') is not below 1000");
}

TEST(RankList, LimitIsCheckedBeforeExpanding) {
  EXPECT_EQ(error("0-999999999999", 8), "rank 999999999999 (in '0-999999999999') is not below 8");
}

TEST(RankList, ProblemChecksSyntaxOnly) {
  EXPECT_EQ(rank_list_problem("0-999999999999"), "");
  EXPECT_EQ(rank_list_problem(""), "");
  EXPECT_EQ(rank_list_problem("3,a"), "item 'a' is not a rank or a range A-B");
}

TEST(RankList, Format) {
  EXPECT_EQ(format_rank_list({}), "");
  EXPECT_EQ(format_rank_list({0}), "0");
  EXPECT_EQ(format_rank_list({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
}

}  // namespace
}  // namespace clustersim::sim
