#include "workloads/model/transformer_kernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string_view>
#include <vector>

#include "sim/check.h"
#include "workloads/model/model_spec.h"

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

KernelConfig eager(KernelConfig c) {
  c.fusion = KernelFusion::kEager;
  return c;
}

std::vector<std::string_view> names_of(const std::vector<Kernel>& ks) {
  std::vector<std::string_view> names;
  names.reserve(ks.size());
  for (const Kernel& k : ks) names.push_back(k.name);
  return names;
}

// Kernels whose name starts with `prefix`.
std::vector<Kernel> with_prefix(const std::vector<Kernel>& ks, std::string_view prefix) {
  std::vector<Kernel> out;
  for (const Kernel& k : ks) {
    if (k.name.starts_with(prefix)) out.push_back(k);
  }
  return out;
}

double matmul_flops(const std::vector<Kernel>& ks) {
  return flops_of(ks, KernelClass::kGemm) + flops_of(ks, KernelClass::kAttention);
}

// Bytes of the kernels other than GEMMs and attention.
double pointwise_bytes(const std::vector<Kernel>& ks) {
  double sum = 0;
  for (const Kernel& k : ks) {
    if (k.cls != KernelClass::kGemm && k.cls != KernelClass::kAttention) sum += k.bytes;
  }
  return sum;
}

// Llama 3 8B as torchtitan runs it: seq 8192, local batch 2, T = 16384.
// E = T x hidden = 16384 * 4096 = 67,108,864 elements, R = 16384 rows.
constexpr double kE = 16384.0 * 4096;
constexpr double kR = 16384;

TEST(TransformerKernels, EagerRmsNormOfLlama3_8bByHand) {
  const ModelSpec m = preset("llama3-8b");
  const std::vector<Kernel> fwd =
      with_prefix(block_forward(m, eager(config(8192, 2))), "attn_norm");
  EXPECT_EQ(names_of(fwd), (std::vector<std::string_view>{
                               "attn_norm.to_fp32", "attn_norm.pow", "attn_norm.mean",
                               "attn_norm.add_eps", "attn_norm.rsqrt", "attn_norm.mul_rstd",
                               "attn_norm.type_as", "attn_norm.mul_weight"}));
  // x.float(): read bf16, write fp32, 6 bytes per element.
  EXPECT_DOUBLE_EQ(find(fwd, "attn_norm.to_fp32").bytes, 6 * kE);
  // mean(-1): read fp32 E, write one fp32 per row.
  EXPECT_DOUBLE_EQ(find(fwd, "attn_norm.mean").bytes, 4 * kE + 4 * kR);
  // Sum (28 + 4d) E + 24 R + d H = 36 E + 24 R + 2 * 4096 = 2,416,320,512 bytes, nine times
  // the compiled kernel's 4 E + 2 H = 268,443,648.
  EXPECT_DOUBLE_EQ(total_bytes(fwd), 2'416'320'512.0);
  EXPECT_DOUBLE_EQ(find(block_forward(m, config(8192, 2)), "attn_norm").bytes, 268'443'648.0);
  // 4 E + 2 R flops, the compiled kernel's 4 E plus eps and rsqrt per row.
  EXPECT_DOUBLE_EQ(total_flops(fwd), 4 * kE + 2 * kR);

  const std::vector<Kernel> bwd =
      with_prefix(block_backward(m, eager(config(8192, 2))), "attn_norm");
  EXPECT_EQ(bwd.size(), 16u);
  // (76 + 8d) E + 40 R + 2 d H = 92 E + 40 R + 4 * 4096 = 6,174,687,232 bytes.
  EXPECT_DOUBLE_EQ(total_bytes(bwd), 6'174'687'232.0);
  EXPECT_DOUBLE_EQ(total_flops(bwd), 10 * kE + 4 * kR);
  // Autograd adds the two fp32 gradients of x.float() (pow and mul): 12 bytes per element.
  EXPECT_DOUBLE_EQ(find(bwd, "attn_norm.grad_accumulate").bytes, 12 * kE);

  // Sequence parallelism: the eager norm runs on T / tp tokens too.
  const std::vector<Kernel> sp = block_forward(m, eager(config(8192, 2, 4, /*sp=*/true)));
  EXPECT_DOUBLE_EQ(find(sp, "attn_norm.to_fp32").bytes, 6 * kE / 4);
}

TEST(TransformerKernels, KernelLaunchesPerBlockByFusionMode) {
  const ModelSpec m = preset("llama3-8b");
  const KernelConfig c = config(8192, 2);
  EXPECT_EQ(block_forward(m, c).size(), 11u);
  EXPECT_EQ(block_backward(m, c).size(), 15u);
  // 8 per norm, 6 rotary, 2 repeat_kv, 2 SwiGLU, 4 GEMMs, attention, 2 residuals.
  EXPECT_EQ(block_forward(m, eager(c)).size(), 33u);
  // 16 per norm, 8 rotary, 2 repeat_kv, 3 SwiGLU, 8 GEMMs, attention, 2 residuals, 3 sums.
  EXPECT_EQ(block_backward(m, eager(c)).size(), 59u);
  EXPECT_EQ(
      names_of(block_forward(m, eager(c))),
      (std::vector<std::string_view>{
          "attn_norm.to_fp32",  "attn_norm.pow",      "attn_norm.mean",    "attn_norm.add_eps",
          "attn_norm.rsqrt",    "attn_norm.mul_rstd", "attn_norm.type_as", "attn_norm.mul_weight",
          "qkv_proj",           "rotary.q_to_fp32",   "rotary.k_to_fp32",  "rotary.q_mul_freqs",
          "rotary.k_mul_freqs", "rotary.q_type_as",   "rotary.k_type_as",  "repeat_kv.k",
          "repeat_kv.v",        "attention",          "out_proj",          "attn_residual",
          "mlp_norm.to_fp32",   "mlp_norm.pow",       "mlp_norm.mean",     "mlp_norm.add_eps",
          "mlp_norm.rsqrt",     "mlp_norm.mul_rstd",  "mlp_norm.type_as",  "mlp_norm.mul_weight",
          "gate_up_proj",       "swiglu.silu",        "swiglu.mul",        "down_proj",
          "mlp_residual"}));
  // Eager backward: the residual gradient sums run after their branch's norm.
  const std::vector<std::string_view> bwd = names_of(block_backward(m, eager(c)));
  EXPECT_EQ(bwd.front(), "down_proj.dgrad");
  EXPECT_EQ(bwd[24], "mlp_residual.bwd");
  EXPECT_EQ(bwd[23], "mlp_norm.to_fp32.bwd");
  EXPECT_EQ(bwd.back(), "attn_residual.bwd");

  // GPT-3: native LayerNorm and GELU are single kernels in eager PyTorch too,
  // so only the backward's gradient sums of q, k, v (and the order) change.
  const ModelSpec gpt = preset("gpt3-175b");
  EXPECT_EQ(names_of(block_forward(gpt, eager(c))), names_of(block_forward(gpt, c)));
  EXPECT_EQ(block_backward(gpt, c).size(), 14u);
  EXPECT_EQ(names_of(block_backward(gpt, eager(c))),
            (std::vector<std::string_view>{
                "down_proj.dgrad", "down_proj.wgrad", "gelu.bwd", "up_proj.dgrad", "up_proj.wgrad",
                "mlp_norm.bwd", "mlp_residual.bwd", "out_proj.dgrad", "out_proj.wgrad",
                "attention.bwd", "qkv_proj.dgrad", "qkv_proj.wgrad", "qkv_proj.dgrad_sum_kv",
                "qkv_proj.dgrad_sum_q", "attn_norm.bwd", "attn_residual.bwd"}));
}

// torchtitan's Triton fused_rmsnorm in eager mode: each norm is the one
// kernel compiled mode runs (attn_norm, mlp_norm; .bwd twice its bytes), the
// rest of the block stays eager.
TEST(TransformerKernels, FusedNormIsOneKernelEachWayInEagerMode) {
  const ModelSpec m = preset("llama3-8b");
  KernelConfig e = eager(config(8192, 2));
  const std::vector<Kernel> composite = block_forward(m, e);
  e.fused_norm = true;
  const std::vector<Kernel> fused = block_forward(m, e);
  EXPECT_EQ(composite.size() - fused.size(), 2u * (8 - 1));  // eight kernels -> one, twice
  // RMSNorm: x read, y written in bf16, the weight read: 2 x 2 x T x H + 2 H.
  EXPECT_DOUBLE_EQ(find(fused, "attn_norm").bytes, 2.0 * 2 * 16384 * 4096 + 2 * 4096);
  EXPECT_DOUBLE_EQ(find(block_backward(m, e), "attn_norm.bwd").bytes,
                   2 * find(fused, "attn_norm").bytes);
  // The rest stays eager: the fp32 rotary copies, more bytes than compiled mode.
  EXPECT_DOUBLE_EQ(find(fused, "rotary.q_to_fp32").bytes, (2.0 + 4) * 16384 * 4096);
  EXPECT_LT(total_bytes(block_forward(m, config(8192, 2))), total_bytes(fused));
}

TEST(TransformerKernels, EagerMovesMoreBytesWithTheSameMatmuls) {
  const ModelSpec m = preset("llama3-8b");
  const KernelConfig c = config(8192, 2);
  using Fn = std::vector<Kernel> (*)(const ModelSpec&, const KernelConfig&);
  for (Fn fn : {Fn{&block_forward}, Fn{&block_backward}, Fn{&head_forward}, Fn{&head_backward}}) {
    const std::vector<Kernel> compiled = fn(m, c);
    const std::vector<Kernel> eager_ks = fn(m, eager(c));
    EXPECT_LT(total_bytes(compiled), total_bytes(eager_ks));
    EXPECT_EQ(flops_of(compiled, KernelClass::kGemm), flops_of(eager_ks, KernelClass::kGemm));
    EXPECT_EQ(flops_of(compiled, KernelClass::kAttention),
              flops_of(eager_ks, KernelClass::kAttention));
  }
  for (Recompute r : {Recompute::kSelectiveOp, Recompute::kFull}) {
    EXPECT_LT(total_bytes(block_recompute(m, c, r)), total_bytes(block_recompute(m, eager(c), r)));
    EXPECT_EQ(matmul_flops(block_recompute(m, c, r)),
              matmul_flops(block_recompute(m, eager(c), r)));
  }
  // GEMM and attention kernels are the same kernels in both modes.
  for (std::string_view name : {"qkv_proj", "attention", "gate_up_proj", "down_proj"}) {
    EXPECT_EQ(find(block_forward(m, c), name).bytes, find(block_forward(m, eager(c)), name).bytes);
  }

  // Non-matmul bytes of the eager forward by hand (d = 2, Eq = E, Ek = E / 4,
  // Ef = 16384 * 14336): two norms 2 (36 E + 24 R + 2 H); rotary 20 (Eq + Ek)
  // plus the complex64 table 4 * 8192 * 128 read by each multiply; repeat_kv
  // 2 * 2 (Eq + Ek); residuals 2 * 6 E; SwiGLU 10 Ef.
  const double ek = kE / 4;
  const double ef = 16384.0 * 14336;
  const double by_hand = 2 * (36 * kE + 24 * kR + 2 * 4096) + 20 * (kE + ek) +
                         2 * 4 * 8192.0 * 128 + 4 * (kE + ek) + 12 * kE + 10 * ef;
  const std::vector<Kernel> fwd = block_forward(m, eager(c));
  EXPECT_DOUBLE_EQ(pointwise_bytes(fwd), by_hand);
  EXPECT_DOUBLE_EQ(by_hand, 10'008'412'160.0);
  // The eager pointwise FLOPs are the compiled ones plus eps and rsqrt per row of each norm.
  EXPECT_DOUBLE_EQ(total_flops(fwd) - total_flops(block_forward(m, c)), 4 * kR);
}

TEST(TransformerKernels, SelectiveRecomputeOfLlama3_8bByHand) {
  const ModelSpec m = preset("llama3-8b");
  const KernelConfig c = config(8192, 2);
  const std::vector<Kernel> sel = block_recompute(m, c, Recompute::kSelectiveOp);
  EXPECT_EQ(names_of(sel), (std::vector<std::string_view>{
                               "attn_norm", "k_proj.recompute", "rotary", "out_proj.recompute",
                               "attn_residual", "mlp_norm", "up_proj.recompute", "swiglu"}));
  const Kernel wk = find(sel, "k_proj.recompute");
  EXPECT_EQ(wk.m, 16384);
  EXPECT_EQ(wk.n, 1024);
  EXPECT_EQ(wk.k, 4096);
  const Kernel w3 = find(sel, "up_proj.recompute");
  EXPECT_EQ(w3.n, 14336);
  EXPECT_EQ(w3.k, 4096);
  EXPECT_EQ(find(sel, "out_proj.recompute").n, 4096);
  // wk 2*16384*1024*4096 + wo 2*16384*4096*4096 + w3 2*16384*14336*4096.
  const double gemms = 137'438'953'472.0 + 549'755'813'888.0 + 1'924'145'348'608.0;
  EXPECT_DOUBLE_EQ(flops_of(sel, KernelClass::kGemm), gemms);
  EXPECT_EQ(flops_of(sel, KernelClass::kAttention), 0);  // flash attention's output is saved
  // Two norms 4 E each, rotary 3 (Eq + Ek), attention residual E, SwiGLU 5 Ef.
  const double pointwise = 8 * kE + 3 * (kE + kE / 4) + kE + 5 * 16384.0 * 14336;
  EXPECT_DOUBLE_EQ(pointwise, 2'030'043'136.0);
  EXPECT_DOUBLE_EQ(total_flops(sel), gemms + pointwise);
  // Eager re-runs every op of those kernels (plus repeat_kv's copies): 30 launches.
  const std::vector<Kernel> sel_eager = block_recompute(m, eager(c), Recompute::kSelectiveOp);
  EXPECT_EQ(sel_eager.size(), 30u);
  EXPECT_DOUBLE_EQ(total_flops(sel_eager), gemms + pointwise + 4 * kR);

  // GELU: the MLP has two mms (w_up saved, w_down never recomputed): wk and wo only.
  const ModelSpec gpt = preset("gpt3-175b");
  const std::vector<Kernel> gsel = block_recompute(gpt, config(2048, 1), Recompute::kSelectiveOp);
  EXPECT_EQ(names_of(gsel),
            (std::vector<std::string_view>{"attn_norm", "k_proj.recompute", "out_proj.recompute",
                                           "attn_residual", "mlp_norm", "gelu"}));
}

TEST(TransformerKernels, FullRecomputeIsTheForwardUpToTheLastMatmul) {
  for (std::string_view name : {"llama3-8b", "gpt3-175b"}) {
    const ModelSpec m = preset(name);
    for (const KernelConfig& c : {config(4096, 2), eager(config(4096, 2))}) {
      const std::vector<Kernel> fwd = block_forward(m, c);
      const std::vector<Kernel> full = block_recompute(m, c, Recompute::kFull);
      // Early stop: down_proj's inputs are saved before it runs, so it and the
      // residual after it are not re-run.
      std::vector<std::string_view> expected = names_of(fwd);
      ASSERT_GE(expected.size(), 2u);
      EXPECT_EQ(expected[expected.size() - 2], "down_proj");
      expected.resize(expected.size() - 2);
      EXPECT_EQ(names_of(full), expected) << name;
      EXPECT_DOUBLE_EQ(total_flops(full), total_flops(fwd) - find(fwd, "down_proj").flops -
                                              find(fwd, "mlp_residual").flops)
          << name;
      EXPECT_TRUE(block_recompute(m, c, Recompute::kNone).empty());
    }
  }
}

TEST(TransformerKernels, EagerCrossEntropyUpcastsTheLogits) {
  const ModelSpec m = preset("llama3-8b");
  const double t = 4096;
  const double l = t * 128256;  // logits
  const std::vector<Kernel> fwd = head_forward(m, eager(config(4096, 1)));
  EXPECT_EQ(find(fwd, "cross_entropy.to_fp32").bytes, 6 * l);
  EXPECT_EQ(find(fwd, "cross_entropy.log_softmax").bytes, 8 * l);
  EXPECT_EQ(find(fwd, "cross_entropy.log_softmax").flops, 4 * l);
  const std::vector<Kernel> bwd = head_backward(m, eager(config(4096, 1)));
  const std::vector<Kernel> ce = with_prefix(bwd, "cross_entropy");
  // Zero-filled fp32 gradient 4, log_softmax backward 12, downcast 6 bytes per logit.
  EXPECT_DOUBLE_EQ(total_bytes(ce), 22 * l + 12 * t + 8);
  EXPECT_EQ(bwd.size(), 4u + 2u + 16u);
  EXPECT_EQ(head_forward(m, eager(config(4096, 1))).size(), 8u + 1u + 3u);
}

// Megatron-Core's vocab-parallel cross entropy over a TP rank's slice:
// llama3-8b's 128,256 logits per token over tp 2 is 64,128 per rank.
TEST(TransformerKernels, MegatronCrossEntropyPassesOverTheRanksSliceOfLogits) {
  const ModelSpec m = preset("llama3-8b");
  const double l = 4096.0 * 64128;
  KernelConfig c = config(4096, 1, /*tp=*/2);
  c.cross_entropy = CrossEntropyKernels::kVocabParallel;
  const std::vector<Kernel> fwd = with_prefix(head_forward(m, c), "cross_entropy");
  const std::vector<Kernel> bwd = with_prefix(head_backward(m, c), "cross_entropy");
  // .float() 6, max 4, subtract 8, exp 8, sum 4, softmax 8; backward 8 and the cast 6.
  EXPECT_EQ(fwd.size(), 6u);
  EXPECT_DOUBLE_EQ(total_bytes(fwd), 38 * l);
  EXPECT_DOUBLE_EQ(total_bytes(bwd), 14 * l);
  EXPECT_EQ(find(fwd, "cross_entropy.sub_max").bytes, 8 * l);
  c.cross_entropy = CrossEntropyKernels::kVocabParallelFused;
  const std::vector<Kernel> fused = with_prefix(head_forward(m, c), "cross_entropy");
  EXPECT_EQ(fused.size(), 4u);
  EXPECT_DOUBLE_EQ(total_bytes(fused), 26 * l);
  EXPECT_DOUBLE_EQ(total_bytes(with_prefix(head_backward(m, c), "cross_entropy")), 14 * l);
}

TEST(TransformerKernels, KernelClassNames) {
  EXPECT_EQ(kernel_class_name(KernelClass::kGemm), "gemm");
  EXPECT_EQ(kernel_class_name(KernelClass::kOptimizer), "optimizer");
  EXPECT_EQ(kernel_fusion_name(KernelFusion::kCompiled), "compiled");
  EXPECT_EQ(kernel_fusion_name(KernelFusion::kEager), "eager");
}

}  // namespace
}  // namespace clustersim::workloads
