#include "workloads/model/memory_model.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "config/scenario_loader.h"
#include "workloads/model/model_spec.h"

namespace clustersim::workloads {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

WorkloadSpec spec(std::string_view yaml, int64_t world, int64_t per_node = 8) {
  sim::ConfigSchema schema;
  sim::add_scenario_identity_keys(schema);
  add_workload_keys(schema);
  return read_workload_spec(sim::load_scenario_text(yaml, "m.yaml", schema), world, per_node);
}

// torchtitan's Llama 3 8B run: FSDP over 8 GPUs, seq 8192, local batch 2.
WorkloadSpec llama3_8b(std::string_view checkpointing) {
  return spec(
      "name: t\nworkload:\n  model: llama3-8b\n  seq_len: 8192\n  local_batch: 2\n"
      "  activation_checkpointing: " +
          std::string(checkpointing) + "\n",
      8);
}

// llama3-8b per parameter_breakdown(): block 218,112,000; embedding = head =
// 128256 * 4096 = 525,336,576; final norm 4096; total 8,030,261,248.
constexpr int64_t k8bBlock = 218'112'000;
constexpr int64_t k8bRoot = 2 * 525'336'576 + 4096;
constexpr int64_t k8bShard = 8'030'261'248 / 8;  // 1,003,782,656

TEST(MemoryModel, FullShardShardsSixteenBytesPerParameter) {
  const MemoryBreakdown m = memory_breakdown(llama3_8b("selective"));
  EXPECT_EQ(m.params, 2 * k8bShard);
  EXPECT_EQ(m.grads, 2 * k8bShard);
  EXPECT_EQ(m.optimizer, 12 * k8bShard);
  EXPECT_EQ(m.params + m.grads + m.optimizer, 16'060'522'496);  // (2+2+12) * 8.03e9 / 8
  // The root (embedding, head, norm) stays unsharded; two blocks in flight.
  EXPECT_EQ(m.unsharded_params, 2 * (k8bRoot + 2 * k8bBlock));
  EXPECT_EQ(m.unsharded_params, 2'973'802'496);
  EXPECT_EQ(m.comm_buffers, 2 * k8bBlock);
  EXPECT_EQ(m.host_bytes, 0);
}

// The float8 all-gather keeps the unsharded blocks' linear weights in FP8:
// llama3-8b's block is 218,112,000 parameters, of which the two norms are
// 2 x 4096; in flight, 2 x (218,103,808 x 1 + 8,192 x 2) instead of 2 x 2 x
// 218,112,000. The root stays bf16.
TEST(MemoryModel, Float8AllGatherHalvesTheUnshardedLinearWeights) {
  WorkloadSpec w = llama3_8b("selective");
  w.float8 = Float8Recipe::kTensorwise;
  w.float8_all_gather = true;
  const MemoryBreakdown m = memory_breakdown(w);
  EXPECT_EQ(m.unsharded_params, 2 * k8bRoot + 2 * (218'103'808 + 2 * 8'192));
  EXPECT_EQ(m.comm_buffers, 2 * k8bBlock);  // gradients stay bf16
}

// A WorkloadSpec built directly (FULL_SHARD over world / tp ranks), for the
// activation terms, with a fused RMSNorm (the counts below; the Python
// RMSNorm's extra has its own test).
WorkloadSpec direct(std::string_view preset, int64_t seq_len, int64_t local_batch, int64_t tp,
                    ActivationCheckpointing ac, int64_t world = 8) {
  WorkloadSpec w;
  w.model = *model_preset(preset);
  w.seq_len = seq_len;
  w.local_batch = local_batch;
  w.tp = tp;
  w.activation_checkpointing = ac;
  w.world_size = world;
  w.dp_size = world / tp;
  w.shard_group_size = w.dp_size;
  w.replica_group_size = 1;
  w.fused_norm = true;
  return w;
}

constexpr auto kNone = ActivationCheckpointing::kNone;
constexpr auto kSelective = ActivationCheckpointing::kSelective;
constexpr auto kFull = ActivationCheckpointing::kFull;

// llama3-8b, s = 8192, b = 2, t = 1, bf16: T = Tt = 16384 tokens, H = Q = 4096,
// K = 8 * 128 = 1024, F = 14336, n = 32, V = 128256, RMSNorm (r = 4).
constexpr int64_t kTH = int64_t{16384} * 4096 * 2;   // 134,217,728: T x H (also T x Q)
constexpr int64_t kTK = int64_t{16384} * 1024 * 2;   //  33,554,432: T x K
constexpr int64_t kTF = int64_t{16384} * 14336 * 2;  // 469,762,048: T x F
constexpr int64_t kLse = int64_t{16384} * 32 * 4;    //   2,097,152: fp32 per row and head
constexpr int64_t kRstd = int64_t{16384} * 4;        //      65,536: fp32 per token
constexpr int64_t k8bNone = 2 * (kTH + kRstd)        // attention_norm, ffn_norm
                            + 2 * kTH                // projection inputs
                            + 4 * kTH + kLse         // q, k, v (repeat_kv), output, LSE
                            + 4 * kTF;               // w1 out, silu out, w3 out, product
constexpr int64_t k8bHead = kTH + kRstd + kTH + int64_t{12} * 16384 * 128256;

TEST(MemoryModel, Llama3_8bBlockWithoutCheckpointing) {
  EXPECT_EQ(k8bNone, 2'955'018'240);
  const WorkloadSpec w = direct("llama3-8b", 8192, 2, 1, kNone);
  EXPECT_EQ(layer_activation_bytes(w), k8bNone);
  const ActivationBreakdown a = activation_breakdown(w);
  EXPECT_EQ(a.block_none, k8bNone);
  EXPECT_EQ(a.block_stored, k8bNone);
  EXPECT_EQ(a.block_recompute, 0);
  EXPECT_EQ(a.layers, 32 * k8bNone);
  // The loss's backward: log_softmax's fp32 output, its gradient and the
  // logits' gradient, 12 bytes for each of T * V = 2,101,346,304 logits.
  EXPECT_EQ(k8bHead, 25'484'656'640);
  EXPECT_EQ(a.head, k8bHead);
  EXPECT_EQ(a.total, 32 * k8bNone + k8bHead);
  EXPECT_EQ(activation_bytes(w), 120'045'240'320);

  // Without flash attention the probabilities (b*n*s*s*c) replace the LSE.
  const MemoryOptions no_flash{false};
  EXPECT_EQ(layer_activation_bytes(w, no_flash),
            k8bNone - kLse + int64_t{2} * 32 * 8192 * 8192 * 2);
  EXPECT_EQ(layer_activation_bytes(w, no_flash), 11'542'855'680);
}

TEST(MemoryModel, Llama3_8bSelectiveFollowsTorchtitanOpPolicy) {
  const ActivationBreakdown a = activation_breakdown(direct("llama3-8b", 8192, 2, 1, kSelective));
  // Block input; outputs of mm 1, 3, 5, 7 (wq, wv, w1, w2); attention output and LSE.
  EXPECT_EQ(a.block_stored, kTH + (kTH + kTK + kTF + kTH) + (kTH + kLse));
  EXPECT_EQ(a.block_stored, 1'042'284'544);
  // Recomputed: all but what autograd shares with the saved set (the input,
  // the attention output and LSE, w1's output; v is a repeat_kv copy, q rotated).
  EXPECT_EQ(a.block_recompute, k8bNone - kTH - (kTH + kLse) - kTF);
  EXPECT_EQ(a.block_recompute, 2'214'723'584);
  // The loss's backward outweighs the block's: 25.5 GB against 2.3 GB.
  EXPECT_EQ(a.head, k8bHead);
  EXPECT_EQ(a.total, 32 * a.block_stored + k8bHead);
  EXPECT_EQ(a.total, 58'837'762'048);
}

TEST(MemoryModel, Llama3_8bFullKeepsBlockInputs) {
  const ActivationBreakdown a = activation_breakdown(direct("llama3-8b", 8192, 2, 1, kFull));
  EXPECT_EQ(a.block_stored, kTH);
  EXPECT_EQ(a.block_recompute, k8bNone - kTH);
  EXPECT_EQ(a.total, 32 * kTH + k8bHead);
  EXPECT_EQ(a.total, 29'779'623'936);
}

TEST(MemoryModel, TensorParallelSplitsWidthsAndSequence) {
  // llama3-8b, t = 2: T = 16384, Tt = 8192, Q = 2048, K = 512, F = 7168,
  // n = 16, Vt = 64128. Projection inputs are all-gathered: T x H.
  constexpr int64_t tt_h = int64_t{8192} * 4096 * 2;  // 67,108,864
  constexpr int64_t t_h = int64_t{16384} * 4096 * 2;  // 134,217,728
  constexpr int64_t t_q = int64_t{16384} * 2048 * 2;  // 67,108,864
  constexpr int64_t t_k = int64_t{16384} * 512 * 2;   // 16,777,216
  constexpr int64_t t_f = int64_t{16384} * 7168 * 2;  // 234,881,024
  constexpr int64_t lse = int64_t{16384} * 16 * 4;    // 1,048,576
  constexpr int64_t none = 2 * (tt_h + 8192 * 4) + 2 * t_h + 4 * t_q + lse + 4 * t_f;
  static_assert(none == 1'611'726'848);
  EXPECT_EQ(layer_activation_bytes(direct("llama3-8b", 8192, 2, 2, kNone)), none);

  const ActivationBreakdown sel = activation_breakdown(direct("llama3-8b", 8192, 2, 2, kSelective));
  // w2's output is the T x H partial sum; wo's and w2's reduce-scatter
  // outputs (Tt x H each) are saved too.
  EXPECT_EQ(sel.block_stored, tt_h + (t_q + t_k + t_f + t_h) + (t_q + lse) + 2 * tt_h);
  EXPECT_EQ(sel.block_stored, 722'468'864);
  EXPECT_EQ(sel.block_recompute, none - tt_h - (t_q + lse) - t_f);
  // With t > 1 the loss runs loss_parallel: 16 bytes per logit at its peak.
  const int64_t head = tt_h + 8192 * 4 + t_h + int64_t{16} * 16384 * 64128;
  EXPECT_EQ(sel.head, head);
  EXPECT_EQ(sel.total, 32 * sel.block_stored + head);
  EXPECT_EQ(sel.total, 40'131'133'440);

  const ActivationBreakdown full = activation_breakdown(direct("llama3-8b", 8192, 2, 2, kFull));
  EXPECT_EQ(full.block_stored, tt_h);
  EXPECT_EQ(full.total, 32 * tt_h + head);
}

TEST(MemoryModel, Gpt3LayerNormGeluBiasedLinears) {
  // gpt3-175b, s = 2048, b = 1, t = 8: T = 2048, Tt = 256, H = 12288,
  // Q = K = 1536, F = 6144, n = 12, Vt = 6283; LayerNorm (r = 8), GELU,
  // learned positions, biased linears (aten.addmm: no GEMM output saved).
  constexpr int64_t tt_h = int64_t{256} * 12288 * 2;  // 6,291,456
  constexpr int64_t t_h = int64_t{2048} * 12288 * 2;  // 50,331,648
  constexpr int64_t t_q = int64_t{2048} * 1536 * 2;   // 6,291,456
  constexpr int64_t t_f = int64_t{2048} * 6144 * 2;   // 25,165,824
  constexpr int64_t lse = int64_t{2048} * 12 * 4;     // 98,304
  constexpr int64_t none = 2 * (tt_h + 256 * 8) + 2 * t_h + 4 * t_q + lse + 2 * t_f;
  static_assert(none == 188'846'080);
  constexpr int64_t head = tt_h + 256 * 8 + t_h + int64_t{16} * 2048 * 6283;  // loss_parallel
  static_assert(head == 262'506'496);

  const ActivationBreakdown n = activation_breakdown(direct("gpt3-175b", 2048, 1, 8, kNone, 64));
  EXPECT_EQ(n.block_none, none);
  EXPECT_EQ(n.total, 96 * none + head);

  const ActivationBreakdown sel =
      activation_breakdown(direct("gpt3-175b", 2048, 1, 8, kSelective, 64));
  EXPECT_EQ(sel.block_stored, tt_h + (t_q + lse) + 2 * tt_h);
  EXPECT_EQ(sel.block_recompute, none - tt_h - (t_q + lse));
  EXPECT_EQ(sel.total, 96 * sel.block_stored + head);
  EXPECT_EQ(sel.total, 2'687'862'784);

  const ActivationBreakdown full = activation_breakdown(direct("gpt3-175b", 2048, 1, 8, kFull, 64));
  EXPECT_EQ(full.block_stored, tt_h);
  EXPECT_EQ(full.total, 96 * tt_h + head);

  // Without flash attention the block's recompute (with its 100 MB of
  // probabilities) outweighs the loss: the peak moves to the block's backward.
  const MemoryOptions no_flash{false};
  const int64_t probs = int64_t{12} * 2048 * 2048 * 2;
  const ActivationBreakdown math =
      activation_breakdown(direct("gpt3-175b", 2048, 1, 8, kFull, 64), no_flash);
  EXPECT_EQ(math.block_none, none - lse + probs);
  EXPECT_EQ(math.total, 96 * tt_h + (math.block_none - tt_h) + tt_h);
  EXPECT_EQ(math.total, 893'390'848);

  // Unbiased linears: mm 1, 3, 5 (wq, wv, up) are saved; with learned
  // positions q is wq's output and with heads == kv_heads v is wv's, so both
  // are shared with what autograd keeps, as is up's output.
  WorkloadSpec unbiased = direct("gpt3-175b", 2048, 1, 8, kSelective, 64);
  unbiased.model.linear_bias = false;
  const ActivationBreakdown u = activation_breakdown(unbiased);
  EXPECT_EQ(u.block_stored, tt_h + (t_q + t_q + t_f) + (t_q + lse) + 2 * tt_h);
  EXPECT_EQ(u.block_recompute, none - tt_h - (t_q + lse) - t_f - t_q - t_q);
}

TEST(MemoryModel, PythonRmsNormKeepsItsInputInFp32) {
  // Eager autograd of x.float() -> pow -> mean -> rsqrt -> mul -> type_as ->
  // mul(weight) keeps the fp32 copy (T*H*4), rstd and the normalised bf16
  // tensor; the fused kernel keeps the bf16 input and rstd: 4 bytes per
  // element more, for each of a block's two norms and the final norm.
  constexpr int64_t kFp32 = int64_t{16384} * 4096 * 4;  // 268,435,456
  WorkloadSpec w = direct("llama3-8b", 8192, 2, 1, kNone);
  w.fused_norm = false;
  ActivationBreakdown a = activation_breakdown(w);
  EXPECT_EQ(a.block_none, k8bNone + 2 * kFp32);
  EXPECT_EQ(a.head, k8bHead + kFp32);
  // Under full AC the blocks store their input only; the extra is part of the
  // recomputed block.
  w.activation_checkpointing = kFull;
  a = activation_breakdown(w);
  EXPECT_EQ(a.block_stored, kTH);
  EXPECT_EQ(a.block_recompute, k8bNone + 2 * kFp32 - kTH);
  // torch.compile fuses the blocks' norms; the final norm stays eager
  // (torchtitan compiles the blocks only).
  w.activation_checkpointing = kNone;
  w.torch_compile = true;
  a = activation_breakdown(w);
  EXPECT_EQ(a.block_none, k8bNone);
  EXPECT_EQ(a.head, k8bHead + kFp32);
  // With sequence parallelism (tp 2) a norm sees T / 2 tokens.
  WorkloadSpec tp2 = direct("llama3-8b", 8192, 2, 2, kNone);
  const int64_t fused = activation_breakdown(tp2).block_none;
  tp2.fused_norm = false;
  EXPECT_EQ(activation_breakdown(tp2).block_none, fused + 2 * (kFp32 / 2));
  // LayerNorm models run PyTorch's fused native_layer_norm in eager too.
  WorkloadSpec gpt = direct("gpt3-175b", 2048, 1, 8, kNone);
  const int64_t gpt_fused = activation_breakdown(gpt).block_none;
  gpt.fused_norm = false;
  EXPECT_EQ(activation_breakdown(gpt).block_none, gpt_fused);
}

TEST(MemoryModel, PythonRmsNormExtraMatchesTheH200Measurement) {
  // scenarios/measurements/2026-12-04_h200-sxm: two profiled steps of 8
  // Llama-3-8B blocks (seq 8192, batch 1, no AC, eager, one H200) that differ
  // in the norm: nn.RMSNorm (aten::_fused_rms_norm in PyTorch 2.11) against
  // torchtitan's Python RMSNorm (and complex instead of real-pair rotary,
  // neither of which keeps a tensor for backward). Peak allocated,
  // torch.cuda.max_memory_allocated: 62,400,137,216 and 64,669,255,680 bytes
  // (profile_eager/ and profile_torchtitan_eager/profile_step.txt).
  const std::string base =
      "name: t\nworkload:\n  model: custom\n  custom_model:\n    layers: 8\n    hidden: 4096\n"
      "    heads: 32\n    kv_heads: 8\n    ffn_hidden: 14336\n    vocab: 128256\n"
      "    activation: swiglu\n  seq_len: 8192\n  local_batch: 1\n"
      "  activation_checkpointing: none\n";
  const MemoryBreakdown fused = memory_breakdown(spec(base + "  norm_kernel: fused\n", 1, 1));
  const MemoryBreakdown python = memory_breakdown(spec(base, 1, 1));
  const int64_t predicted = python.activations - fused.activations;
  EXPECT_EQ(predicted, 17 * (int64_t{4} * 8192 * 4096));  // 2,281,701,376
  const double measured = 64'669'255'680.0 - 62'400'137'216.0;  // 2,269,118,464
  EXPECT_NEAR(static_cast<double>(predicted) / measured - 1.0, 0.0055, 0.001);
}

TEST(MemoryModel, CheckpointingModesAreMonotonic) {
  for (const std::string& name : model_preset_names()) {
    for (const int64_t tp : {1, 8}) {
      const WorkloadSpec base = direct(name, 4096, 1, tp, kNone, 64);
      WorkloadSpec sel = base;
      sel.activation_checkpointing = kSelective;
      WorkloadSpec full = base;
      full.activation_checkpointing = kFull;
      const ActivationBreakdown n = activation_breakdown(base);
      const ActivationBreakdown s = activation_breakdown(sel);
      const ActivationBreakdown f = activation_breakdown(full);
      EXPECT_GT(n.block_stored, s.block_stored) << name << " tp " << tp;
      EXPECT_GT(s.block_stored, f.block_stored) << name << " tp " << tp;
      EXPECT_GT(n.total, s.total) << name << " tp " << tp;
      EXPECT_GT(s.total, f.total) << name << " tp " << tp;
      // A checkpointed block's tensors are all alive again in its backward.
      EXPECT_GE(s.block_stored + s.block_recompute, n.block_stored) << name << " tp " << tp;
      EXPECT_EQ(f.block_stored + f.block_recompute, n.block_stored) << name << " tp " << tp;
    }
  }
}

TEST(MemoryModel, Llama3_8bOnEightGpusMatchesTorchtitan) {
  // torchtitan docs/performance.md, Table 1: Llama 3.1 8B, FSDP on 8 H100
  // (96 GB), seq 8192, local batch 2, selective (op) AC, eager: 82.4 GiB
  // reserved. The model: 83,579,325,645 bytes = 77.8 GiB (5.5% under).
  // states 16,060,522,496 + unsharded 2,973,802,496 + comm 436,224,000 = 19,470,548,992
  const int64_t fixed = 19'470'548'992;
  // Eager with the Python RMSNorm: the final norm keeps its input's fp32 copy
  // (4 * T * H) at the loss's backward; the blocks' norms are recomputed
  // under selective and full AC and add to one block's backward only, which
  // the loss's 25 GB outweighs.
  constexpr int64_t kFinalNormFp32 = int64_t{4} * 16384 * 4096;  // 268,435,456
  const MemoryBreakdown selective = memory_breakdown(llama3_8b("selective"));
  EXPECT_EQ(selective.activations, 58'837'762'048 + kFinalNormFp32);
  EXPECT_EQ(selective.reserve, kGiB + 3'928'837'325);  // 5% of 78,576,746,496
  EXPECT_EQ(selective.total(), 83'579'325'645);
  EXPECT_TRUE(fits(selective, 96'000'000'000));
  EXPECT_NEAR(static_cast<double>(selective.total()), 82.4 * static_cast<double>(kGiB),
              0.1 * 82.4 * static_cast<double>(kGiB));

  // Without checkpointing 32 blocks of 2.96 GB do not fit (torchtitan needs AC).
  const MemoryBreakdown none = memory_breakdown(llama3_8b("none"));
  // Stored per block without AC: the two norms' fp32 inputs, 2 * 4 * T * H.
  EXPECT_EQ(none.total() - none.reserve,
            fixed + 120'045'240'320 + 32 * 2 * kFinalNormFp32 + kFinalNormFp32);
  EXPECT_FALSE(fits(none, 80'000'000'000));
  EXPECT_FALSE(fits(none, 96'000'000'000));

  const MemoryBreakdown full = memory_breakdown(llama3_8b("full"));
  EXPECT_EQ(full.total() - full.reserve, fixed + 29'779'623'936 + kFinalNormFp32);
  EXPECT_TRUE(fits(full, 80 * kGiB));
  EXPECT_LT(full.total(), selective.total());
  EXPECT_LT(selective.total(), none.total());
}

TEST(MemoryModel, Llama3_405bNeedsTensorParallelismAndHybridSharding) {
  const WorkloadSpec eight = spec(
      "name: t\nworkload:\n  model: llama3-405b\n  seq_len: 8192\n  local_batch: 1\n"
      "  norm_kernel: fused\n  activation_checkpointing: full\n",
      8);
  const MemoryBreakdown m8 = memory_breakdown(eight);
  // 16 bytes * 405,853,388,800 / 8 of states alone is ~812 GB.
  EXPECT_EQ(m8.params + m8.grads + m8.optimizer, 16 * (405'853'388'800 / 8));
  EXPECT_FALSE(fits(m8, 80 * kGiB));

  // 98,304 GPUs, tp 8 inside nodes, shards of 512 (replicas of 24).
  const std::string hsdp =
      "name: t\nworkload:\n  model: llama3-405b\n  seq_len: 8192\n  local_batch: 1\n"
      "  norm_kernel: fused\n"
      "  parallelism:\n    strategy: HYBRID_SHARD\n    shard_group_size: 512\n    tp: 8\n";
  const WorkloadSpec w = spec(hsdp + "  activation_checkpointing: full\n", 98304);
  const MemoryBreakdown m = memory_breakdown(w);
  // block 3,187,703,808 / 8 = 398,462,976; root (2 * 2,101,346,304) / 8 + 16384
  // = 525,352,960; per TP rank 126 * block + root = 50,731,687,936; / 512 =
  // 99,085,328 per shard.
  EXPECT_EQ(m.params, 2 * 99'085'328);
  EXPECT_EQ(m.optimizer, 12 * 99'085'328);
  EXPECT_EQ(m.unsharded_params, int64_t{2} * (525'352'960 + 2 * 398'462'976));
  EXPECT_EQ(m.comm_buffers, 2 * 398'462'976);
  // full: 126 block inputs Tt x H (Tt = 1024) + the head: final norm input and
  // rstd, gathered head input (T x H), 16 bytes per logit (Vt = 16032; the
  // loss_parallel of t > 1).
  EXPECT_EQ(m.activations, 126 * (int64_t{1024} * 16384 * 2) + int64_t{1024} * (16384 * 2 + 4) +
                               int64_t{8192} * 16384 * 2 + int64_t{16} * 8192 * 16032);
  EXPECT_EQ(m.activations, 6'631'198'720);
  EXPECT_EQ(m.total(), 13'314'691'955);  // states etc. 5,026,849,024 + 5% + 1 GiB
  EXPECT_TRUE(fits(m, 80 * kGiB));

  // Without checkpointing: 126 blocks of 1.17 GB (t = 8) do not fit.
  const MemoryBreakdown none = memory_breakdown(spec(hsdp, 98304));
  EXPECT_EQ(none.activations, 126 * int64_t{1'174'937'600} + 2'403'340'288);
  EXPECT_FALSE(fits(none, 80 * kGiB));
}

TEST(MemoryModel, StrategiesAndOptions) {
  const std::string base =
      "name: t\nworkload:\n  model: llama3-8b\n  seq_len: 4096\n"
      "  local_batch: 1\n  norm_kernel: fused\n";
  const int64_t full_model = 8'030'261'248;
  // NO_SHARD: nothing sharded, nothing gathered.
  MemoryBreakdown m = memory_breakdown(spec(base + "  parallelism:\n    strategy: NO_SHARD\n", 8));
  EXPECT_EQ(m.params, 2 * full_model);
  EXPECT_EQ(m.optimizer, 12 * full_model);
  EXPECT_EQ(m.unsharded_params, 0);
  EXPECT_EQ(m.comm_buffers, 0);
  // SHARD_GRAD_OP and reshard_after_forward false keep every block unsharded.
  m = memory_breakdown(spec(base + "  parallelism:\n    strategy: SHARD_GRAD_OP\n", 8));
  EXPECT_EQ(m.unsharded_params, 2 * full_model);
  m = memory_breakdown(spec(base + "  fsdp:\n    reshard_after_forward: false\n", 8));
  EXPECT_EQ(m.unsharded_params, 2 * full_model);
  // No prefetch: one block in flight; no rate limit: three.
  m = memory_breakdown(spec(base + "  fsdp:\n    backward_prefetch: NONE\n", 8));
  EXPECT_EQ(m.unsharded_params, 2 * (k8bRoot + k8bBlock));
  m = memory_breakdown(spec(base + "  fsdp:\n    limit_all_gathers: false\n", 8));
  EXPECT_EQ(m.unsharded_params, 2 * (k8bRoot + 3 * k8bBlock));
  // HYBRID_SHARD shards over its shard group only.
  m = memory_breakdown(
      spec(base + "  parallelism:\n    strategy: HYBRID_SHARD\n    shard_group_size: 4\n", 16));
  EXPECT_EQ(m.params, 2 * (full_model / 4));
  // fp32: 4 + 4 + 8 bytes per parameter, activations twice the 16-bit size.
  const WorkloadSpec fp32 = spec(base + "  dtype: fp32\n", 8);
  m = memory_breakdown(fp32);
  EXPECT_EQ(m.params, 4 * k8bShard);
  EXPECT_EQ(m.optimizer, 8 * k8bShard);
  // T = 4096: norms 2 * (T*H*4 + T*4), projection inputs 2 * T*H*4, q, k, v,
  // output 4 * T*H*4 and LSE T*32*4, SwiGLU 4 * T*F*4.
  constexpr int64_t th4 = int64_t{4096} * 4096 * 4;
  EXPECT_EQ(layer_activation_bytes(fp32), 2 * (th4 + 4096 * 4) + 2 * th4 + 4 * th4 + 4096 * 32 * 4 +
                                              4 * (int64_t{4096} * 14336 * 4));
  EXPECT_EQ(layer_activation_bytes(fp32), 1'476'952'064);
  // CPU offload moves the sharded state to the host.
  m = memory_breakdown(spec(base + "  cpu_offload: true\n", 8));
  EXPECT_EQ(m.params + m.grads + m.optimizer, 0);
  EXPECT_EQ(m.host_bytes, 16 * k8bShard);
  // Tensor parallelism with sequence parallelism: norms on T / 2 tokens,
  // projection inputs gathered (T), q/k/v/output, LSE and MLP widths halved.
  const WorkloadSpec tp2 = spec(base + "  parallelism:\n    tp: 2\n", 8);
  constexpr int64_t th2 = int64_t{4096} * 4096 * 2;
  EXPECT_EQ(layer_activation_bytes(tp2), 2 * (th2 / 2 + 2048 * 4) + 2 * th2 + 4 * (th2 / 2) +
                                             4096 * 16 * 4 + 4 * (int64_t{4096} * 7168 * 2));
  EXPECT_EQ(layer_activation_bytes(tp2), 402'931'712);
  EXPECT_EQ(memory_breakdown(tp2).comm_buffers, 2 * (k8bBlock / 2));
}

}  // namespace
}  // namespace clustersim::workloads
