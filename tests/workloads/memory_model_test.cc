#include "workloads/memory_model.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "sim/scenario_loader.h"

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

// s = 8192, b = 2, h = 4096, a = 32, L = 32, V = 128256, t = 1, bf16.
constexpr int64_t kSbh = int64_t{8192} * 2 * 4096;  // 67,108,864
constexpr int64_t kLayerFlash = kSbh * 34;          // 2,281,701,376
constexpr int64_t kLayerFull =
    kSbh * 34 + int64_t{8192} * 2 * (5 * 32 * 8192);               // s*b*h*(34 + 5as/h)
constexpr int64_t kLogits = int64_t{8192} * 2 * 128256 * (2 + 4);  // 12,608,077,824

TEST(MemoryModel, ActivationsFollowKorthikanti) {
  EXPECT_EQ(kLayerFull, 23'756'537'856);
  const MemoryOptions no_flash{false};
  EXPECT_EQ(layer_activation_bytes(llama3_8b("none"), no_flash), kLayerFull);
  EXPECT_EQ(layer_activation_bytes(llama3_8b("none")), kLayerFlash);

  EXPECT_EQ(activation_bytes(llama3_8b("none"), no_flash), 32 * kLayerFull + kLogits);
  EXPECT_EQ(activation_bytes(llama3_8b("none"), no_flash), 772'817'289'216);
  EXPECT_EQ(activation_bytes(llama3_8b("selective"), no_flash), 32 * kLayerFlash + kLogits);
  EXPECT_EQ(activation_bytes(llama3_8b("selective"), no_flash), 85'622'521'856);
  EXPECT_EQ(activation_bytes(llama3_8b("full"), no_flash), 32 * 2 * kSbh + kLayerFull + kLogits);
  EXPECT_EQ(activation_bytes(llama3_8b("full"), no_flash), 40'659'582'976);

  // With flash attention there are no scores to drop: selective == none.
  EXPECT_EQ(activation_bytes(llama3_8b("none")), activation_bytes(llama3_8b("selective")));
  EXPECT_EQ(activation_bytes(llama3_8b("full")), 32 * 2 * kSbh + kLayerFlash + kLogits);
  EXPECT_EQ(activation_bytes(llama3_8b("full")), 19'184'746'496);
}

TEST(MemoryModel, Llama3_8bOnEightGpusFitsOnlyWithFullCheckpointingAtBatchTwo) {
  // states 16,060,522,496 + unsharded 2,973,802,496 + comm 436,224,000 = 19,470,548,992
  const int64_t fixed = 19'470'548'992;
  const MemoryBreakdown selective = memory_breakdown(llama3_8b("selective"));
  EXPECT_EQ(selective.activations, 85'622'521'856);
  EXPECT_EQ(selective.reserve, kGiB + 5'254'653'542);  // 5% of 105,093,070,848
  EXPECT_EQ(selective.total(), 111'421'466'214);
  EXPECT_FALSE(fits(selective, 80 * kGiB));

  const MemoryBreakdown full = memory_breakdown(llama3_8b("full"));
  EXPECT_EQ(full.total() - full.reserve, fixed + 19'184'746'496);
  EXPECT_EQ(full.total(), 41'661'802'086);
  EXPECT_TRUE(fits(full, 80 * kGiB));
}

TEST(MemoryModel, Llama3_405bNeedsTensorParallelismAndHybridSharding) {
  const WorkloadSpec eight = spec(
      "name: t\nworkload:\n  model: llama3-405b\n  seq_len: 8192\n  local_batch: 1\n"
      "  activation_checkpointing: full\n",
      8);
  const MemoryBreakdown m8 = memory_breakdown(eight);
  // 16 bytes * 405,853,388,800 / 8 of states alone is ~812 GB.
  EXPECT_EQ(m8.params + m8.grads + m8.optimizer, 16 * (405'853'388'800 / 8));
  EXPECT_FALSE(fits(m8, 80 * kGiB));

  // 98,304 GPUs, tp 8 inside nodes, shards of 512 (replicas of 24).
  const std::string hsdp =
      "name: t\nworkload:\n  model: llama3-405b\n  seq_len: 8192\n  local_batch: 1\n"
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
  // full: 126 * 2*s*b*h/t + s*b*h*34/t + s*b*(V/t)*6
  EXPECT_EQ(m.activations, 126 * (int64_t{2} * 8192 * 16384 / 8) + int64_t{8192} * 16384 * 34 / 8 +
                               int64_t{8192} * 16032 * 6);
  EXPECT_EQ(m.activations, 5'586'288'640);
  EXPECT_EQ(m.total(), 12'217'536'371);
  EXPECT_TRUE(fits(m, 80 * kGiB));

  // Without checkpointing: 126 layers of s*b*h*34/t = 71.9 GB; still just fits.
  const MemoryBreakdown none = memory_breakdown(spec(hsdp, 98304));
  EXPECT_EQ(none.total(), 82'646'611'418);
  EXPECT_TRUE(fits(none, 80 * kGiB));
  EXPECT_FALSE(fits(none, 80'000'000'000));
}

TEST(MemoryModel, StrategiesAndOptions) {
  const std::string base =
      "name: t\nworkload:\n  model: llama3-8b\n  seq_len: 4096\n"
      "  local_batch: 1\n";
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
  EXPECT_EQ(layer_activation_bytes(fp32), int64_t{4096} * 4096 * 34 * 2);
  // CPU offload moves the sharded state to the host.
  m = memory_breakdown(spec(base + "  cpu_offload: true\n", 8));
  EXPECT_EQ(m.params + m.grads + m.optimizer, 0);
  EXPECT_EQ(m.host_bytes, 16 * k8bShard);
  // Tensor parallelism with sequence parallelism divides activations by tp.
  const WorkloadSpec tp2 = spec(base + "  parallelism:\n    tp: 2\n", 8);
  EXPECT_EQ(layer_activation_bytes(tp2), int64_t{4096} * 4096 * 34 / 2);
  EXPECT_EQ(memory_breakdown(tp2).comm_buffers, 2 * (k8bBlock / 2));
}

}  // namespace
}  // namespace clustersim::workloads
