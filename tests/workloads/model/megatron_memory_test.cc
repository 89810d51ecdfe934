// Memory as Megatron-Core lays it out (workloads/model/memory_model.h, "Megatron's
// layout" and "Megatron's DDP"): Korthikanti et al.'s per-layer activations,
// the distributed optimizer's and plain DDP's bytes per parameter.
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "config/scenario_loader.h"
#include "workloads/model/memory_model.h"
#include "workloads/model/model_spec.h"

namespace clustersim::workloads {
namespace {

WorkloadSpec spec(std::string_view yaml, int64_t world, int64_t per_node = 8) {
  sim::ConfigSchema schema;
  sim::add_scenario_identity_keys(schema);
  add_workload_keys(schema);
  return read_workload_spec(sim::load_scenario_text(yaml, "m.yaml", schema), world, per_node);
}

// Korthikanti et al.'s GPT block: multi-head attention, GELU with FFN 4h,
// LayerNorm, no flash attention. h 1024, a 16, s 512, b 2, t 2.
std::string gpt(std::string_view strategy, std::string_view checkpointing) {
  return "name: k\nworkload:\n  model: custom\n  custom_model:\n    layers: 2\n    hidden: 1024\n"
         "    heads: 16\n    kv_heads: 16\n    ffn_hidden: 4096\n    vocab: 1000\n"
         "    activation: gelu\n  seq_len: 512\n  local_batch: 2\n  attention: math\n"
         "  activation_checkpointing: " +
         std::string(checkpointing) + "\n  parallelism:\n    strategy: " + std::string(strategy) +
         "\n    tp: 2\n";
}

// Their Table 2, bytes per layer: s*b*h*(34/t + 5*a*s/(h*t)) without
// recomputation, s*b*h*34/t with selective recomputation.
constexpr int64_t kS = 512, kB = 2, kH = 1024, kA = 16, kT = 2;
constexpr int64_t kSbh = kS * kB * kH;                                             // 1,048,576
constexpr int64_t kKorthikantiNone = kSbh * 34 / kT + 5 * kA * kS * kS * kB / kT;  // 38,797,312
constexpr int64_t kKorthikantiSelective = kSbh * 34 / kT;                          // 17,825,792
// What the model has that their GPT block has not, and the reverse: no
// dropout (the two sbh/t masks, the attention dropout's mask as^2b/t and
// output 2as^2b/t), but LayerNorm's fp32 mean and rstd (8 bytes a token, on
// s*b/t tokens, twice).
constexpr int64_t kDropout = 2 * kSbh / kT + 3 * kA * kS * kS * kB / kT;  // 13,631,488
constexpr int64_t kNormStats = 2 * 8 * kS * kB / kT;                      // 8,192

TEST(MegatronMemory, LayerIsKorthikantisWithoutDropout) {
  const WorkloadSpec w = spec(gpt("DISTRIBUTED_OPTIMIZER", "none"), 2);
  ASSERT_TRUE(w.megatron);
  EXPECT_EQ(kKorthikantiNone, 38'797'312);
  EXPECT_EQ(layer_activation_bytes(w), kKorthikantiNone - kDropout + kNormStats);
  EXPECT_EQ(layer_activation_bytes(w), 25'174'016);
  // Term by term (memory_model.h): norms 2 * 512 * (2 * 1024 * 2 + 8), q, k,
  // v and the output 1024 * 4 * 512 * 2, the softmax output 2 * 8 * 512^2 * 2,
  // GELU's input and fc2's 2 * 1024 * 2048 * 2.
  EXPECT_EQ(layer_activation_bytes(w), 4'202'496 + 4'194'304 + 8'388'608 + 8'388'608);
}

TEST(MegatronMemory, AttentionCoreRecomputeIsKorthikantisSelectiveRow) {
  const ActivationBreakdown a =
      activation_breakdown(spec(gpt("DISTRIBUTED_OPTIMIZER", "attention_core"), 2));
  EXPECT_EQ(a.block_stored, kKorthikantiSelective - 2 * kSbh / kT + kNormStats);
  EXPECT_EQ(a.block_stored, 16'785'408);
  // The re-run core in its backward: the softmax output and a second output.
  EXPECT_EQ(a.block_recompute, 8'388'608 + 1024 * 512 * 2);
}

TEST(MegatronMemory, TorchtitansLayoutIsUnchangedUnderFsdp) {
  // The same block under FULL_SHARD keeps torchtitan's count (memory_model.h):
  // norms 2 * 512 * (1024 * 2 + 8), the gathered projection inputs 2 * 1024 *
  // 1024 * 2, q, k, v and output 4 * 1024 * 512 * 2 plus the probabilities,
  // GELU's two tensors 2 * 1024 * 2048 * 2.
  const WorkloadSpec w = spec(gpt("FULL_SHARD", "none"), 2);
  ASSERT_FALSE(w.megatron);
  EXPECT_EQ(layer_activation_bytes(w), 2'105'344 + 4'194'304 + 4'194'304 + 8'388'608 + 8'388'608);
}

// A Llama-style model on 4 GPUs: N parameters in all.
std::string llama(std::string_view parallelism) {
  return "name: d\nworkload:\n  model: custom\n  custom_model:\n    layers: 4\n    hidden: 1024\n"
         "    heads: 8\n    kv_heads: 8\n    ffn_hidden: 4096\n    vocab: 32000\n"
         "    activation: swiglu\n  seq_len: 1024\n  local_batch: 1\n  parallelism:\n" +
         std::string(parallelism);
}
// 4 blocks of 4 * 1024^2 + 3 * 1024 * 4096 + 2 * 1024 = 16,779,264, the
// embedding and head 32,768,000 each, the final norm 1,024.
constexpr int64_t kN = 4 * 16'779'264 + 2 * 32'768'000 + 1'024;  // 132,654,080

TEST(MegatronMemory, DistributedOptimizerHoldsSixPlusTwelveOverDpBytesPerParameter) {
  const WorkloadSpec w = spec(llama("    strategy: DISTRIBUTED_OPTIMIZER\n"), 4);
  ASSERT_EQ(parameter_count(w.model), kN);
  const MemoryBreakdown m = memory_breakdown(w);
  EXPECT_EQ(m.params, 2 * kN);                          // bf16, whole
  EXPECT_EQ(m.grads, 4 * kN);                           // the fp32 main-grad buffer, whole
  EXPECT_EQ(m.optimizer, 12 * (kN / 4));                // master weights, m, v over dp 4
  EXPECT_EQ(m.params + m.grads + m.optimizer, 9 * kN);  // 6 + 12 / 4
  EXPECT_EQ(m.unsharded_params, 0);
  EXPECT_EQ(m.comm_buffers, 0);  // buckets reduce and gather in place
  // bf16 main gradients and the remainders' 10 bytes: 2 + 2 + 10 / 4.
  const MemoryBreakdown r = memory_breakdown(
      spec(llama("    strategy: DISTRIBUTED_OPTIMIZER\n  fsdp:\n    reduce_dtype: bf16\n"
                 "  megatron:\n    store_param_remainders: true\n"),
           4));
  EXPECT_EQ(r.grads, 2 * kN);
  EXPECT_EQ(r.optimizer, 10 * (kN / 4));
  // 16-bit state (NeMo's optim.dtype bf16): the moments, 2 x 2 bytes over
  // dp 4, the bf16 parameters being the master weights.
  const MemoryBreakdown b = memory_breakdown(spec(
      llama("    strategy: DISTRIBUTED_OPTIMIZER\n  megatron:\n    optimizer_dtype: bf16\n"), 4));
  EXPECT_EQ(b.optimizer, 4 * (kN / 4));
  // FP8 parameters need a bf16 master copy: 6 bytes.
  const MemoryBreakdown f = memory_breakdown(
      spec(llama("    strategy: DISTRIBUTED_OPTIMIZER\n  float8:\n    recipe: delayed\n"
                 "  megatron:\n    optimizer_dtype: bf16\n    fp8_param_gather: true\n"),
           4));
  EXPECT_EQ(f.optimizer, 6 * (kN / 4));
  // Megatron allocates those once: the allocator's fragmentation is the
  // activations' only.
  EXPECT_NEAR(static_cast<double>(m.reserve - kRuntimeReserveBytes),
              kFragmentation * static_cast<double>(m.activations), 1.0);
}

// Transformer Engine's FP8 weight cache: 2 bytes (both FP8 layouts) for each
// of the 4 blocks' 16,777,216 linear weights; none with FP8 parameters,
// whose kept transpose and FP8 weight take the bf16 weight's bytes.
TEST(MegatronMemory, Fp8WeightsKeptForTheStepTakeTwoBytesPerLinearWeight) {
  const std::string fp8 =
      "    strategy: DISTRIBUTED_OPTIMIZER\n  float8:\n    recipe: delayed\n"
      "    weight_casts: once_per_step\n";
  const MemoryBreakdown kept = memory_breakdown(spec(llama(fp8), 4));
  EXPECT_EQ(kept.unsharded_params, 2 * 4 * 16'777'216);
  EXPECT_EQ(kept.params, 2 * kN);
  const MemoryBreakdown fp8_params =
      memory_breakdown(spec(llama(fp8 + "  megatron:\n    fp8_param_gather: true\n"), 4));
  EXPECT_EQ(fp8_params.unsharded_params, 0);
  EXPECT_EQ(fp8_params.params, 2 * kN);
  // Cast in every pass: nothing kept.
  EXPECT_EQ(memory_breakdown(spec(llama("    strategy: DISTRIBUTED_OPTIMIZER\n  float8:\n"
                                        "    recipe: delayed\n"),
                                  4))
                .unsharded_params,
            0);
}

TEST(MegatronMemory, PlainMegatronDdpHoldsEighteenBytesPerParameter) {
  const MemoryBreakdown m =
      memory_breakdown(spec(llama("    strategy: NO_SHARD\n  megatron:\n    ddp: true\n"), 4));
  EXPECT_EQ(m.params + m.grads + m.optimizer, 18 * kN);
  // PyTorch's DDP as before: 16 bytes per parameter.
  const MemoryBreakdown p = memory_breakdown(spec(llama("    strategy: NO_SHARD\n"), 4));
  EXPECT_EQ(p.params + p.grads + p.optimizer, 16 * kN);
}

// Megatron-FSDP: the bf16 parameter shard, the fp32 main-grad shard, the
// fp32 main weights and Adam's moments: 18 bytes over dp; a gathered unit
// holds bf16 parameters, its main-grad bucket fp32 gradients.
TEST(MegatronMemory, MegatronFsdpHoldsEighteenBytesPerParameterOverDp) {
  const std::string fsdp = "    strategy: FULL_SHARD\n  megatron:\n    fsdp: true\n";
  const MemoryBreakdown m = memory_breakdown(spec(llama(fsdp), 4));
  EXPECT_EQ(m.params, 2 * (kN / 4));
  EXPECT_EQ(m.grads, 4 * (kN / 4));
  EXPECT_EQ(m.optimizer, 12 * (kN / 4));
  constexpr int64_t kBlock = 16'779'264;
  constexpr int64_t kRoot = 2 * 32'768'000 + 1'024;
  // The root and three blocks (the one computing and, unlimited, two
  // prefetched: memory_model.cc's depth 2), then one main-grad bucket.
  EXPECT_EQ(m.unsharded_params, 2 * kRoot + 3 * 2 * kBlock);
  EXPECT_EQ(m.comm_buffers, 4 * kBlock);
  // From the caching allocator, those buffers fragment with the activations.
  EXPECT_NEAR(
      static_cast<double>(m.reserve - kRuntimeReserveBytes),
      kFragmentation * static_cast<double>(m.activations + m.unsharded_params + m.comm_buffers),
      1.0);
  // The double buffer: two blocks, persistent.
  const MemoryBreakdown d =
      memory_breakdown(spec(llama(fsdp + "    fsdp_double_buffer: true\n"), 4));
  EXPECT_EQ(d.unsharded_params, 2 * kRoot + 2 * 2 * kBlock);
  EXPECT_NEAR(static_cast<double>(d.reserve - kRuntimeReserveBytes),
              kFragmentation * static_cast<double>(d.activations), 1.0);
  // PyTorch's FSDP2 on the same job: bf16 gradient shard and buffers.
  const MemoryBreakdown p = memory_breakdown(spec(llama("    strategy: FULL_SHARD\n"), 4));
  EXPECT_EQ(p.grads, 2 * (kN / 4));
  EXPECT_EQ(p.comm_buffers, 2 * kBlock);
}

TEST(MegatronMemory, MegatronFsdpKeepsMegatronsActivationLayout) {
  const WorkloadSpec fsdp = spec(gpt("FULL_SHARD", "none") + "  megatron:\n    fsdp: true\n", 2);
  ASSERT_TRUE(fsdp.megatron_core());
  ASSERT_FALSE(fsdp.megatron);
  EXPECT_EQ(layer_activation_bytes(fsdp), kKorthikantiNone - kDropout + kNormStats);
}

}  // namespace
}  // namespace clustersim::workloads
