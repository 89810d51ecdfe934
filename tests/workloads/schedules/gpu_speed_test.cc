// schedules/gpu_speed: per-GPU compute-time factors exp(sd * z), drawn per
// rank from the scenario's seed.
#include "workloads/schedules/gpu_speed.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "sim/check.h"
#include "sim/distributions.h"
#include "sim/random_stream.h"

namespace clustersim::workloads {
namespace {

TEST(GpuSpeed, NoSpreadMeansNoFactors) { EXPECT_TRUE(gpu_time_factors(8, 0.0, 1).empty()); }

TEST(GpuSpeed, EachRankIsExpOfSdTimesItsOwnNormalDraw) {
  const std::vector<double> f = gpu_time_factors(4, 0.015, 7);
  ASSERT_EQ(f.size(), 4u);
  for (int r = 0; r < 4; ++r) {
    sim::RandomStream rng(7, "gpu.speed", static_cast<uint64_t>(r));
    EXPECT_DOUBLE_EQ(f[static_cast<size_t>(r)], std::exp(0.015 * sim::Normal::standard(rng)));
  }
}

TEST(GpuSpeed, AGpuKeepsItsSpeedWhateverTheJobSize) {
  const std::vector<double> small = gpu_time_factors(8, 0.015, 3);
  const std::vector<double> large = gpu_time_factors(1024, 0.015, 3);
  for (size_t r = 0; r < small.size(); ++r) EXPECT_EQ(small[r], large[r]);
  EXPECT_NE(gpu_time_factors(8, 0.015, 4), small);  // another seed, other GPUs
}

TEST(GpuSpeed, LogFactorsHaveTheProfilesSpreadAndMedianOne) {
  const std::vector<double> f = gpu_time_factors(200000, 0.015, 1);
  double sum = 0, sum2 = 0;
  for (double x : f) {
    sum += std::log(x);
    sum2 += std::log(x) * std::log(x);
  }
  const double n = static_cast<double>(f.size());
  const double mean = sum / n;
  EXPECT_NEAR(mean, 0.0, 0.0002);  // 5 standard errors: 0.015 / sqrt(2e5) = 3.4e-5
  EXPECT_NEAR(std::sqrt(sum2 / n - mean * mean), 0.015, 0.0002);
  std::vector<double> sorted = f;
  std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
  EXPECT_NEAR(sorted[sorted.size() / 2], 1.0, 0.0002);
}

TEST(GpuSpeed, RejectsANegativeSpread) {
  EXPECT_THROW(gpu_time_factors(8, -0.01, 1), sim::InvariantError);
}

}  // namespace
}  // namespace clustersim::workloads
