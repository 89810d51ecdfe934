// Megatron-Core's activation offload (workload.megatron.cpu_offloading_num_layers):
// the limits Megatron-Core puts on it, what stays on the GPU, and the copies
// and waits of Transformer Engine's OffloadSynchronizer in the schedule.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <string_view>

#include "config/config_error.h"
#include "config/scenario_loader.h"
#include "workloads/model/memory_model.h"
#include "workloads/schedules/fsdp_schedule.h"

namespace clustersim::workloads {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;

WorkloadSpec spec_from_yaml(std::string_view yaml) {
  sim::ConfigSchema schema;
  sim::add_scenario_identity_keys(schema);
  add_workload_keys(schema);
  return read_workload_spec(sim::load_scenario_text(yaml, "s.yaml", schema), 8, 8);
}

std::string error_of(std::string_view yaml) {
  try {
    spec_from_yaml(yaml);
  } catch (const sim::ConfigError& e) {
    return e.what();
  }
  return "no error";
}

// Llama3-8B (32 layers) under Megatron-FSDP on 8 GPUs; `extra` from line 11
// (inside workload.megatron at column 5), `before` at lines 6.. ahead of it.
std::string megatron_fsdp(std::string_view extra, std::string_view before = "") {
  return "name: t\nworkload:\n  model: llama3-8b\n  seq_len: 8192\n  local_batch: 2\n" +
         std::string(before) +
         "  parallelism:\n    strategy: FULL_SHARD\n  megatron:\n    fsdp: true\n" +
         std::string(extra);
}

TEST(ActivationOffload, LayersMustBeFewerThanTheModels) {
  EXPECT_THAT(error_of(megatron_fsdp("    cpu_offloading_num_layers: 32\n")),
              AllOf(StartsWith("s.yaml:10:32: error: workload.megatron.cpu_offloading_num_layers: "
                               "expected fewer than the model's 32 layers"),
                    HasSubstr("found 32")));
  EXPECT_EQ(spec_from_yaml(megatron_fsdp("    cpu_offloading_num_layers: 31\n"))
                .activation_offload_layers,
            31);
}

TEST(ActivationOffload, NotWithRecomputationNorOutsideMegatron) {
  EXPECT_THAT(error_of(megatron_fsdp("    cpu_offloading_num_layers: 8\n",
                                     "  activation_checkpointing: full\n")),
              AllOf(StartsWith("s.yaml:11:32: error: workload.megatron.cpu_offloading_num_layers: "
                               "expected 0 with activation_checkpointing full"),
                    HasSubstr("recomputation")));
  EXPECT_THAT(
      error_of("name: t\nworkload:\n  model: llama3-8b\n  seq_len: 8192\n  local_batch: 2\n"
               "  megatron:\n    cpu_offloading_num_layers: 8\n"),
      StartsWith("s.yaml:7:32: error: workload.megatron.cpu_offloading_num_layers: expected no "
                 "value with strategy FULL_SHARD"));
}

TEST(ActivationOffload, NotWithPipelineParallelism) {
  EXPECT_THAT(error_of("name: t\nworkload:\n  model: llama3-8b\n  seq_len: 8192\n  local_batch: 1\n"
                       "  global_batch: 16\n  parallelism:\n    strategy: DISTRIBUTED_OPTIMIZER\n"
                       "    pp: 2\n  megatron:\n    cpu_offloading_num_layers: 4\n"),
              AllOf(StartsWith("s.yaml:11:32: error: workload.megatron.cpu_offloading_num_layers: "
                               "expected 0 with pp 2"),
                    HasSubstr("found 4")));
  // 0, as Megatron-Bridge's presets write "no offloading", is no error.
  EXPECT_EQ(error_of("name: t\nworkload:\n  model: llama3-8b\n  seq_len: 8192\n  local_batch: 1\n"
                     "  global_batch: 16\n  parallelism:\n    strategy: DISTRIBUTED_OPTIMIZER\n"
                     "    pp: 2\n  megatron:\n    cpu_offloading_num_layers: 0\n"),
            "no error");
}

TEST(ActivationOffload, OnlyTheLayersNotOffloadedStayOnTheGpu) {
  const WorkloadSpec none = spec_from_yaml(megatron_fsdp(""));
  const WorkloadSpec eight = spec_from_yaml(megatron_fsdp("    cpu_offloading_num_layers: 8\n"));
  const ActivationBreakdown a = activation_breakdown(none);
  const ActivationBreakdown b = activation_breakdown(eight);
  EXPECT_EQ(b.block_stored, a.block_stored);
  EXPECT_EQ(b.layers, 24 * a.block_stored);
  EXPECT_EQ(b.offloaded, 8 * a.block_stored);
  EXPECT_EQ(a.total - b.total, 8 * a.block_stored);
  const MemoryBreakdown m = memory_breakdown(eight);
  EXPECT_EQ(memory_breakdown(none).activations - m.activations, 8 * a.block_stored);
  EXPECT_EQ(m.host_bytes, 8 * a.block_stored);
}

// Transformer Engine's linears keep their inputs quantized (memory_model.h):
// Llama3-8B, T = 16384 tokens, H 4096, F 14336, Q 4096; the norms' two
// outputs and fc2's input at f bytes instead of 2, linear_proj's copy at f.
TEST(ActivationOffload, Float8LinearsKeepTheirInputsQuantized) {
  const int64_t bf16 = activation_breakdown(spec_from_yaml(megatron_fsdp(""))).block_none;
  const int64_t fp8 =
      activation_breakdown(spec_from_yaml(megatron_fsdp("", "  float8:\n    recipe: current\n")))
          .block_none;
  const int64_t mxfp8 =
      activation_breakdown(spec_from_yaml(megatron_fsdp("", "  float8:\n    recipe: mxfp8\n")))
          .block_none;
  // (2*T*H + T*F) * (2 - 1) - T*Q*1 = 16384 * 18432
  EXPECT_EQ(bf16 - fp8, 301'989'888);
  // (2*T*H + T*F) * (2 - 1.03125) - T*Q*1.03125
  EXPECT_EQ(bf16 - mxfp8, 130'023'424 + 227'540'992 - 69'206'016);
}

int32_t find(const FsdpSchedule& s, TaskKind kind, Phase phase, int32_t unit) {
  for (int32_t i = 0; i < s.size(); ++i) {
    const Task& t = s.tasks[static_cast<size_t>(i)];
    if (t.kind == kind && t.phase == phase && t.unit == unit) return i;
  }
  return -1;
}

bool depends_on(const FsdpSchedule& s, int32_t task, int32_t on) {
  const std::span<const int32_t> d = s.deps_of(task);
  return std::find(d.begin(), d.end(), on) != d.end();
}

// 32 layers, 8 offloaded: layer i's copy out follows its forward and gates
// layer 24 + i's; its copy back starts after the backward work issued
// before layer 23 + i's and gates layer i's backward.
TEST(ActivationOffload, CopiesFollowTransformerEnginesSynchronizer) {
  const WorkloadSpec w = spec_from_yaml(megatron_fsdp("    cpu_offloading_num_layers: 8\n"));
  const FsdpSchedule s = build_fsdp_schedule(w);
  EXPECT_EQ(s.count(TaskKind::kCopyToHost), 8);
  EXPECT_EQ(s.count(TaskKind::kCopyToDevice), 8);
  EXPECT_EQ(s.offload_bytes, activation_breakdown(w).block_stored);
  for (int32_t i = 0; i < 8; ++i) {
    SCOPED_TRACE(i);
    const int32_t out = find(s, TaskKind::kCopyToHost, Phase::kForward, i);
    const int32_t back = find(s, TaskKind::kCopyToDevice, Phase::kBackward, i);
    ASSERT_GE(out, 0);
    ASSERT_GE(back, 0);
    EXPECT_EQ(s.tasks[static_cast<size_t>(out)].stream, Stream::kCopy);
    EXPECT_EQ(s.tasks[static_cast<size_t>(out)].bytes, s.offload_bytes);
    // The copy out waits for the layer's forward: the last task before it
    // on the compute stream is that layer's.
    EXPECT_TRUE(depends_on(s, out, out - 1));
    EXPECT_EQ(s.tasks[static_cast<size_t>(out - 1)].unit, i);
    EXPECT_TRUE(depends_on(s, find(s, TaskKind::kKernel, Phase::kForward, 24 + i), out));
    EXPECT_FALSE(depends_on(s, find(s, TaskKind::kKernel, Phase::kForward, 23 + i), out));
    // The copy back is issued before layer 23 + i's backward and gates layer i's.
    EXPECT_LT(back, find(s, TaskKind::kKernel, Phase::kBackward, 23 + i));
    EXPECT_GT(back, find(s, TaskKind::kKernel, Phase::kBackward, 24 + i));
    EXPECT_TRUE(depends_on(s, find(s, TaskKind::kKernel, Phase::kBackward, i), back));
  }
  EXPECT_EQ(find(s, TaskKind::kCopyToHost, Phase::kForward, 8), -1);
}

}  // namespace
}  // namespace clustersim::workloads
