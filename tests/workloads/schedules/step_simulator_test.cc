#include "workloads/schedules/step_simulator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string_view>
#include <vector>

#include "collectives/group_collectives.h"
#include "tests/support/step_fixtures.h"
#include "topology/cluster_config.h"
#include "workloads/model/model_spec.h"
#include "workloads/model/optimizer_step.h"
#include "workloads/model/transformer_kernels.h"
#include "workloads/schedules/gpu_speed.h"

namespace clustersim::workloads {
namespace {

using test_support::h100;
using test_support::hgx_h100;
using test_support::small_spec;
using topology::Cluster;

StepConfig config_for(const WorkloadSpec& w, double overlap_slowdown = 1.0) {
  StepConfig c;
  c.workload = w;
  c.compute = compute_spec_from_profile(h100());
  c.compute.comm_overlap_slowdown = overlap_slowdown;
  c.compute.speed_variation = 0;  // identical GPUs: hand-computed kernel sums hold on every rank
  c.host.kernel_launch = sim::SimTime::zero();
  c.host.graph_launch = sim::SimTime::zero();
  return c;
}

// Sum of the kernel times of every kernel task of one rank's schedule.
int64_t schedule_kernel_ns(const WorkloadSpec& w, const GpuComputeSpec& spec) {
  const FsdpSchedule s = build_fsdp_schedule(w);
  int64_t total = 0;
  for (const Task& t : s.tasks) {
    if (t.kind == TaskKind::kKernel || t.kind == TaskKind::kOptimizer) {
      total += kernel_time(s.kernels[static_cast<size_t>(t.kernel)], spec).count_ns();
    }
  }
  return total;
}

double breakdown_sum(const StepBreakdown& b) {
  return b.compute_s + b.exposed_comm_s() + b.sync_wait_s + b.launch_bound_s + b.idle_s;
}

TEST(StepSimulator, TheSlowestGpuGatesTheStepAndCostGrowsWithTheGroup) {
  // With the profile's spread every rank computes exp(sd z_r) times the
  // median's kernel time; the collectives make all wait for the slowest, so
  // the step is slower than with identical GPUs, more so on 16 GPUs than on 8.
  const auto step = [](int64_t world, double sd) {
    StepConfig c = config_for(small_spec(world, world));
    c.compute.speed_variation = sd;
    return simulate_step(hgx_h100(world / 8), h100(), c);
  };
  const StepResult same8 = step(8, 0), var8 = step(8, 0.05);
  const std::vector<double> f = gpu_time_factors(8, 0.05, 1);
  const double slowest = *std::max_element(f.begin(), f.end());
  EXPECT_GT(var8.step_time_s, same8.step_time_s);
  // Compute-bound: about the slowest GPU's factor (exposed communication is not slowed).
  EXPECT_NEAR(var8.step_time_s / same8.step_time_s, slowest, 0.25 * (slowest - 1));
  EXPECT_EQ(var8.slowest_rank, std::max_element(f.begin(), f.end()) - f.begin());
  const std::vector<double> f16 = gpu_time_factors(16, 0.05, 1);
  const StepResult same16 = step(16, 0), var16 = step(16, 0.05);
  EXPECT_GE(var16.step_time_s / same16.step_time_s, var8.step_time_s / same8.step_time_s);
  EXPECT_GE(*std::max_element(f16.begin(), f16.end()), slowest);
}

TEST(StepSimulator, SegmentJitterFromTheProfileMakesRanksWaitForEachOther) {
  // gpu.segment_jitter reaches the engine: identical GPUs whose segments are
  // drawn apart wait for each other at every collective; their compute
  // grows by the lognormal's mean exp(sd^2 / 2) = 1.00125 on average.
  collectives::HardwareProfile profile = h100();
  profile.gpu.segment_jitter = 0.05;
  StepConfig c = config_for(small_spec(8, 8));
  const StepResult steady = simulate_step(hgx_h100(1), h100(), c);
  c.compute.segment_jitter = compute_spec_from_profile(profile).segment_jitter;
  ASSERT_EQ(c.compute.segment_jitter, 0.05);
  const StepResult jittered = simulate_step(hgx_h100(1), h100(), c);
  // The steady step waits a little too (30 us: the ring's members leave a
  // collective at different times); the jittered one several times that.
  EXPECT_GT(jittered.breakdown.sync_wait_s, 5 * steady.breakdown.sync_wait_s);
  EXPECT_GT(jittered.step_time_s, steady.step_time_s);
  EXPECT_NEAR(jittered.breakdown.compute_s / steady.breakdown.compute_s, 1.00125, 0.01);
  EXPECT_NEAR(breakdown_sum(jittered.breakdown), jittered.step_time_s, 1e-9);
  EXPECT_EQ(simulate_step(hgx_h100(1), h100(), c).step_time_s, jittered.step_time_s);
}

TEST(StepSimulator, HostWorkPerStepDelaysEveryGpuWhole) {
  // workload.host.per_step: the host starts issuing 5 ms late, every GPU
  // idles until then, and "launch-bound" holds the 5 ms.
  StepConfig c = config_for(small_spec(8, 8));
  const StepResult steady = simulate_step(hgx_h100(1), h100(), c);
  c.workload.host_per_step_ns = 5'000'000;
  const StepResult late = simulate_step(hgx_h100(1), h100(), c);
  EXPECT_NEAR(late.step_time_s - steady.step_time_s, 5e-3, 1e-9);
  EXPECT_NEAR(late.breakdown.launch_bound_s - steady.breakdown.launch_bound_s, 5e-3, 1e-9);
  EXPECT_DOUBLE_EQ(late.breakdown.compute_s, steady.breakdown.compute_s);
  EXPECT_DOUBLE_EQ(late.breakdown.sync_wait_s, steady.breakdown.sync_wait_s);
  EXPECT_DOUBLE_EQ(late.breakdown.exposed_all_gather_s, steady.breakdown.exposed_all_gather_s);
  EXPECT_NEAR(breakdown_sum(late.breakdown), late.step_time_s, 1e-9);
}

TEST(StepSimulator, HostWorkPerLayerAndMicroBatchDelaysWhatTheHostIssuesAfterIt) {
  // small_spec: 4 layers, 2 micro-batches. The loop's host work precedes
  // each micro-batch's forward (2 of them) and each layer's forward and
  // backward (4 x 2 x 2 = 16 passes; the root's and the optimizer's kernels
  // are no layer's): far more than the kernels' time, it makes the step
  // host-bound, every GPU waiting for the host's last issue.
  StepConfig c = config_for(small_spec(8, 8));
  c.workload.grad_accum = 2;
  const StepResult steady = simulate_step(hgx_h100(1), h100(), c);
  c.workload.host_per_layer_ns = 50'000'000;
  c.workload.host_per_micro_batch_ns = 30'000'000;
  const StepResult slow = simulate_step(hgx_h100(1), h100(), c);
  const double host_s = 16 * 50e-3 + 2 * 30e-3;
  EXPECT_GT(slow.step_time_s, host_s);
  EXPECT_LT(slow.step_time_s, host_s + steady.step_time_s);
  // The GPU's wait is launch-bound, or charged to the collective the late
  // host issued last (its sync wait before it starts, its exposed time).
  EXPECT_GT(
      slow.breakdown.launch_bound_s + slow.breakdown.sync_wait_s + slow.breakdown.exposed_comm_s(),
      host_s - steady.step_time_s);
  EXPECT_GT(slow.breakdown.launch_bound_s, 0.5 * host_s);
  EXPECT_DOUBLE_EQ(slow.breakdown.compute_s, steady.breakdown.compute_s);
  EXPECT_NEAR(breakdown_sum(slow.breakdown), slow.step_time_s, 1e-9);
  // Small against the kernels it stays hidden but for the first
  // micro-batch's 1 ms, which delays everything (the first layer's 10 us
  // then passes while its all-gather runs): the host runs ahead of the GPU.
  c.workload.host_per_layer_ns = 10'000;
  c.workload.host_per_micro_batch_ns = 1'000'000;
  const StepResult hidden = simulate_step(hgx_h100(1), h100(), c);
  EXPECT_NEAR(hidden.step_time_s - steady.step_time_s, 1e-3, 2e-6);
  // CUDA graphs replay the layers without their Python.
  c.workload.cuda_graphs = true;
  c.workload.host_per_layer_ns = 50'000'000;
  c.workload.host_per_micro_batch_ns = 0;
  StepConfig graphs = c;
  graphs.workload.host_per_layer_ns = 0;
  EXPECT_DOUBLE_EQ(simulate_step(hgx_h100(1), h100(), c).step_time_s,
                   simulate_step(hgx_h100(1), h100(), graphs).step_time_s);
}

TEST(StepSimulator, HostWorkJitterCostsMoreOnMoreRanks) {
  // workload.host.per_step_jitter: each rank's host work between steps is
  // |N(0, 10 ms)|, and the step waits for the slowest host: on average
  // 10 ms x E[max of n |z|] = 10 ms x the integral of 1 - erf(x / sqrt 2)^n
  // over x > 0: 1.78 for 8 ranks, 2.60 for 64. One draw each: the bounds
  // leave room for its spread.
  const auto extra = [](int64_t world) {
    StepConfig c = config_for(small_spec(world, world));
    const double steady = simulate_step(hgx_h100(world / 8), h100(), c).step_time_s;
    c.workload.host_per_step_jitter_ns = 10'000'000;
    const StepResult r = simulate_step(hgx_h100(world / 8), h100(), c);
    EXPECT_GT(r.breakdown.sync_wait_s, 0);
    return (r.step_time_s - steady) / 10e-3;
  };
  const double e8 = extra(8), e64 = extra(64);
  EXPECT_GT(e8, 1.0);
  EXPECT_LT(e8, 3.2);
  EXPECT_GT(e64, 2.0);
  EXPECT_LT(e64, 3.8);
  EXPECT_GT(e64, e8);
}

TEST(StepSimulator, ComputeIsTheScheduleKernelsAndTheBreakdownAddsUp) {
  const Cluster cluster = hgx_h100(1);
  const WorkloadSpec w = small_spec(8, 8);
  const StepConfig c = config_for(w);
  const StepResult r = simulate_step(cluster, h100(), c);
  // Without SM sharing or launch costs every rank's compute is exactly its kernels.
  EXPECT_NEAR(r.breakdown.compute_s, static_cast<double>(schedule_kernel_ns(w, c.compute)) * 1e-9,
              1e-9);
  EXPECT_NEAR(breakdown_sum(r.breakdown), r.step_time_s, 1e-9);
  EXPECT_GT(r.step_time_s, r.breakdown.compute_s);  // the first all-gather at least is exposed
  EXPECT_GT(r.breakdown.exposed_all_gather_s, 0);
  EXPECT_EQ(r.ranks, 8);
  const double tokens = 2048.0;
  EXPECT_DOUBLE_EQ(r.tokens_per_s_per_gpu, tokens / r.step_time_s);
  EXPECT_DOUBLE_EQ(r.tflops_per_gpu,
                   model_flops_per_token(w.model, w.seq_len) * r.tokens_per_s_per_gpu * 1e-12);
  EXPECT_DOUBLE_EQ(r.mfu, r.tflops_per_gpu * 1e12 / c.compute.peak_flops);
}

TEST(StepSimulator, SameInputsGiveTheSameResultAndTrace) {
  const Cluster cluster = hgx_h100(2);
  StepConfig c = config_for(small_spec(16, 8), 1.1);
  c.trace_ranks = {0, 9};
  c.stragglers = {{5, 1.3}};
  const StepResult a = simulate_step(cluster, h100(), c);
  const StepResult b = simulate_step(cluster, h100(), c);
  EXPECT_EQ(a.step_time_s, b.step_time_s);
  EXPECT_EQ(a.events, b.events);
  EXPECT_EQ(a.breakdown.exposed_all_reduce_s, b.breakdown.exposed_all_reduce_s);
  ASSERT_EQ(a.trace.size(), b.trace.size());
  for (size_t i = 0; i < a.trace.size(); ++i) {
    EXPECT_EQ(a.trace[i].rank, b.trace[i].rank);
    EXPECT_EQ(a.trace[i].start, b.trace[i].start);
    EXPECT_EQ(a.trace[i].duration, b.trace[i].duration);
    EXPECT_EQ(a.trace[i].name, b.trace[i].name);
  }
  // Only the traced ranks, each with its compute stream and collectives.
  bool saw_replica_all_reduce = false;
  for (const TraceRecord& t : a.trace) {
    EXPECT_TRUE(t.rank == 0 || t.rank == 9);
    if (t.category == "all_reduce") {
      saw_replica_all_reduce = true;
      EXPECT_EQ(t.group_size, 2);
    }
  }
  EXPECT_TRUE(saw_replica_all_reduce);
}

TEST(StepSimulator, AStragglerSlowsTheSynchronousStep) {
  const Cluster cluster = hgx_h100(1);
  const StepConfig base = config_for(small_spec(8, 8));
  StepConfig slow = base;
  slow.stragglers = {{3, 1.2}};
  const StepResult a = simulate_step(cluster, h100(), base);
  const StepResult b = simulate_step(cluster, h100(), slow);
  // Compute-bound: the whole group waits for rank 3, nearly 1.2x.
  EXPECT_GT(b.step_time_s / a.step_time_s, 1.15);
  EXPECT_LE(b.step_time_s / a.step_time_s, 1.2 + 1e-9);
  EXPECT_EQ(b.slowest_rank, 3);
  EXPECT_GT(b.breakdown.sync_wait_s, 0.1 * (b.step_time_s - a.step_time_s));
}

TEST(StepSimulator, TurningPrefetchOffExposesTheBackwardAllGathers) {
  const Cluster cluster = hgx_h100(1);
  WorkloadSpec w = small_spec(8, 8);
  const StepResult pre = simulate_step(cluster, h100(), config_for(w));
  w.backward_prefetch = BackwardPrefetch::kNone;
  const StepResult none = simulate_step(cluster, h100(), config_for(w));
  // Each block's backward all-gather now waits in full (blocks 2..0; block 3
  // was prefetched by the head's backward in both): 3 more exposed, each the
  // tuner's time for the block on 8 GPUs.
  const FsdpSchedule s = build_fsdp_schedule(w);
  std::vector<int64_t> gpus = {0, 1, 2, 3, 4, 5, 6, 7};
  const collectives::TunedCollective ag =
      collectives::tune_collective(h100(), collectives::geometry_of(cluster, gpus),
                                   collectives::CollectiveOp::kAllGather, s.block_bytes);
  const double extra = none.breakdown.exposed_all_gather_s - pre.breakdown.exposed_all_gather_s;
  EXPECT_NEAR(extra, 3 * ag.cost.seconds(), 0.15 * 3 * ag.cost.seconds());
  EXPECT_GT(none.step_time_s, pre.step_time_s);
}

TEST(StepSimulator, FullCheckpointingAddsTheRecomputedForward) {
  const Cluster cluster = hgx_h100(1);
  WorkloadSpec w = small_spec(8, 8);
  const StepResult none = simulate_step(cluster, h100(), config_for(w));
  w.activation_checkpointing = ActivationCheckpointing::kFull;
  const StepConfig c = config_for(w);
  const StepResult full = simulate_step(cluster, h100(), c);
  KernelConfig kc;
  kc.seq_len = w.seq_len;
  kc.micro_batch = w.local_batch;
  kc.fusion = KernelFusion::kEager;
  int64_t again = 0;
  for (const Kernel& k : block_recompute(w.model, kc, Recompute::kFull)) {
    again += kernel_time(k, c.compute).count_ns();
  }
  int64_t forward = 0;
  for (const Kernel& k : block_forward(w.model, kc))
    forward += kernel_time(k, c.compute).count_ns();
  EXPECT_NEAR(full.breakdown.compute_s - none.breakdown.compute_s,
              static_cast<double>(w.model.layers * again) * 1e-9, 1e-9);
  // "About one forward": all of it but the down projection and its residual.
  EXPECT_GT(static_cast<double>(again), 0.7 * static_cast<double>(forward));
  EXPECT_LT(again, forward);
}

TEST(StepSimulator, CpuOffloadAddsPcieTime) {
  const Cluster cluster = hgx_h100(1);
  WorkloadSpec w = small_spec(8, 8);
  const StepResult gpu = simulate_step(cluster, h100(), config_for(w));
  w.cpu_offload = true;
  StepConfig c = config_for(w);
  c.host.pcie_Bps = 50e9;
  c.host.cpu_adam_params_per_s = 1e9;
  const StepResult off = simulate_step(cluster, h100(), c);
  EXPECT_GT(off.breakdown.exposed_pcie_s, 0);
  // At least the CPU optimizer over the local shard, which nothing overlaps.
  const FsdpSchedule s = build_fsdp_schedule(w);
  EXPECT_GT(off.step_time_s - gpu.step_time_s, static_cast<double>(s.local_params) / 1e9 * 0.9);
}

TEST(StepSimulator, ForeachAdamwGrowsTheOptimizerByItsBytes) {
  // The optimizer reads fp32 gradient shards (g = 4) and writes no copy
  // (p = 0): fused moves 24 + g + p = 28 bytes per parameter, foreach
  // 72 + 2g + p = 80. Both are memory-bound, so each runs at the profile's
  // HBM bandwidth x mem_efficiency (the optimizer class's, where the profile
  // gives one) and foreach takes 80 / 28 of fused's time.
  const Cluster cluster = hgx_h100(1);
  StepConfig c = config_for(small_spec(8, 8));
  c.trace_ranks = {0};
  const StepResult fused = simulate_step(cluster, h100(), c);
  c.workload.optimizer_implementation = OptimizerImplementation::kForeach;
  const StepResult foreach = simulate_step(cluster, h100(), c);

  const auto n = static_cast<double>(build_fsdp_schedule(c.workload).local_params);
  const double bandwidth_Bps =
      h100().gpu.hbm_Bps *
      memory_efficiency(KernelClass::kOptimizer, compute_spec_from_profile(h100()));
  const double peak = c.compute.peak_flops * c.compute.sustained_clock;
  ASSERT_LT(14 * n / peak, 28 * n / bandwidth_Bps);  // memory-bound
  const auto optimizer_ns = [](const StepResult& r, std::string_view name) {
    int64_t ns = -1;
    for (const TraceRecord& t : r.trace) {
      if (t.phase == Phase::kOptimizer && t.name == name) ns = t.duration.count_ns();
    }
    return ns;
  };
  const int64_t fused_ns = optimizer_ns(fused, "adamw");
  const int64_t foreach_ns = optimizer_ns(foreach, "adamw.foreach");
  EXPECT_EQ(fused_ns, sim::SimTime::from_seconds_rounded(28 * n / bandwidth_Bps).count_ns());
  EXPECT_EQ(foreach_ns, sim::SimTime::from_seconds_rounded(80 * n / bandwidth_Bps).count_ns());
  // The ratio up to the two times' rounding to the nanosecond (half a ns each).
  EXPECT_NEAR(static_cast<double>(foreach_ns) / static_cast<double>(fused_ns), 80.0 / 28.0,
              0.5 * (1 + 80.0 / 28.0) / static_cast<double>(fused_ns));
  // The optimizer ends the step and nothing overlaps it: the step grows by the difference.
  EXPECT_NEAR(foreach.step_time_s - fused.step_time_s,
              static_cast<double>(foreach_ns - fused_ns) * 1e-9, 1e-9);
}

TEST(StepSimulator, LaunchCostsBindWhenKernelsAreShortAndCudaGraphsHelp) {
  const Cluster cluster = hgx_h100(1);
  WorkloadSpec w = small_spec(8, 8);
  w.seq_len = 64;  // kernels of a few microseconds
  StepConfig c = config_for(w);
  c.host.kernel_launch = sim::SimTime::us(20);
  c.host.graph_launch = sim::SimTime::us(20);
  const StepResult eager = simulate_step(cluster, h100(), c);
  const FsdpSchedule s = build_fsdp_schedule(w);
  const int64_t launches = s.count(TaskKind::kKernel) + s.count(TaskKind::kOptimizer) +
                           s.count(TaskKind::kAllGather) + s.count(TaskKind::kReduceScatter);
  // The host issues one launch after another: the step is at least that long.
  EXPECT_GE(eager.step_time_s, static_cast<double>(launches) * 20e-6);
  EXPECT_GT(eager.breakdown.launch_bound_s, 0.5 * eager.step_time_s);
  c.workload.cuda_graphs = true;
  const StepResult graphs = simulate_step(cluster, h100(), c);
  EXPECT_LT(graphs.step_time_s, 0.5 * eager.step_time_s);
}

TEST(StepSimulator, TensorParallelCollectivesAreExposed) {
  const Cluster cluster = hgx_h100(1);
  WorkloadSpec w = small_spec(8, 4);
  w.tp = 2;
  w.dp_size = 4;
  w.shard_group_size = 4;
  w.replica_group_size = 1;
  w.strategy = ShardingStrategy::kFullShard;
  const StepResult r = simulate_step(cluster, h100(), config_for(w));
  EXPECT_GT(r.breakdown.exposed_tp_s, 0);
  EXPECT_NEAR(breakdown_sum(r.breakdown), r.step_time_s, 1e-9);
  // Tokens per GPU count the TP group once.
  EXPECT_DOUBLE_EQ(r.tokens_per_s_per_gpu, 2048.0 / 2 / r.step_time_s);
}

TEST(StepSimulator, TorchCompileIsFasterThanEager) {
  const Cluster cluster = hgx_h100(1);
  WorkloadSpec w = small_spec(8, 8);
  const StepResult eager = simulate_step(cluster, h100(), config_for(w));
  w.torch_compile = true;
  const StepResult compiled = simulate_step(cluster, h100(), config_for(w));
  EXPECT_LT(compiled.step_time_s, eager.step_time_s);
  EXPECT_LT(compiled.breakdown.compute_s, eager.breakdown.compute_s);
}

TEST(StepSimulator, SharingTheSmsSlowsOverlappedCompute) {
  const Cluster cluster = hgx_h100(1);
  const WorkloadSpec w = small_spec(8, 8);
  const StepResult plain = simulate_step(cluster, h100(), config_for(w, 1.0));
  const StepResult shared = simulate_step(cluster, h100(), config_for(w, 1.5));
  EXPECT_GT(shared.breakdown.compute_s, plain.breakdown.compute_s);
  EXPECT_NEAR(breakdown_sum(shared.breakdown), shared.step_time_s, 1e-9);
}

}  // namespace
}  // namespace clustersim::workloads

namespace clustersim::workloads {
namespace {

// Replica all-reduces across 8 nodes: with one hashed path per hop (ECMP)
// rings may collide on an uplink; bundled (adaptive) uplinks never slow a
// non-blocking fabric below the NICs, so ECMP can only be slower.
TEST(StepSimulator, EcmpCollisionsCanOnlySlowTheStep) {
  const Cluster cluster = hgx_h100(8);
  WorkloadSpec w = small_spec(64, 8);
  w.seq_len = 256;  // short compute: the all-reduces show
  StepConfig c = config_for(w);
  c.routing = collectives::Routing::kAdaptive;
  const StepResult adaptive = simulate_step(cluster, h100(), c);
  c.routing = collectives::Routing::kEcmp;
  const StepResult ecmp = simulate_step(cluster, h100(), c);
  EXPECT_GE(ecmp.step_time_s, adaptive.step_time_s);
  EXPECT_GT(adaptive.breakdown.exposed_all_reduce_s, 0);
  EXPECT_NEAR(breakdown_sum(ecmp.breakdown), ecmp.step_time_s, 1e-9);
}

}  // namespace
}  // namespace clustersim::workloads

namespace clustersim::workloads {
namespace {

// no_sync(): with two micro-batches only the last reduces, so the step runs
// one reduce-scatter per unit instead of two, and holds the unsharded
// gradients of the whole model meanwhile.
TEST(StepSimulator, NoSyncReducesOncePerStepAndHoldsUnshardedGradients) {
  const Cluster cluster = hgx_h100(1);
  WorkloadSpec w = small_spec(8, 8);
  w.grad_accum = 2;
  const StepResult every = simulate_step(cluster, h100(), config_for(w));
  StepConfig c = config_for(w);
  c.schedule_options.no_sync = true;
  c.workload.no_sync = true;
  const StepResult last = simulate_step(cluster, h100(), c);
  const int64_t units = w.model.layers + 1;
  EXPECT_EQ(every.collectives - last.collectives, units);  // per group: one group of 8
  EXPECT_EQ(
      last.memory.grads - every.memory.grads,
      2 * (w.model.layers * ((parameter_breakdown(w.model).block + w.tp - 1) / w.tp)) +
          2 * (parameter_breakdown(w.model).embedding + parameter_breakdown(w.model).output_head +
               parameter_breakdown(w.model).final_norm));
}

// FSDP1's separate post-backward stream lets a reduce-scatter run beside the
// next all-gather; FSDP2's single communicator serialises them.
TEST(StepSimulator, SeparateReduceStreamNeverSlowsTheStep) {
  const Cluster cluster = hgx_h100(2);
  WorkloadSpec w = small_spec(16, 16);
  w.seq_len = 512;  // communication matters
  StepConfig c = config_for(w);
  const StepResult one = simulate_step(cluster, h100(), c);
  c.schedule_options.separate_reduce_stream = true;
  const StepResult two = simulate_step(cluster, h100(), c);
  EXPECT_LE(two.step_time_s, one.step_time_s);
  EXPECT_NEAR(breakdown_sum(two.breakdown), two.step_time_s, 1e-9);
}

// The progress callback (EngineOptions::progress, every 2^20 events) says
// the operations done of every rank's: a fraction that grows, never reaches
// 1 before the end, and tracks the events' fraction, which is what makes
// the commands' percentage honest. Nor does watching change the step.
TEST(StepSimulator, ProgressTellsTheOperationsDoneOfTheStep) {
  WorkloadSpec w = small_spec(2048, 64);
  w.grad_accum = 64;  // 2.3 M events: two reports
  StepConfig c = config_for(w);
  c.explicit_ranks = true;  // one timeline per rank (identical ranks would be one)
  const Cluster cluster = hgx_h100(256);
  std::vector<EngineProgress> seen;
  c.progress = [&seen](const EngineProgress& p) { seen.push_back(p); };
  const StepResult watched = simulate_step(cluster, h100(), c);
  c.progress = nullptr;
  const StepResult alone = simulate_step(cluster, h100(), c);
  EXPECT_EQ(watched.step_time_s, alone.step_time_s);
  EXPECT_EQ(watched.events, alone.events);

  ASSERT_GE(seen.size(), 2U) << watched.events << " events";
  for (size_t i = 0; i < seen.size(); ++i) {
    const EngineProgress& p = seen[i];
    // Every 2^20 events handled, stale looks (not events) among them.
    EXPECT_LE(p.events, (i + 1) << 20);
    EXPECT_GT(p.events, i == 0 ? 0 : seen[i - 1].events);
    EXPECT_EQ(p.ops_total, seen.front().ops_total);
    EXPECT_GT(p.ops_done, i == 0 ? 0 : seen[i - 1].ops_done);
    EXPECT_LT(p.ops_done, p.ops_total);
    const double ops = static_cast<double>(p.ops_done) / static_cast<double>(p.ops_total);
    const double events = static_cast<double>(p.events) / static_cast<double>(watched.events);
    EXPECT_NEAR(ops, events, 0.05) << "report " << i;
  }
  // Every rank's program holds at least its schedule's collectives and segments.
  EXPECT_GT(seen.front().ops_total, 2048 * 64);
}

TEST(StepSimulator, TheTimelinesExpectedBeforeTheStepAreThoseItRuns) {
  // step_timelines decides from the settings alone what plan_timelines
  // decides from the programs and speeds: each case against the step's own
  // count. 16 GPUs (2 nodes): TP 2 x FSDP 8, or 2 stages of TP 2 x FSDP 4.
  struct Case {
    const char* name;
    int64_t tp;
    int64_t pp;
    double spread;
    bool straggler, traced, explicit_ranks, jitter, async_tp;
    int64_t timelines;
  };
  const Case cases[] = {
      {"identical GPUs: one timeline", 2, 1, 0, false, false, false, false, false, 1},
      {"identical GPUs, 2 stages: one each", 2, 2, 0, false, false, false, false, false, 2},
      {"speed spread: one per TP group", 2, 1, 0.02, false, false, false, false, false, 8},
      {"a straggler: one per TP group", 2, 1, 0, true, false, false, false, false, 8},
      {"spread, traced: one per rank", 2, 1, 0.02, false, true, false, false, false, 16},
      {"identical, traced: one", 2, 1, 0, false, true, false, false, false, 1},
      {"spread, async TP: one per rank", 2, 1, 0.02, false, false, false, false, true, 16},
      {"spread, TP 1: one per rank", 1, 1, 0.02, false, false, false, false, false, 16},
      {"--explicit", 2, 1, 0, false, false, true, false, false, 16},
      {"segment jitter", 2, 1, 0, false, false, false, true, false, 16},
  };
  const Cluster cluster = hgx_h100(2);
  for (const Case& k : cases) {
    SCOPED_TRACE(k.name);
    WorkloadSpec w = test_support::tp_spec(16, k.tp, k.async_tp);
    if (k.pp > 1) {
      w.pp = k.pp;
      w.grad_accum = 4;
      w.dp_size = 16 / (k.tp * k.pp);
      w.shard_group_size = w.dp_size;
    }
    StepConfig c = config_for(w);
    c.compute.speed_variation = k.spread;
    if (k.straggler) c.stragglers.push_back(Straggler{5, 1.5});
    if (k.traced) c.trace_ranks = {0};
    c.explicit_ranks = k.explicit_ranks;
    if (k.jitter) c.compute.segment_jitter = 0.01;
    EXPECT_EQ(step_timelines(c), k.timelines);
    const StepResult r = simulate_step(cluster, h100(), c);
    EXPECT_EQ(16 / r.ranks_per_timeline, k.timelines);
  }
}

TEST(StepSimulator, AStepOverTheWorkLimitOfItsTimelinesIsRefused) {
  // The limit counts the timelines the engine runs: one with identical GPUs,
  // 8 with the spread (TP groups). A limit of 4 timelines' tasks runs the
  // first and refuses the second before it starts.
  const WorkloadSpec w = test_support::tp_spec(16, 2, false);
  StepConfig c = config_for(w);
  const int64_t tasks = estimate_step_work(c).tasks_per_rank;
  c.max_task_timelines = 4 * tasks;
  EXPECT_EQ(estimate_step_work(c).task_timelines(), tasks);
  EXPECT_NO_THROW(simulate_step(hgx_h100(2), h100(), c));
  c.compute.speed_variation = 0.02;
  EXPECT_EQ(estimate_step_work(c).task_timelines(), 8 * tasks);
  EXPECT_THROW(simulate_step(hgx_h100(2), h100(), c), WorkOverLimit);
}

}  // namespace
}  // namespace clustersim::workloads
