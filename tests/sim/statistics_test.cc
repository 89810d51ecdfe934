#include "sim/statistics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "sim/check.h"

namespace clustersim::sim {
namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

RunningStats stats_of(const std::vector<double>& xs) {
  RunningStats s;
  for (double x : xs) s.add(x);
  return s;
}

TEST(RunningStats, HandComputed) {
  // Deviations from 5: -3 -1 -1 -1 0 0 2 4; squares sum to 32.
  const RunningStats s = stats_of({2, 4, 4, 4, 5, 5, 7, 9});
  EXPECT_EQ(s.count(), 8u);
  EXPECT_DOUBLE_EQ(s.mean(), 5.0);
  EXPECT_DOUBLE_EQ(s.variance(), 32.0 / 7);
  EXPECT_DOUBLE_EQ(s.stddev(), std::sqrt(32.0 / 7));
  EXPECT_EQ(s.sum(), 40.0);
  EXPECT_EQ(s.min(), 2.0);
  EXPECT_EQ(s.max(), 9.0);
}

TEST(RunningStats, MergeOfHalvesEqualsWhole) {
  RunningStats a = stats_of({2, 4, 4});
  const RunningStats b = stats_of({4, 5, 5, 7, 9});
  a.merge(b);
  EXPECT_EQ(a.count(), 8u);
  EXPECT_DOUBLE_EQ(a.mean(), 5.0);
  EXPECT_DOUBLE_EQ(a.variance(), 32.0 / 7);
  EXPECT_EQ(a.sum(), 40.0);
  EXPECT_EQ(a.min(), 2.0);
  EXPECT_EQ(a.max(), 9.0);
}

TEST(RunningStats, MergeWithEmpty) {
  const RunningStats whole = stats_of({1, 2, 6});
  RunningStats empty;
  empty.merge(whole);
  EXPECT_EQ(empty.count(), 3u);
  EXPECT_DOUBLE_EQ(empty.mean(), 3.0);
  EXPECT_DOUBLE_EQ(empty.variance(), 7.0);  // (4 + 1 + 9) / 2
  RunningStats copy = whole;
  copy.merge(RunningStats{});
  EXPECT_EQ(copy.count(), 3u);
  EXPECT_DOUBLE_EQ(copy.variance(), 7.0);
}

TEST(RunningStats, StableForLargeOffset) {
  // Sum of squares minus square of sum would lose everything here.
  const RunningStats s = stats_of({1e9 + 4, 1e9 + 7, 1e9 + 13, 1e9 + 16});
  EXPECT_DOUBLE_EQ(s.mean(), 1e9 + 10);
  EXPECT_DOUBLE_EQ(s.variance(), 30.0);  // (36 + 9 + 9 + 36) / 3
}

TEST(RunningStats, MissingStatisticsThrow) {
  RunningStats s;
  EXPECT_TRUE(s.empty());
  EXPECT_EQ(s.sum(), 0.0);
  EXPECT_THROW(s.mean(), InvariantError);
  EXPECT_THROW(s.min(), InvariantError);
  EXPECT_THROW(s.max(), InvariantError);
  s.add(3);
  EXPECT_EQ(s.mean(), 3.0);
  EXPECT_THROW(s.variance(), InvariantError);
  EXPECT_THROW(s.add(kNan), InvariantError);
  EXPECT_THROW(s.add(kInf), InvariantError);
  EXPECT_EQ(s.count(), 1u);
}

Samples samples_of(const std::vector<double>& xs) {
  Samples s;
  for (double x : xs) s.add(x);
  return s;
}

TEST(Samples, PercentilesMatchNumpyLinear) {
  // numpy.percentile([4, 1, 3, 2], [0, 25, 50, 75, 100]) = [1, 1.75, 2.5, 3.25, 4].
  const Samples s = samples_of({4, 1, 3, 2});
  EXPECT_EQ(s.percentile(0), 1.0);
  EXPECT_EQ(s.percentile(25), 1.75);
  EXPECT_EQ(s.percentile(50), 2.5);
  EXPECT_EQ(s.percentile(75), 3.25);
  EXPECT_EQ(s.percentile(100), 4.0);
  EXPECT_EQ(s.median(), 2.5);
  EXPECT_EQ(s.mean(), 2.5);
  // numpy.percentile([10, 20, 30, 40, 50], 90) = 46; h = 3.6.
  EXPECT_DOUBLE_EQ(samples_of({50, 40, 30, 20, 10}).percentile(90), 46.0);
}

TEST(Samples, SingleValue) {
  const Samples s = samples_of({7});
  EXPECT_EQ(s.percentile(0), 7.0);
  EXPECT_EQ(s.percentile(99.9), 7.0);
  EXPECT_EQ(s.percentile(100), 7.0);
}

TEST(Samples, PercentileKeepsInsertionOrderAndSeesLaterAdds) {
  Samples s = samples_of({3, 1, 2});
  EXPECT_EQ(s.median(), 2.0);
  EXPECT_EQ(s.values(), (std::vector<double>{3, 1, 2}));
  s.add(0);  // invalidates the sorted cache
  EXPECT_EQ(s.percentile(0), 0.0);
  EXPECT_EQ(s.median(), 1.5);
  EXPECT_EQ(s.values(), (std::vector<double>{3, 1, 2, 0}));
}

TEST(Samples, BadUseThrows) {
  Samples s;
  EXPECT_THROW(s.percentile(50), InvariantError);
  EXPECT_THROW(s.median(), InvariantError);
  EXPECT_THROW(s.mean(), InvariantError);
  EXPECT_THROW(s.add(kNan), InvariantError);
  EXPECT_THROW(s.add(-kInf), InvariantError);
  s.add(1);
  EXPECT_THROW(s.percentile(-0.1), InvariantError);
  EXPECT_THROW(s.percentile(100.5), InvariantError);
  EXPECT_THROW(s.percentile(kNan), InvariantError);
}

TEST(Histogram, BinEdgesAndOverflow) {
  Histogram h(0, 10, 5);  // bins [0,2) [2,4) [4,6) [6,8) [8,10)
  EXPECT_EQ(h.bins(), 5u);
  EXPECT_EQ(h.bin_lower(0), 0.0);
  EXPECT_EQ(h.bin_upper(0), 2.0);
  EXPECT_EQ(h.bin_lower(2), 4.0);
  EXPECT_EQ(h.bin_upper(4), 10.0);
  for (double x : {-0.5, 0.0, 1.99, 2.0, 5.0, 9.999, 10.0, 11.0, -kInf, kInf}) h.add(x);
  EXPECT_EQ(h.underflow(), 2u);  // -0.5, -inf
  EXPECT_EQ(h.count(0), 2u);     // 0, 1.99
  EXPECT_EQ(h.count(1), 1u);     // 2 (lower edge is inclusive)
  EXPECT_EQ(h.count(2), 1u);     // 5
  EXPECT_EQ(h.count(3), 0u);
  EXPECT_EQ(h.count(4), 1u);    // 9.999
  EXPECT_EQ(h.overflow(), 3u);  // 10 (upper bound is exclusive), 11, inf
  EXPECT_EQ(h.total(), 10u);
}

TEST(Histogram, ValuesLandBetweenTheirReportedEdges) {
  // Widths like 0.01 are not representable, so (x - lo) / width misplaces
  // some values on or next to an edge: 0.29 / 0.01 = 28.999..., yet 0.29 is
  // bin_lower(29) of [0, 1) in 100 bins; 1.2 in [1, 2) in 10 bins likewise.
  // add() must agree with the edges it reports.
  struct Case {
    double lo, hi;
    std::size_t bins;
  };
  for (const Case c : {Case{0, 1, 100}, Case{1, 2, 10}, Case{-1, 1, 10}, Case{0, 1, 10}}) {
    const Histogram edges(c.lo, c.hi, c.bins);
    for (std::size_t i = 0; i < c.bins; ++i) {
      if (i + 1 < c.bins) {
        EXPECT_EQ(edges.bin_upper(i), edges.bin_lower(i + 1));
      }
      for (double x : {edges.bin_lower(i), std::nextafter(edges.bin_upper(i), c.lo)}) {
        Histogram one(c.lo, c.hi, c.bins);
        one.add(x);
        EXPECT_EQ(one.count(i), 1u) << "[" << c.lo << ", " << c.hi << ") / " << c.bins
                                    << ": x = " << x << " belongs in bin " << i;
      }
    }
  }
}

TEST(Histogram, BadUseThrows) {
  EXPECT_THROW(Histogram(0, 1, 0), InvariantError);
  EXPECT_THROW(Histogram(1, 1, 4), InvariantError);
  EXPECT_THROW(Histogram(0, kInf, 4), InvariantError);
  Histogram h(0, 1, 4);
  EXPECT_THROW(h.add(kNan), InvariantError);
  EXPECT_THROW(h.count(4), InvariantError);
  EXPECT_THROW(h.bin_lower(4), InvariantError);
  EXPECT_THROW(h.bin_upper(4), InvariantError);
  EXPECT_EQ(h.total(), 0u);
}

}  // namespace
}  // namespace clustersim::sim
