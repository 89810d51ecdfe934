// A Megatron/NeMo layout that really ran, predicted to fit: NeMo's
// Nemotron-4 340B on 128 H100 80 GB (scenarios/examples/nemotron4_340b_h100.yaml;
// NVIDIA/dgxc-benchmarking, TP 8 x PP 8 x VP 12, data-parallel 2, 16
// micro-batches of one 4096-token sequence, 4.61 s a step).
#include <gtest/gtest.h>

#include <string>

#include "scenario/step_config.h"
#include "workloads/model/memory_model.h"
#include "workloads/model/model_spec.h"

namespace clustersim::cli {
namespace {

using workloads::MemoryBreakdown;
using workloads::WorkloadSpec;

const std::string kScenario = CLUSTERSIM_SOURCE_DIR "/scenarios/examples/nemotron4_340b_h100.yaml";
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// One block: attention 2 x 18432^2 + 2 x 18432 x 1536 = 736,100,352, MLP 2 x
// 18432 x 73728 = 2,717,908,992, two LayerNorms 4 x 18432: 3,454,083,072, of
// which a TP rank holds 431,760,384. Stage 0 holds 12 blocks (chunks 0, 8,
// ..., 88 of one block each) and the embedding's 256,000 / 8 x 18432 rows.
constexpr int64_t kStage0Params =
    int64_t{12} * 431'760'384 + int64_t{32'000} * 18'432;  // 5,770,948,608

// A layer's activations on a rank (memory_model.h, Megatron's layout, T 4096
// tokens, 512 of them sequence-parallel, Q 2304, K 192, F 9216): LayerNorm
// inputs, outputs and statistics 2 x 512 x (2 x 18432 x 2 + 8) = 75,505,664;
// q, k, v and the output 4096 x (2 x 2304 + 2 x 192) x 2 = 40,894,464; the
// flash statistics 4096 x 12 x 4 = 196,608; squared ReLU's input and fc2's
// 2 x 4096 x 9216 x 2 = 150,994,944.
constexpr int64_t kLayer = 75'505'664 + 40'894'464 + 196'608 + 150'994'944;  // 267,591,680

TEST(MegatronScenarios, Nemotron340bFitsOn128H100WithTheDistributedOptimizer) {
  const StepScenario s = load_step_scenario(kScenario, {});
  const WorkloadSpec& w = s.config.workload;
  ASSERT_EQ(w.world_size, 128);
  ASSERT_EQ(w.dp_size, 2);
  ASSERT_EQ(w.grad_accum, 16);  // global batch 32 over 2 data-parallel ranks
  ASSERT_EQ(workloads::parameter_count(w.model), 341'029'195'776);
  const MemoryBreakdown m = workloads::memory_breakdown(w);
  EXPECT_EQ(m.stage, 0);
  // bf16 parameters and main gradients, and Adam's bf16 moments over the 2
  // data-parallel ranks (the parameters are the master weights): 2 + 2 + 4 / 2.
  EXPECT_EQ(m.params, 2 * kStage0Params);
  EXPECT_EQ(m.grads, 2 * kStage0Params);
  EXPECT_EQ(m.optimizer, 4 * kStage0Params / 2);
  EXPECT_EQ(m.params + m.grads + m.optimizer, 34'625'691'648);  // 32.2 GiB
  EXPECT_EQ(m.unsharded_params + m.comm_buffers, 0);
  // 103 chunk-micro-batches of one layer ((v - 1) pp + 2 (pp - 1) + 1 =
  // 96 x (1 + 7 / 96), Megatron's interleaving penalty), each without the
  // attention core's statistics (selective recompute), and in the last
  // block's backward its re-run core (output and statistics) and the
  // gradient of its output, 512 x 18432 x 2.
  const int64_t stored = kLayer - 196'608;
  const int64_t block_backward = (4096 * 2304 * 2 + 196'608) + 512 * 18'432 * 2;
  EXPECT_EQ(m.activations, 103 * stored + block_backward);  // 25.7 GiB
  EXPECT_TRUE(workloads::fits(m, s.net.profile.gpu.memory_bytes))
      << static_cast<double>(m.total()) / kGiB << " GiB";
  EXPECT_NEAR(static_cast<double>(m.total()) / kGiB, 60.2, 0.1);
}

// What the model predicted before Megatron's modes: the distributed
// optimizer as SHARD_GRAD_OP with no_sync (bf16 gradients accumulated
// unsharded besides the sharded ones, the parameters gathered besides their
// shards) and torchtitan's activation layout: far over the 80 GB.
TEST(MegatronScenarios, TheFsdpApproximationDidNotFit) {
  const StepScenario s = load_step_scenario(kScenario, {});
  WorkloadSpec w = s.config.workload;
  w.megatron = false;
  w.strategy = workloads::ShardingStrategy::kShardGradOp;
  w.no_sync = true;
  w.store_param_remainders = false;
  w.activation_checkpointing = workloads::ActivationCheckpointing::kNone;
  const MemoryBreakdown m = workloads::memory_breakdown(w);
  EXPECT_FALSE(workloads::fits(m, s.net.profile.gpu.memory_bytes));
  EXPECT_GT(static_cast<double>(m.total()) / kGiB, 120.0);
}

}  // namespace
}  // namespace clustersim::cli
