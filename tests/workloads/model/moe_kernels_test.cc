// A rank's grouped expert GEMM: padding to the tile, one kernel's fixed
// cost over all experts, and its time at balanced and skewed loads against
// the compute model's formula worked by hand.
#include "workloads/model/moe_kernels.h"

#include <gtest/gtest.h>

#include <vector>

#include "hardware/hardware_profile.h"
#include "workloads/model/compute_model.h"
#include "workloads/model/moe_routing.h"

namespace clustersim::workloads {
namespace {

GpuComputeSpec h100() {
  return compute_spec_from_profile(
      collectives::load_hardware_profile(CLUSTERSIM_SOURCE_DIR "/scenarios/hardware/h100.yaml"));
}

// DeepSeek-V3's expert fc1 (SwiGLU gate and up: n = 2 x 2048, k = 7168).
constexpr int64_t kN = 4096;
constexpr int64_t kK = 7168;

TEST(GroupedGemm, RowsArePaddedToTheTileAndEmptyExpertsSkipped) {
  const std::vector<int64_t> rows{3000, 10, 0, 500};
  const Kernel g = grouped_gemm("experts.fc1", rows, kN, kK, 2, 2);
  // 3000 -> 3072, 10 -> 128, 500 -> 512: 3712 rows over 3 experts.
  EXPECT_EQ(g.groups, 3);
  EXPECT_EQ(g.m, 3712 / 3);
  EXPECT_DOUBLE_EQ(g.flops, 2.0 * 3712 * kN * kK);
  EXPECT_DOUBLE_EQ(g.bytes, 3.0 * kN * kK * 2 + 3510.0 * (kN + kK) * 2);
  const Kernel none = grouped_gemm("experts.fc1", std::vector<int64_t>{0, 0}, kN, kK, 2, 2);
  EXPECT_EQ(none.flops, 0);
  EXPECT_EQ(kernel_seconds(none, h100()), 0);
}

// Eight experts of 1024 tokens each: compute-bound, at the bf16 curve with
// the work of all eight (x = 8 x 2 x 1024 x 4096 x 7168) and the shape of
// one (min dim 1024): eff = e_max / (1 + x_half / x + dim_half / 1024).
TEST(GroupedGemm, BalancedLoadIsOneKernelAtTheCurvesEfficiency) {
  const GpuComputeSpec spec = h100();
  const std::vector<int64_t> rows(8, 1024);
  const Kernel g = grouped_gemm("experts.fc1", rows, kN, kK, 2, 2);
  const double x = 8.0 * 2 * 1024 * kN * kK;
  const double eff = spec.gemm.e_max / (1 + spec.gemm.x_half / x + spec.gemm.dim_half / 1024.0);
  EXPECT_NEAR(kernel_efficiency(g, spec), eff, 1e-12);
  const double expected = g.flops / (spec.peak_flops * spec.sustained_clock * eff);
  EXPECT_NEAR(kernel_seconds(g, spec), expected, 1e-12);
}

// Where the curve has a shape term (B200's min_dim_half, fitted), the same
// work as one 8192-row GEMM runs faster than eight experts of 1024 rows.
TEST(GroupedGemm, ThinExpertsRunBelowOneDenseGemmWhereTheCurveHasAShapeTerm) {
  const GpuComputeSpec spec = compute_spec_from_profile(
      collectives::load_hardware_profile(CLUSTERSIM_SOURCE_DIR "/scenarios/hardware/b200.yaml"));
  ASSERT_GT(spec.gemm.dim_half, 0);
  const Kernel g = grouped_gemm("experts.fc1", std::vector<int64_t>(8, 1024), kN, kK, 2, 2);
  Kernel dense = g;
  dense.groups = 1;
  dense.m = 8192;
  const double ratio = (1 + spec.gemm.x_half / g.flops + spec.gemm.dim_half / 1024.0) /
                       (1 + spec.gemm.x_half / g.flops + spec.gemm.dim_half / 4096.0);
  EXPECT_NEAR(kernel_seconds(g, spec) / kernel_seconds(dense, spec), ratio, 1e-9);
  EXPECT_GT(ratio, 1.0);
}

// The slowest EP rank under a Zipf-skewed router (exponent 1.2, 64 experts
// on 8 ranks, 16384 tokens top-8): its grouped GEMM takes its tokens'
// share longer than a uniform rank's, within the padding.
TEST(GroupedGemm, SkewedRouterSlowsTheSlowestRankByItsTokenShare) {
  const GpuComputeSpec spec = h100();
  MoeRoutingSpec skewed;
  skewed.routing = MoeRouting::kSkewed;
  skewed.skew = 1.2;
  const ExpertLoad even = route_tokens(16384, 8, 64, 8, {}, 0);
  const ExpertLoad skew = route_tokens(16384, 8, 64, 8, skewed, 0);
  const auto rank_rows = [](const ExpertLoad& load, int64_t rank) {
    return std::vector<int64_t>(load.tokens.begin() + rank * 8, load.tokens.begin() + rank * 8 + 8);
  };
  int64_t slowest = 0;
  for (int64_t r = 1; r < 8; ++r) {
    if (skew.rank_tokens[static_cast<size_t>(r)] > skew.rank_tokens[static_cast<size_t>(slowest)]) {
      slowest = r;
    }
  }
  const double t_even =
      kernel_seconds(grouped_gemm("experts.fc1", rank_rows(even, 0), kN, kK, 2, 2), spec);
  const double t_skew =
      kernel_seconds(grouped_gemm("experts.fc1", rank_rows(skew, slowest), kN, kK, 2, 2), spec);
  EXPECT_GT(skew.imbalance(), 1.5);
  // Uniform: 2048 rows an expert, no padding. The slowest rank's ratio is its
  // token share, give or take its padding (< 128 rows an expert) and the
  // efficiency's shape term.
  EXPECT_NEAR(t_skew / t_even, skew.imbalance(), 0.1 * skew.imbalance());
  EXPECT_GT(t_skew / t_even, 1.5);
}

}  // namespace
}  // namespace clustersim::workloads
