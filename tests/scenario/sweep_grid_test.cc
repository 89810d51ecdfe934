#include "scenario/sweep_grid.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace clustersim::cli {
namespace {

using Values = std::vector<std::string>;

SweepAxis axis_of(const std::string& text) {
  const sim::Parsed<SweepAxis> axis = parse_sweep_axis(text);
  EXPECT_TRUE(axis) << axis.error;
  return axis ? *axis.value : SweepAxis{};
}

std::string error_of(const std::string& text) {
  const sim::Parsed<SweepAxis> axis = parse_sweep_axis(text);
  EXPECT_FALSE(axis) << text;
  return axis.error;
}

TEST(SweepGrid, ListsAndRanges) {
  SweepAxis a = axis_of("workload.parallelism.tp = 1, 2,8");
  EXPECT_EQ(a.key, "workload.parallelism.tp");
  EXPECT_EQ(a.values, (Values{"1", "2", "8"}));
  EXPECT_FALSE(a.divisors);

  EXPECT_EQ(axis_of("k=8..1024:x2").values,
            (Values{"8", "16", "32", "64", "128", "256", "512", "1024"}));
  EXPECT_EQ(axis_of("k=8..1000:x2").values.back(), "512");  // stops at the last <= B
  EXPECT_EQ(axis_of("k=1..100:x10").values, (Values{"1", "10", "100"}));
  EXPECT_EQ(axis_of("k=1..9:+2").values, (Values{"1", "3", "5", "7", "9"}));
  EXPECT_EQ(axis_of("k=4..4:+1").values, (Values{"4"}));
  // Items mix: literals (validated later, like --set) and ranges.
  EXPECT_EQ(axis_of("k=3,8..32:x2,80GiB").values, (Values{"3", "8", "16", "32", "80GiB"}));
  // No overflow near the top of int64.
  EXPECT_EQ(axis_of("k=4611686018427387904..9223372036854775807:x2").values.size(), 1u);

  const SweepAxis d = axis_of("workload.parallelism.shard_group_size=divisors");
  EXPECT_TRUE(d.divisors);
  EXPECT_TRUE(d.values.empty());
}

TEST(SweepGrid, BadSyntaxSaysWhatWasExpected) {
  EXPECT_NE(error_of("tp").find("expected KEY=V1,V2,..."), std::string::npos);
  EXPECT_NE(error_of("=1,2").find("expected KEY=V1,V2,..."), std::string::npos);
  EXPECT_NE(error_of("k=").find("found nothing"), std::string::npos);
  EXPECT_NE(error_of("k=1,,2").find("empty item"), std::string::npos);
  EXPECT_EQ(error_of("k=8..64"),
            "k: expected a step after the range '8..64': ':xF' (geometric) or ':+S' "
            "(arithmetic), found none");
  EXPECT_EQ(error_of("k=8..64:*2"),
            "k: expected ':x' (geometric) or ':+' (arithmetic) after the range in '8..64:*2', "
            "found ':*2'");
  EXPECT_EQ(error_of("k=a..64:x2"),
            "k: expected an integer start in range 'a..64:x2' (A..B:xF or A..B:+S), found 'a'");
  EXPECT_NE(error_of("k=64..8:x2").find("start is at most its end"), std::string::npos);
  EXPECT_NE(error_of("k=8..64:x1").find("factor >= 2"), std::string::npos);
  EXPECT_NE(error_of("k=0..64:x2").find("start >= 1"), std::string::npos);
  EXPECT_NE(error_of("k=1..64:+0").find("step >= 1"), std::string::npos);
  EXPECT_NE(error_of("k=1..10000000:+1").find("at most 100000 values"), std::string::npos);
  EXPECT_NE(error_of("k=divisors,4").find("'divisors' alone"), std::string::npos);
}

TEST(SweepGrid, SeveralAxesSeparatedBySemicolons) {
  const auto axes = parse_sweep_axes(" a=1,2; b=8..32:x2 ;; ");
  ASSERT_TRUE(axes) << axes.error;
  ASSERT_EQ(axes->size(), 2u);
  EXPECT_EQ((*axes)[1].values, (Values{"8", "16", "32"}));
  const auto twice = parse_sweep_axes("a=1; a=2");
  ASSERT_FALSE(twice);
  EXPECT_EQ(twice.error, "expected each key once, found a twice");
  EXPECT_FALSE(parse_sweep_axes("a=1; b"));
}

TEST(SweepGrid, Divisors) {
  EXPECT_EQ(divisors_of(1), (std::vector<int64_t>{1}));
  EXPECT_EQ(divisors_of(16), (std::vector<int64_t>{1, 2, 4, 8, 16}));
  EXPECT_EQ(divisors_of(12), (std::vector<int64_t>{1, 2, 3, 4, 6, 12}));
  EXPECT_EQ(divisors_of(36), (std::vector<int64_t>{1, 2, 3, 4, 6, 9, 12, 18, 36}));
  // 16,384 H100 with tp 8: dp 2048 = 2^11 has 12 divisors.
  EXPECT_EQ(divisors_of(2048).size(), 12u);
}

std::vector<Values> values_of(const std::vector<SweepPoint>& points) {
  std::vector<Values> out;
  for (const SweepPoint& p : points) out.push_back(p.values);
  return out;
}

TEST(SweepGrid, CartesianProductFirstAxisSlowest) {
  const std::vector<SweepAxis> axes = {axis_of("a=1,2"), axis_of("b=x,y,z")};
  const auto points = expand_sweep_grid(axes, [](const auto&) { return DpSize{}; });
  EXPECT_EQ(values_of(points),
            (std::vector<Values>{
                {"1", "x"}, {"1", "y"}, {"1", "z"}, {"2", "x"}, {"2", "y"}, {"2", "z"}}));
  EXPECT_EQ(point_overrides(axes, points[4]), (Values{"a=2", "b=y"}));
}

TEST(SweepGrid, DivisorsOfEachPointsOwnDpSize) {
  // 16 GPUs: dp = 16 / tp, tp swept after the divisors axis; tp 3 has no dp.
  const std::vector<SweepAxis> axes = {axis_of("shard=divisors"), axis_of("tp=1,4,3")};
  std::vector<Values> asked;
  const auto points = expand_sweep_grid(axes, [&asked](const Values& overrides) {
    asked.push_back(overrides);
    const int tp = std::stoi(overrides[0].substr(3));
    return 16 % tp == 0 ? DpSize{16 / tp, ""} : DpSize{0, "tp: expected a divisor of 16"};
  });
  EXPECT_EQ(asked, (std::vector<Values>{{"tp=1"}, {"tp=4"}, {"tp=3"}}));
  // Ordered by divisor, then tp; tp 3's point is kept, invalid, without a shard value.
  EXPECT_EQ(values_of(points), (std::vector<Values>{{"", "3"},
                                                    {"1", "1"},
                                                    {"1", "4"},
                                                    {"2", "1"},
                                                    {"2", "4"},
                                                    {"4", "1"},
                                                    {"4", "4"},
                                                    {"8", "1"},
                                                    {"16", "1"}}));
  EXPECT_EQ(points[0].invalid_reason, "tp: expected a divisor of 16");
  EXPECT_EQ(point_overrides(axes, points[0]), (Values{"tp=3"}));
  for (size_t i = 1; i < points.size(); ++i) EXPECT_TRUE(points[i].invalid_reason.empty());
}

TEST(SweepGrid, SchemaKeyValidatesTheSyntax) {
  sim::ConfigSchema schema;
  add_sweep_keys(schema);
  const sim::KeySpec* key = schema.find_key("sweep.axes");
  ASSERT_NE(key, nullptr);
  EXPECT_TRUE(sim::parse_value(*key, "a=1,2; b=divisors"));
  const auto bad = sim::parse_value(*key, "a=8..64");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error.find("expected axes as KEY=ITEM"), std::string::npos) << bad.error;
  EXPECT_NE(bad.error.find("a step after the range '8..64'"), std::string::npos) << bad.error;
}

}  // namespace
}  // namespace clustersim::cli
