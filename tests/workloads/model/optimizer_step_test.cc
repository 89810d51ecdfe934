#include "workloads/model/optimizer_step.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string_view>
#include <vector>

namespace clustersim::workloads {
namespace {

std::vector<std::string_view> names_of(const std::vector<Kernel>& ks) {
  std::vector<std::string_view> out;
  for (const Kernel& k : ks) out.push_back(k.name);
  return out;
}

TEST(OptimizerStep, FusedAdamwMovesTwentyEightBytesPerParameter) {
  const Kernel k = adamw_step(1'000'000);
  EXPECT_EQ(k.name, "adamw");
  EXPECT_EQ(k.cls, KernelClass::kOptimizer);
  EXPECT_DOUBLE_EQ(k.bytes, 28e6);
  EXPECT_DOUBLE_EQ(k.flops, 14e6);
  EXPECT_DOUBLE_EQ(adamw_step(1'000'000, {4, 0}).bytes, 28e6);
  EXPECT_DOUBLE_EQ(adamw_step(1'000'000, {2, 0}).bytes, 26e6);
  // Naming the implementation changes nothing.
  const Kernel fused = adamw_step(1'000'000, {4, 0}, OptimizerImplementation::kFused);
  EXPECT_EQ(fused.name, "adamw");
  EXPECT_DOUBLE_EQ(fused.bytes, 28e6);
  EXPECT_DOUBLE_EQ(fused.flops, 14e6);
}

// bf16 state (Apex's DistributedFusedAdam, dtype bf16): master weight and
// moments read and written at 2 bytes: bf16 gradient 2 + 6 + 6 + bf16 copy 2.
TEST(OptimizerStep, SixteenBitStateHalvesTheStatesBytes) {
  EXPECT_DOUBLE_EQ(adamw_step(1'000'000, {2, 2, 2}).bytes, 16e6);
  EXPECT_DOUBLE_EQ(adamw_step(1'000'000, {2, 2, 4}).bytes, 28e6);
  // foreach: the eight passes' fp32 operands at half the size (80 - 8 = 72
  // state bytes become 36), the gradient's reads as they were.
  EXPECT_DOUBLE_EQ(adamw_step(1000, {4, 0, 2}, OptimizerImplementation::kForeach).bytes,
                   36000 + 8000);
}

TEST(OptimizerStep, ForeachRunsEightPassesOfHandCountedBytes) {
  // 1000 parameters, fp32 gradients (g = 4), no low-precision copy: per
  // parameter 8 (mul) + 12 (lerp) + 8 (mul) + 12 (addcmul) + 8 (sqrt) + 8
  // (div) + 8 (add) + 16 (addcdiv) = 80.
  const std::vector<Kernel> ops = adamw_foreach_ops(1000, {4, 0});
  EXPECT_THAT(
      names_of(ops),
      ::testing::ElementsAre("adamw.foreach.mul_weight_decay", "adamw.foreach.lerp_exp_avg",
                             "adamw.foreach.mul_exp_avg_sq", "adamw.foreach.addcmul_exp_avg_sq",
                             "adamw.foreach.sqrt_exp_avg_sq", "adamw.foreach.div_bias_correction",
                             "adamw.foreach.add_eps", "adamw.foreach.addcdiv_param"));
  const std::vector<double> bytes = {8000, 12000, 8000, 12000, 8000, 8000, 8000, 16000};
  const std::vector<double> flops = {1000, 3000, 1000, 3000, 1000, 1000, 1000, 3000};
  for (size_t i = 0; i < ops.size(); ++i) {
    EXPECT_EQ(ops[i].cls, KernelClass::kOptimizer) << ops[i].name;
    EXPECT_DOUBLE_EQ(ops[i].bytes, bytes[i]) << ops[i].name;
    EXPECT_DOUBLE_EQ(ops[i].flops, flops[i]) << ops[i].name;
  }
  EXPECT_DOUBLE_EQ(total_bytes(ops), 80000);
  EXPECT_DOUBLE_EQ(total_flops(ops), 14000);

  const Kernel step = adamw_step(1000, {4, 0}, OptimizerImplementation::kForeach);
  EXPECT_EQ(step.name, "adamw.foreach");
  EXPECT_EQ(step.cls, KernelClass::kOptimizer);
  EXPECT_DOUBLE_EQ(step.bytes, 80000);
  EXPECT_DOUBLE_EQ(step.flops, 14000);  // the same arithmetic as fused
}

TEST(OptimizerStep, ForeachReadsBf16GradientsTwiceAndWritesTheCopyLast) {
  // bf16 gradients (g = 2), no copy: 72 + 2 x 2 = 76 bytes per parameter;
  // only lerp and addcmul read the gradient (10 bytes each).
  const std::vector<Kernel> ops = adamw_foreach_ops(1000, {2, 0});
  ASSERT_EQ(ops.size(), 8u);
  EXPECT_DOUBLE_EQ(ops[1].bytes, 10000);
  EXPECT_DOUBLE_EQ(ops[3].bytes, 10000);
  EXPECT_DOUBLE_EQ(total_bytes(ops), 76000);
  EXPECT_DOUBLE_EQ(adamw_step(1000, {2, 0}, OptimizerImplementation::kForeach).bytes, 76000);
  // With a bf16 copy (the default precision): a ninth pass writing 2 bytes,
  // 78 in all against fused's 2 + 24 + 2 = 28.
  const std::vector<Kernel> with_copy = adamw_foreach_ops(1000);
  ASSERT_EQ(with_copy.size(), 9u);
  EXPECT_EQ(with_copy.back().name, "adamw.foreach.param_copy");
  EXPECT_DOUBLE_EQ(with_copy.back().bytes, 2000);
  EXPECT_DOUBLE_EQ(with_copy.back().flops, 0);
  EXPECT_DOUBLE_EQ(adamw_step(1000, {}, OptimizerImplementation::kForeach).bytes, 78000);
  EXPECT_DOUBLE_EQ(adamw_step(1000).bytes, 28000);
}

TEST(OptimizerStep, ImplementationNames) {
  EXPECT_EQ(optimizer_implementation_name(OptimizerImplementation::kFused), "fused");
  EXPECT_EQ(optimizer_implementation_name(OptimizerImplementation::kForeach), "foreach");
}

}  // namespace
}  // namespace clustersim::workloads
