#include "workloads/transformer_kernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string_view>
#include <vector>

#include "sim/check.h"
#include "workloads/model_spec.h"

namespace clustersim::workloads {
namespace {

ModelSpec preset(std::string_view name) {
  const std::optional<ModelSpec> m = model_preset(name);
  EXPECT_TRUE(m.has_value()) << name;
  return m.value_or(ModelSpec{});
}

KernelConfig config(int64_t seq, int64_t batch, int64_t tp = 1, bool sp = false) {
  KernelConfig c;
  c.seq_len = seq;
  c.micro_batch = batch;
  c.tp = tp;
  c.sequence_parallel = sp;
  return c;
}

// Every kernel of one training step (one micro-batch), optimizer excluded.
std::vector<Kernel> step_kernels(const ModelSpec& m, const KernelConfig& c) {
  std::vector<Kernel> all = embedding_forward(m, c);
  for (int64_t i = 0; i < m.layers; ++i) {
    for (const Kernel& k : block_forward(m, c)) all.push_back(k);
  }
  for (const Kernel& k : head_forward(m, c)) all.push_back(k);
  for (const Kernel& k : head_backward(m, c)) all.push_back(k);
  for (int64_t i = 0; i < m.layers; ++i) {
    for (const Kernel& k : block_backward(m, c)) all.push_back(k);
  }
  for (const Kernel& k : embedding_backward(m, c)) all.push_back(k);
  return all;
}

double flops_of(const std::vector<Kernel>& ks, KernelClass cls) {
  double sum = 0;
  for (const Kernel& k : ks) {
    if (k.cls == cls) sum += k.flops;
  }
  return sum;
}

// By value: callers pass temporaries.
Kernel find(const std::vector<Kernel>& ks, std::string_view name) {
  for (const Kernel& k : ks) {
    if (k.name == name) return k;
  }
  ADD_FAILURE() << "no kernel " << name;
  return Kernel{};
}

double relative_error(double actual, double expected) {
  return std::abs(actual - expected) / std::abs(expected);
}

// Llama 3 8B, seq 8192, batch 1. Matmul parameters by hand: per block
// q 4096*4096 + k, v 4096*1024 each + o 4096*4096 + MLP 3*4096*14336 =
// 218,103,808; 32 blocks + output head 128256*4096 = 7,504,658,432 = N.
// GEMM FLOPs = 6 N T (forward 2 N T, backward dgrad + wgrad 4 N T).
// Causal attention: forward 4 b s^2 H / 2 = 2 b s^2 H per layer, backward
// 2.5x that, so 7 b s^2 H per layer.
TEST(TransformerKernels, Llama3_8bStepMatmulFlopsByHand) {
  const ModelSpec m = preset("llama3-8b");
  const std::vector<Kernel> step = step_kernels(m, config(8192, 1));
  const double n = 32.0 * 218'103'808 + 128256.0 * 4096;
  ASSERT_EQ(n, 7'504'658'432.0);
  const double t = 8192;
  const double gemm = 6 * n * t;
  const double attention = 7 * 32 * 8192.0 * 8192.0 * 4096;
  EXPECT_LT(relative_error(flops_of(step, KernelClass::kGemm), gemm), 1e-9);
  EXPECT_LT(relative_error(flops_of(step, KernelClass::kAttention), attention), 1e-9);
  const double matmul =
      flops_of(step, KernelClass::kGemm) + flops_of(step, KernelClass::kAttention);
  EXPECT_LT(relative_error(matmul, gemm + attention), 1e-9);
  // 52.54 GFLOP per token executed by the matmuls; the small kernels add <1%.
  EXPECT_NEAR(matmul / t / 1e9, 52.544, 0.001);
  const double small = total_flops(step) - matmul;
  EXPECT_GT(small, 0);
  EXPECT_LT(small / matmul, 0.01);
}

TEST(TransformerKernels, ModelFlopsPerTokenIsPalmsFormula) {
  // 6 N + 6 L s H (causal), N = 7,504,658,432 as above.
  EXPECT_DOUBLE_EQ(model_flops_per_token(preset("llama3-8b"), 8192),
                   6 * 7'504'658'432.0 + 6 * 32 * 8192.0 * 4096);
  EXPECT_DOUBLE_EQ(model_flops_per_token(preset("llama3-8b"), 8192, /*causal=*/false),
                   6 * 7'504'658'432.0 + 12 * 32 * 8192.0 * 4096);
  // GPT-3: the tied head still runs its GEMM: N = 96 * 12 H^2 + V H.
  const double h = 12288;
  EXPECT_DOUBLE_EQ(model_flops_per_token(preset("gpt3-175b"), 2048),
                   6 * (96 * 12 * h * h + 50257 * h) + 6 * 96 * 2048 * h);
}

TEST(TransformerKernels, GemmShapesOfALlama3_8bBlock) {
  const std::vector<Kernel> fwd = block_forward(preset("llama3-8b"), config(8192, 2));
  const Kernel qkv = find(fwd, "qkv_proj");
  EXPECT_EQ(qkv.cls, KernelClass::kGemm);
  EXPECT_EQ(qkv.m, 16384);
  EXPECT_EQ(qkv.k, 4096);
  EXPECT_EQ(qkv.n, 4096 + 2 * 1024);
  EXPECT_DOUBLE_EQ(qkv.flops, 2.0 * 16384 * 6144 * 4096);
  EXPECT_DOUBLE_EQ(qkv.bytes, 2.0 * (16384.0 * 4096 + 4096.0 * 6144 + 16384.0 * 6144));
  const Kernel gate_up = find(fwd, "gate_up_proj");
  EXPECT_EQ(gate_up.n, 2 * 14336);
  EXPECT_EQ(gate_up.k, 4096);
  const Kernel down = find(fwd, "down_proj");
  EXPECT_EQ(down.k, 14336);
  EXPECT_EQ(down.n, 4096);

  const std::vector<Kernel> bwd = block_backward(preset("llama3-8b"), config(8192, 2));
  const Kernel dgrad = find(bwd, "qkv_proj.dgrad");
  EXPECT_EQ(dgrad.m, 16384);
  EXPECT_EQ(dgrad.n, 4096);
  EXPECT_EQ(dgrad.k, 6144);
  const Kernel wgrad = find(bwd, "qkv_proj.wgrad");
  EXPECT_EQ(wgrad.m, 4096);
  EXPECT_EQ(wgrad.n, 6144);
  EXPECT_EQ(wgrad.k, 16384);
}

TEST(TransformerKernels, KernelOrderOfABlock) {
  std::vector<std::string_view> names;
  for (const Kernel& k : block_forward(preset("llama3-8b"), config(128, 1))) {
    names.push_back(k.name);
  }
  EXPECT_EQ(names, (std::vector<std::string_view>{
                       "attn_norm", "qkv_proj", "rotary", "attention", "out_proj", "attn_residual",
                       "mlp_norm", "gate_up_proj", "swiglu", "down_proj", "mlp_residual"}));
  EXPECT_EQ(block_backward(preset("llama3-8b"), config(128, 1)).size(), 15u);
  names.clear();
  for (const Kernel& k : block_forward(preset("gpt3-175b"), config(128, 1))) {
    names.push_back(k.name);
  }
  EXPECT_EQ(names, (std::vector<std::string_view>{"attn_norm", "qkv_proj", "attention", "out_proj",
                                                  "attn_residual", "mlp_norm", "up_proj", "gelu",
                                                  "down_proj", "mlp_residual"}));
  EXPECT_EQ(embedding_forward(preset("gpt3-175b"), config(128, 1)).size(), 2u);
  EXPECT_EQ(embedding_forward(preset("llama3-8b"), config(128, 1)).size(), 1u);
}

TEST(TransformerKernels, BackwardIsTwiceForwardForGemmsAndTwoAndAHalfForAttention) {
  for (std::string_view name : {"llama3-70b", "gpt3-175b"}) {
    const ModelSpec m = preset(name);
    const std::vector<Kernel> fwd = block_forward(m, config(4096, 2));
    const std::vector<Kernel> bwd = block_backward(m, config(4096, 2));
    EXPECT_EQ(flops_of(bwd, KernelClass::kGemm), 2 * flops_of(fwd, KernelClass::kGemm)) << name;
    EXPECT_EQ(flops_of(bwd, KernelClass::kAttention), 2.5 * flops_of(fwd, KernelClass::kAttention))
        << name;
    const std::vector<Kernel> head_fwd = head_forward(m, config(4096, 2));
    const std::vector<Kernel> head_bwd = head_backward(m, config(4096, 2));
    EXPECT_EQ(flops_of(head_bwd, KernelClass::kGemm), 2 * flops_of(head_fwd, KernelClass::kGemm));
  }
}

TEST(TransformerKernels, CausalAttentionIsHalfOfNonCausal) {
  const ModelSpec m = preset("llama3-8b");
  KernelConfig causal = config(8192, 1);
  KernelConfig full = causal;
  full.causal = false;
  const Kernel a = find(block_forward(m, causal), "attention");
  const Kernel b = find(block_forward(m, full), "attention");
  // Non-causal: 4 * b * s^2 * heads * head_dim.
  EXPECT_DOUBLE_EQ(b.flops, 4.0 * 8192 * 8192 * 32 * 128);
  EXPECT_DOUBLE_EQ(a.flops, b.flops / 2);
  EXPECT_TRUE(a.causal);
  EXPECT_EQ(a.heads, 32);
  EXPECT_EQ(a.kv_heads, 8);
  EXPECT_EQ(a.head_dim, 128);
  EXPECT_EQ(a.seq, 8192);
  EXPECT_DOUBLE_EQ(find(block_backward(m, causal), "attention.bwd").flops,
                   find(block_backward(m, full), "attention.bwd").flops / 2);
  // Bytes: Q and O (8192 x 4096), K and V (8192 x 1024) in bf16, fp32 LSE per row and head.
  EXPECT_DOUBLE_EQ(a.bytes, 2.0 * (2 * 8192.0 * 4096 + 2 * 8192.0 * 1024) + 4.0 * 8192 * 32);
}

TEST(TransformerKernels, TensorParallelHalvesPerRankMatmuls) {
  const ModelSpec m = preset("llama3-8b");
  const std::vector<Kernel> one = step_kernels(m, config(8192, 1, 1));
  const std::vector<Kernel> two = step_kernels(m, config(8192, 1, 2));
  EXPECT_EQ(flops_of(two, KernelClass::kGemm), flops_of(one, KernelClass::kGemm) / 2);
  EXPECT_EQ(flops_of(two, KernelClass::kAttention), flops_of(one, KernelClass::kAttention) / 2);
  const std::vector<Kernel> fwd = block_forward(m, config(8192, 1, 2));
  EXPECT_EQ(find(fwd, "qkv_proj").n, 3072);  // column-parallel
  EXPECT_EQ(find(fwd, "out_proj").k, 2048);  // row-parallel
  EXPECT_EQ(find(fwd, "gate_up_proj").n, 14336);
  EXPECT_EQ(find(fwd, "down_proj").k, 7168);
  EXPECT_EQ(find(fwd, "attention").heads, 16);
  EXPECT_EQ(find(fwd, "attention").kv_heads, 4);
  EXPECT_EQ(find(head_forward(m, config(8192, 1, 2)), "lm_head").n, 64128);
  // Without sequence parallelism every rank repeats the norms on all tokens.
  EXPECT_EQ(find(fwd, "attn_norm").bytes,
            find(block_forward(m, config(8192, 1)), "attn_norm").bytes);
}

TEST(TransformerKernels, SequenceParallelNormsRunOnASliceOfTokens) {
  const ModelSpec m = preset("llama3-8b");
  const std::vector<Kernel> sp = block_forward(m, config(8192, 1, 4, /*sp=*/true));
  // RMSNorm on 2048 tokens: read and write 2048 x 4096 bf16, plus the weight.
  EXPECT_DOUBLE_EQ(find(sp, "attn_norm").bytes, 2.0 * (2 * 2048.0 * 4096 + 4096));
  EXPECT_DOUBLE_EQ(find(sp, "attn_norm").flops, 4.0 * 2048 * 4096);
  EXPECT_DOUBLE_EQ(find(sp, "mlp_residual").bytes, 2.0 * 3 * 2048 * 4096);
}

TEST(TransformerKernels, ElementwiseBytesOnAKnownShape) {
  const ModelSpec m = preset("llama3-8b");
  const std::vector<Kernel> fwd = block_forward(m, config(8192, 1));
  // SwiGLU reads gate and up, writes their product: 3 x 8192 x 14336 bf16.
  const Kernel act = find(fwd, "swiglu");
  EXPECT_EQ(act.cls, KernelClass::kElementwise);
  EXPECT_DOUBLE_EQ(act.bytes, 3 * 2.0 * 8192 * 14336);
  EXPECT_DOUBLE_EQ(act.flops, 5.0 * 8192 * 14336);
  // Residual: two reads, one write of 8192 x 4096.
  EXPECT_DOUBLE_EQ(find(fwd, "attn_residual").bytes, 3 * 2.0 * 8192 * 4096);
  // Rotary on q and k: 8192 x (4096 + 1024) read and written.
  EXPECT_DOUBLE_EQ(find(fwd, "rotary").bytes, 2 * 2.0 * 8192 * 5120);
  const std::vector<Kernel> bwd = block_backward(m, config(8192, 1));
  EXPECT_DOUBLE_EQ(find(bwd, "swiglu.bwd").bytes, 2 * act.bytes);
  EXPECT_DOUBLE_EQ(find(bwd, "attn_residual.bwd").bytes, find(fwd, "attn_residual").bytes);
}

TEST(TransformerKernels, HeadAndEmbeddingOfLlama3_8b) {
  const ModelSpec m = preset("llama3-8b");
  const KernelConfig c = config(4096, 1);
  const std::vector<Kernel> head = head_forward(m, c);
  const Kernel lm = find(head, "lm_head");
  EXPECT_EQ(lm.m, 4096);
  EXPECT_EQ(lm.k, 4096);
  EXPECT_EQ(lm.n, 128256);
  const Kernel ce = find(head, "cross_entropy");
  EXPECT_EQ(ce.cls, KernelClass::kLoss);
  EXPECT_DOUBLE_EQ(ce.flops, 4.0 * 4096 * 128256);
  EXPECT_DOUBLE_EQ(ce.bytes, 2.0 * 4096 * 128256 + 8.0 * 4096 + 4.0 * 4096);
  const Kernel emb = find(embedding_forward(m, c), "embedding");
  EXPECT_EQ(emb.flops, 0);
  EXPECT_DOUBLE_EQ(emb.bytes, 8.0 * 4096 + 2 * 2.0 * 4096 * 4096);
  const Kernel emb_bwd = find(embedding_backward(m, c), "embedding.bwd");
  EXPECT_DOUBLE_EQ(emb_bwd.bytes, 2.0 * 128256 * 4096 + 8.0 * 4096 + 2.0 * 3 * 4096 * 4096);
}

TEST(TransformerKernels, AdamwMovesTwentyEightBytesPerParameter) {
  const Kernel k = adamw_step(1'000'000);
  EXPECT_EQ(k.cls, KernelClass::kOptimizer);
  EXPECT_DOUBLE_EQ(k.bytes, 28e6);
  EXPECT_DOUBLE_EQ(k.flops, 14e6);
  EXPECT_DOUBLE_EQ(adamw_step(1'000'000, {4, 0}).bytes, 28e6);
  EXPECT_DOUBLE_EQ(adamw_step(1'000'000, {2, 0}).bytes, 26e6);
}

TEST(TransformerKernels, TensorParallelDegreeMustSplitHeadsAndFfn) {
  const ModelSpec m = preset("llama3-8b");
  EXPECT_EQ(tensor_parallel_problem(m, 8), "");
  EXPECT_EQ(tensor_parallel_problem(m, 16),
            "expected a tensor-parallel degree dividing heads (32), kv_heads (8) and ffn_hidden "
            "(14336), found 16");
  EXPECT_NE(tensor_parallel_problem(m, 0), "");
  EXPECT_THROW(block_forward(m, config(128, 1, 3)), sim::InvariantError);
  EXPECT_THROW(block_forward(m, config(127, 1, 2, /*sp=*/true)), sim::InvariantError);
}

TEST(TransformerKernels, KernelClassNames) {
  EXPECT_EQ(kernel_class_name(KernelClass::kGemm), "gemm");
  EXPECT_EQ(kernel_class_name(KernelClass::kOptimizer), "optimizer");
}

}  // namespace
}  // namespace clustersim::workloads
