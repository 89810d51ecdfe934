#include "workloads/model/eager_rotary.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "config/scenario_loader.h"
#include "workloads/model/model_spec.h"
#include "workloads/model/transformer_kernels.h"
#include "workloads/model/workload_config.h"

namespace clustersim::workloads {
namespace {

// 4 tokens, head_dim 8, two query heads and one key head, bf16:
// E_q = 64, E_k = 32 elements.
constexpr EagerRotaryShape kShape{4, 4, 8, 16, 8, 2, false};

std::vector<std::string_view> names(const std::vector<Kernel>& ks) {
  std::vector<std::string_view> out;
  for (const Kernel& k : ks) out.push_back(k.name);
  return out;
}

double bytes(const std::vector<Kernel>& ks) { return total_bytes(ks); }

TEST(EagerRotary, ComplexFormIsFortyBytesPerElementPlusItsTable) {
  std::vector<Kernel> f, b;
  eager_rotary_forward(f, kShape);
  eager_rotary_backward(b, kShape);
  EXPECT_EQ(f.size(), 6u);
  EXPECT_EQ(b.size(), 8u);
  // (64 + 32) elements x 40 B, and the 4 x 4 x 8 = 128 B table read twice
  // forward, six times backward (two conj copies of 2 x 128, two reads).
  EXPECT_DOUBLE_EQ(bytes(f), 96 * 20 + 2 * 128);
  EXPECT_DOUBLE_EQ(bytes(b), 96 * 20 + 6 * 128);
}

TEST(EagerRotary, RotationMatrixFormIsSeventyTwoBytesPerElementPlusTheGatheredMatrices) {
  EagerRotaryShape r = kShape;
  r.by_matrix = true;
  std::vector<Kernel> f, b;
  eager_rotary_forward(f, r);
  eager_rotary_backward(b, r);
  EXPECT_EQ(names(f), (std::vector<std::string_view>{
                          "rotary.q_to_fp32", "rotary.k_to_fp32", "rotary.freqs_gather",
                          "rotary.q_mul_rotation", "rotary.q_sum_pairs", "rotary.q_type_as",
                          "rotary.k_mul_rotation", "rotary.k_sum_pairs", "rotary.k_type_as"}));
  EXPECT_EQ(names(b).front(), "rotary.k_type_as.bwd");
  EXPECT_EQ(names(b).back(), "rotary.q_to_fp32.bwd");
  EXPECT_EQ(b.size(), 8u);
  // Gathered matrices G = 4 tokens x 8 x 8 B = 256 B: written and read by the
  // gather, read by each of the four products.
  const double g = 256;
  // Forward per element 6 + 12 + 12 + 6 = 36 B: q 64 x 36, k 32 x 36.
  EXPECT_DOUBLE_EQ(bytes(f), 96 * 36 + 2 * g + 2 * g);
  EXPECT_DOUBLE_EQ(f[3].bytes, 64 * 12 + g);  // q's product: 4 B read, 8 B written
  EXPECT_DOUBLE_EQ(f[4].bytes, 64 * 12);      // its pair sums: 8 B read, 4 B written
  EXPECT_DOUBLE_EQ(bytes(b), 96 * 36 + 2 * g);
  EXPECT_DOUBLE_EQ(total_flops(f), 96 * 4);
}

TEST(EagerRotary, TheKeyChoosesTheEagerKernelsAndCompiledModeIgnoresIt) {
  sim::ConfigSchema schema;
  sim::add_scenario_identity_keys(schema);
  add_workload_keys(schema);
  const std::string yaml =
      "name: t\nworkload:\n  model: llama2-7b\n  seq_len: 512\n  local_batch: 1\n";
  const WorkloadSpec plain =
      read_workload_spec(sim::load_scenario_text(yaml, "s.yaml", schema), 8, 8);
  EXPECT_FALSE(plain.rotary_by_matrix);
  const WorkloadSpec fms = read_workload_spec(
      sim::load_scenario_text(yaml + "  rotary_embedding: rotation_matrix\n", "s.yaml", schema), 8,
      8);
  EXPECT_TRUE(fms.rotary_by_matrix);

  const ModelSpec m = *model_preset("llama2-7b");
  KernelConfig c;
  c.seq_len = 512;
  c.fusion = KernelFusion::kEager;
  const double complex_bytes = total_bytes(block_forward(m, c));
  c.rotary_by_matrix = true;
  // llama2-7b: q and k of 32 heads x 128 over 512 tokens; 16 B more per
  // element forward, and the gathered matrices G (512 x 128 x 8 B) moved four
  // times where the complex table (512 x 128 x 4 B) was read twice.
  const double e = 512.0 * 2 * 4096;
  const double g = 512.0 * 128 * 8;
  const double t = 512.0 * 128 * 4;
  EXPECT_DOUBLE_EQ(total_bytes(block_forward(m, c)) - complex_bytes, 16 * e + 4 * g - 2 * t);
  c.fusion = KernelFusion::kCompiled;
  const double compiled_matrix = total_bytes(block_forward(m, c));
  c.rotary_by_matrix = false;
  EXPECT_DOUBLE_EQ(total_bytes(block_forward(m, c)), compiled_matrix);
}

}  // namespace
}  // namespace clustersim::workloads
