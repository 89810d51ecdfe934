// model/math_attention: the unfused attention's kernels against hand-computed
// FLOPs and bytes, and what the block and the memory model do with it.
#include "workloads/model/math_attention.h"

#include <gtest/gtest.h>

#include <string_view>
#include <vector>

#include "workloads/model/memory_model.h"
#include "workloads/model/model_spec.h"
#include "workloads/model/transformer_kernels.h"
#include "workloads/model/workload_config.h"

namespace clustersim::workloads {
namespace {

// b = 2 sequences of s = 128, 4 heads of d = 32, bf16: E = 2*4*128*128 = 131,072 scores.
constexpr MathAttentionShape kShape{2, 128, 4, 32, 2, true};
constexpr double kE = 2.0 * 4 * 128 * 128;

std::vector<std::string_view> names(const std::vector<Kernel>& ks) {
  std::vector<std::string_view> out;
  for (const Kernel& k : ks) out.push_back(k.name);
  return out;
}

TEST(MathAttention, EagerForwardIsTwoBatchedGemmsAroundFourScoreKernels) {
  std::vector<Kernel> f;
  math_attention_forward(f, kShape);
  EXPECT_EQ(names(f), (std::vector<std::string_view>{"attention.scores", "attention.scale",
                                                     "attention.mask", "attention.softmax",
                                                     "attention.softmax_cast",
                                                     "attention.context"}));
  // Q K^T: 8 products of 128 x 128 x 32, stacked: m = 1024.
  EXPECT_EQ(f[0].cls, KernelClass::kGemm);
  EXPECT_EQ(f[0].m, 1024);
  EXPECT_EQ(f[0].n, 128);
  EXPECT_EQ(f[0].k, 32);
  EXPECT_DOUBLE_EQ(f[0].flops, 2.0 * 8 * 128 * 128 * 32);  // 8,388,608
  EXPECT_DOUBLE_EQ(f[0].bytes, 2.0 * 8 * (128 * 32 + 32 * 128 + 128 * 128));
  // P V: 128 x 32 x 128 each.
  EXPECT_EQ(f[5].n, 32);
  EXPECT_EQ(f[5].k, 128);
  EXPECT_DOUBLE_EQ(f[5].flops, f[0].flops);
  // Softmax in fp32 under autocast: bf16 in, fp32 out; the cast back.
  EXPECT_DOUBLE_EQ(f[3].bytes, (2 + 4) * kE);
  EXPECT_DOUBLE_EQ(f[4].bytes, (4 + 2) * kE);
  EXPECT_DOUBLE_EQ(f[2].bytes, (2 * 2 + 1) * kE);  // masked_fill and the bool mask
}

TEST(MathAttention, BackwardDoublesTheGemmsAndCompiledFusesTheScoreKernels) {
  std::vector<Kernel> b;
  math_attention_backward(b, kShape);
  ASSERT_EQ(b.size(), 8u);
  double gemm_flops = 0;
  for (const Kernel& k : b) {
    if (k.cls == KernelClass::kGemm) gemm_flops += k.flops;
  }
  EXPECT_DOUBLE_EQ(gemm_flops, 4 * 2.0 * 8 * 128 * 128 * 32);  // dP, dV, dQ, dK
  MathAttentionShape compiled = kShape;
  compiled.eager = false;
  std::vector<Kernel> f, cb;
  math_attention_forward(f, compiled);
  math_attention_backward(cb, compiled);
  EXPECT_EQ(names(f), (std::vector<std::string_view>{"attention.scores", "attention.softmax",
                                                     "attention.context"}));
  EXPECT_DOUBLE_EQ(f[1].bytes, 2 * 2 * kE);  // bf16 in and out, one pass
  EXPECT_EQ(cb.size(), 5u);
}

TEST(MathAttention, BlocksUseItAndMemoryKeepsTheProbabilities) {
  const ModelSpec m = *model_preset("llama2-7b");
  KernelConfig c;
  c.seq_len = 512;
  c.micro_batch = 1;
  c.flash_attention = false;
  bool flash = false, scores = false;
  for (const Kernel& k : block_forward(m, c)) {
    flash |= k.name == "attention";
    scores |= k.name == "attention.scores";
  }
  EXPECT_FALSE(flash);
  EXPECT_TRUE(scores);

  WorkloadSpec w;
  w.model = m;
  w.seq_len = 512;
  w.local_batch = 1;
  w.world_size = w.dp_size = w.shard_group_size = 8;
  w.replica_group_size = 1;
  const int64_t with_flash = layer_activation_bytes(w);
  w.flash_attention = false;
  // The log-sum-exp (T x heads x 4) gives way to the probabilities (heads x s x s x 2).
  EXPECT_EQ(layer_activation_bytes(w) - with_flash, 32 * 512 * 512 * 2 - 512 * 32 * 4);
}

}  // namespace
}  // namespace clustersim::workloads
