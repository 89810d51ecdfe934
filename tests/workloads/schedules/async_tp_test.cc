// Async TP: the TP collectives of a block become per-peer copies beside row
// chunks of the GEMMs they feed or drain (counts and bytes by hand), the
// copies take no SMs, and the step hides more of TP's communication.
#include <gtest/gtest.h>

#include "tests/support/one_node_step.h"
#include "tests/support/step_fixtures.h"
#include "workloads/schedules/fsdp_schedule.h"
#include "workloads/schedules/step_simulator.h"

namespace clustersim::workloads {
namespace {

// small_spec's model on 2 blocks, TP 4 x FSDP 2 on one node, compiled, no
// checkpointing: per block 2 all-gathers and 2 reduce-scatters forward, the
// same backward.
WorkloadSpec tp_spec(bool async) {
  WorkloadSpec w = test_support::tp_spec(8, 4, async);
  w.model.layers = 2;
  return w;
}

int64_t count(const FsdpSchedule& s, TaskKind kind, GroupRole group) {
  int64_t n = 0;
  for (const Task& t : s.tasks) n += t.kind == kind && t.group == group ? 1 : 0;
  return n;
}

TEST(AsyncTp, CollectivesBecomeCopiesToEachPeerBesideGemmChunks) {
  const FsdpSchedule sync = build_fsdp_schedule(tp_spec(false));
  const FsdpSchedule async = build_fsdp_schedule(tp_spec(true));
  // 2 blocks x (2 forward + 2 backward) of each kind.
  EXPECT_EQ(count(sync, TaskKind::kAllGather, GroupRole::kTp), 8);
  EXPECT_EQ(count(sync, TaskKind::kReduceScatter, GroupRole::kTp), 8);
  EXPECT_EQ(count(async, TaskKind::kAllGather, GroupRole::kTp), 0);
  EXPECT_EQ(count(async, TaskKind::kReduceScatter, GroupRole::kTp), 0);
  // Each of the 16 sites copies one chunk to (and from) each of 3 peers.
  EXPECT_EQ(count(async, TaskKind::kSend, GroupRole::kTp), 16 * 3);
  EXPECT_EQ(count(async, TaskKind::kRecv, GroupRole::kTp), 16 * 3);
  // A chunk: 2048 tokens / 4 x hidden 2048 x 2 bytes.
  EXPECT_EQ(async.tp_chunk_bytes, 512 * 2048 * 2);
  int64_t shifts = 0;
  for (const Task& t : async.tasks) {
    if (t.kind == TaskKind::kSend && t.group == GroupRole::kTp) shifts += t.peer_stage;
  }
  EXPECT_EQ(shifts, 16 * (1 + 2 + 3));  // to the peers 1, 2 and 3 places on
  // The qkv GEMM runs as 4 chunks of 512 rows, each a quarter of its FLOPs.
  for (size_t k = 0; k < async.tp_chunk.size(); ++k) {
    if (async.kernels[k].name != "qkv_proj") continue;
    const Kernel& chunk = async.kernels[static_cast<size_t>(async.tp_chunk[k])];
    EXPECT_EQ(chunk.m, 512);
    EXPECT_DOUBLE_EQ(chunk.flops, async.kernels[k].flops / 4);
  }
  // The reduce-scatter's partials summed: 3 adds per element, 5 chunks moved.
  const Kernel& sum = async.kernels[static_cast<size_t>(async.tp_reduce_partials)];
  EXPECT_DOUBLE_EQ(sum.bytes, 5.0 * static_cast<double>(async.tp_chunk_bytes));
}

// Under Transformer Engine's delayed scaling the 8 gathering sites receive
// FP8 chunks (1 byte an element), the 8 scattering sites still bf16 ones.
TEST(AsyncTp, Fp8InputsAreGatheredAtOneByteAnElement) {
  WorkloadSpec w = tp_spec(true);
  w.float8 = Float8Recipe::kDelayed;
  const FsdpSchedule s = build_fsdp_schedule(w);
  EXPECT_EQ(s.tp_gather_chunk_bytes, 512 * 2048);
  EXPECT_EQ(s.tp_chunk_bytes, 512 * 2048 * 2);
  int64_t received = 0;
  for (const Task& t : s.tasks) {
    if (t.kind == TaskKind::kRecv && t.group == GroupRole::kTp) received += t.bytes;
  }
  EXPECT_EQ(received, 8 * 3 * (512 * 2048 + 512 * 2048 * 2));
  // torchao's recipes keep bf16 chunks.
  w.float8 = Float8Recipe::kTensorwise;
  EXPECT_EQ(build_fsdp_schedule(w).tp_gather_chunk_bytes, 512 * 2048 * 2);
}

StepResult simulate(const WorkloadSpec& w) { return test_support::simulate_on_one_node(w); }

TEST(AsyncTp, TheStepHidesTpCommunicationBehindTheGemmChunks) {
  const StepResult sync = simulate(tp_spec(false));
  const StepResult async = simulate(tp_spec(true));
  EXPECT_GT(sync.breakdown.exposed_tp_s, 0);
  EXPECT_LT(async.breakdown.exposed_tp_s, sync.breakdown.exposed_tp_s);
  // The same tokens either way.
  EXPECT_DOUBLE_EQ(async.tokens_per_s_per_gpu * async.step_time_s,
                   sync.tokens_per_s_per_gpu * sync.step_time_s);
}

}  // namespace
}  // namespace clustersim::workloads
