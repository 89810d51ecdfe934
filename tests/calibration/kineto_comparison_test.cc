#include "calibration/kineto_comparison.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "hardware/hardware_profile.h"
#include "sim/check.h"
#include "topology/cluster_config.h"
#include "workloads/model/compute_model.h"
#include "workloads/model/transformer_kernels.h"
#include "workloads/schedules/fsdp_schedule.h"

namespace clustersim::calibration {
namespace {

using sim::SimTime;
using workloads::StepResult;
using workloads::TraceRecord;

const std::string kFixtures = std::string(CLUSTERSIM_SOURCE_DIR) + "/tests/calibration/fixtures/";

TraceRecord record(int64_t rank, std::string_view track, std::string_view category,
                   int64_t start_ns, int64_t duration_ns, int64_t wait_ns = 0) {
  TraceRecord r;
  r.rank = rank;
  r.track = track;
  r.name = category;
  r.category = category;
  r.start = SimTime::ns(start_ns);
  r.duration = SimTime::ns(duration_ns);
  r.wait = SimTime::ns(wait_ns);
  return r;
}

void expect_totals(const StepSummary& s, KernelClass c, double count, double duration_us) {
  EXPECT_DOUBLE_EQ(s.totals(c).count, count) << kernel_class_name(c);
  EXPECT_NEAR(s.totals(c).duration_us, duration_us, 1e-9) << kernel_class_name(c);
}

TEST(KinetoComparison, SimulatedClassesFollowTrackAndCategory) {
  using K = KernelClass;
  const auto class_of = [](std::string_view track, std::string_view category) {
    return simulated_kernel_class(record(0, track, category, 0, 1));
  };
  EXPECT_EQ(class_of("compute", "gemm"), K::kGemm);
  EXPECT_EQ(class_of("compute", "attention"), K::kFlashAttention);
  EXPECT_EQ(class_of("compute", "optimizer"), K::kOptimizer);
  for (std::string_view c : {"elementwise", "norm", "embedding", "loss"}) {
    EXPECT_EQ(class_of("compute", c), K::kElementwise) << c;
  }
  EXPECT_EQ(class_of("comm", "all_gather"), K::kNcclAllGather);
  EXPECT_EQ(class_of("reduce", "reduce_scatter"), K::kNcclReduceScatter);
  EXPECT_EQ(class_of("comm", "all_reduce"), K::kNcclAllReduce);
  EXPECT_EQ(class_of("tp", "all_gather"), K::kNcclAllGather);
  EXPECT_EQ(class_of("comm", "broadcast"), K::kNcclOther);
  EXPECT_EQ(class_of("pcie", "pcie"), K::kMemory);
  EXPECT_EQ(class_of("host", "host"), std::nullopt);
  EXPECT_EQ(class_of("cpu", "cpu"), std::nullopt);
}

// A hand-made simulated step of two traced ranks (times in ns):
//  rank 0: host launches (skipped); compute gemm [0, 1000), attention
//  [1000, 1500), norm [2000, 2250), loss [2250, 2300), optimizer [5000,
//  5400); comm all-gather arrives at 100, starts 300 and runs 700 (counts
//  900); reduce all-reduce [2500, 3000), no wait; pcie copy 40; cpu 999
//  (skipped).
//  rank 1: one gemm of 7000 (not rank 0's).
StepResult hand_made_step() {
  StepResult r;
  r.step_time_s = 6e-6;
  r.trace = {
      record(0, "host", "host", 0, 30),
      record(0, "compute", "gemm", 0, 1000),
      record(0, "comm", "all_gather", 300, 700, 200),
      record(0, "compute", "attention", 1000, 500),
      record(0, "compute", "norm", 2000, 250),
      record(0, "compute", "loss", 2250, 50),
      record(0, "reduce", "all_reduce", 2500, 500),
      record(0, "pcie", "pcie", 3000, 40),
      record(0, "cpu", "cpu", 3000, 999),
      record(0, "compute", "optimizer", 5000, 400),
      record(1, "compute", "gemm", 0, 7000),
  };
  return r;
}

TEST(KinetoComparison, SimulatedSummaryOfAHandMadeStep) {
  const StepSummary s = simulated_step_summary(hand_made_step(), 0);
  EXPECT_DOUBLE_EQ(s.step_us, 6);
  expect_totals(s, KernelClass::kGemm, 1, 1.0);
  expect_totals(s, KernelClass::kFlashAttention, 1, 0.5);
  expect_totals(s, KernelClass::kElementwise, 2, 0.3);
  expect_totals(s, KernelClass::kOptimizer, 1, 0.4);
  expect_totals(s, KernelClass::kNcclAllGather, 1, 0.9);  // wait 200 + 700
  expect_totals(s, KernelClass::kNcclAllReduce, 1, 0.5);
  expect_totals(s, KernelClass::kMemory, 1, 0.04);
  expect_totals(s, KernelClass::kNcclReduceScatter, 0, 0);
  expect_totals(s, KernelClass::kOther, 0, 0);
  // [0, 1500) + [2000, 2300) + [5000, 5400)
  EXPECT_NEAR(s.compute_busy_us, 1.5 + 0.3 + 0.4, 1e-12);

  const StepSummary other = simulated_step_summary(hand_made_step(), 1);
  expect_totals(other, KernelClass::kGemm, 1, 7.0);
  EXPECT_DOUBLE_EQ(other.compute_busy_us, 7.0);
}

TEST(KinetoComparison, AnUntracedRankIsABrokenInvariant) {
  EXPECT_THROW(simulated_step_summary(hand_made_step(), 2), sim::InvariantError);
}

topology::Cluster one_hgx_node() {
  topology::ClusterSpec spec;
  spec.nodes = 1;
  EXPECT_TRUE(topology::node_preset("hgx_h100", spec.node));
  spec.fabric.type = topology::FabricType::kRailOptimized;
  spec.fabric.switch_radix = 64;
  return topology::build_cluster(spec);
}

// Two compiled Llama blocks, FSDP over 8 GPUs, without launch costs or SM
// sharing, so every kernel lasts exactly its kernel_time().
workloads::StepConfig two_block_config(const collectives::HardwareProfile& profile) {
  workloads::WorkloadSpec w;
  w.model.name = "custom";
  w.model.layers = 2;
  w.model.hidden = 1024;
  w.model.heads = 8;
  w.model.kv_heads = 4;
  w.model.ffn_hidden = 2816;
  w.model.vocab = 16000;
  w.seq_len = 1024;
  w.local_batch = 1;
  w.world_size = 8;
  w.dp_size = 8;
  w.shard_group_size = 8;
  w.replica_group_size = 1;
  w.strategy = workloads::ShardingStrategy::kFullShard;
  w.torch_compile = true;
  w.grad_clip = false;  // the counts below are those of the fixture trace's step
  workloads::StepConfig c;
  c.workload = w;
  c.compute = workloads::compute_spec_from_profile(profile);
  c.compute.comm_overlap_slowdown = 1.0;
  c.compute.speed_variation = 0;  // rank 0 at the median GPU's speed: kernel times as computed
  c.host.kernel_launch = SimTime::zero();
  c.host.graph_launch = SimTime::zero();
  c.trace_ranks = {0};
  return c;
}

KernelClass calibration_class(const workloads::Kernel& k) {
  if (k.name.starts_with("fsdp.")) return KernelClass::kFsdpCopy;
  switch (k.cls) {
    case workloads::KernelClass::kGemm:
      return KernelClass::kGemm;
    case workloads::KernelClass::kAttention:
      return KernelClass::kFlashAttention;
    case workloads::KernelClass::kOptimizer:
      return KernelClass::kOptimizer;
    default:
      return KernelClass::kElementwise;
  }
}

// Kernels per step by hand, for L = 2 compiled blocks (transformer_kernels.h):
//  gemm: per block forward qkv, out, gate_up, down (4) and backward each as
//    dgrad + wgrad (8); the head's lm_head forward 1, backward 2: 12 L + 3 = 27.
//  attention: forward and backward per block: 2 L = 4.
//  elementwise (elementwise, norm, embedding, loss): per block forward
//    attn_norm, rotary, attn_residual, mlp_norm, swiglu, mlp_residual (6) and
//    their 6 backwards; the head stays eager under torch.compile: final_norm
//    8 kernels forward and 16 backward, cross_entropy 3 forward and 4
//    backward; the embedding forward and backward: 12 L + 33 = 57.
//  fsdp_copy: FSDP2's copies, one copy-out per all-gather (5) and one
//    copy-in per reduce-scatter (3): 8.
//  optimizer: 1 (AdamW over the shard).
//  collectives: one all-gather per unit forward (root + L blocks) and one per
//    block re-gathered for backward (reshard_after_forward): 2 L + 1 = 5;
//    one reduce-scatter per unit: L + 1 = 3.
TEST(KinetoComparison, SimulatedCountsAreTheScheduleKernels) {
  const collectives::HardwareProfile profile = collectives::load_hardware_profile(
      std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/hardware/h100.yaml");
  const topology::Cluster cluster = one_hgx_node();
  const workloads::StepConfig config = two_block_config(profile);
  const StepResult result = workloads::simulate_step(cluster, profile, config);
  const StepSummary s = simulated_step_summary(result, 0);

  EXPECT_DOUBLE_EQ(s.totals(KernelClass::kGemm).count, 27);
  EXPECT_DOUBLE_EQ(s.totals(KernelClass::kFlashAttention).count, 4);
  EXPECT_DOUBLE_EQ(s.totals(KernelClass::kElementwise).count, 57);
  EXPECT_DOUBLE_EQ(s.totals(KernelClass::kFsdpCopy).count, 8);
  EXPECT_DOUBLE_EQ(s.totals(KernelClass::kOptimizer).count, 1);
  EXPECT_DOUBLE_EQ(s.totals(KernelClass::kNcclAllGather).count, 5);
  EXPECT_DOUBLE_EQ(s.totals(KernelClass::kNcclReduceScatter).count, 3);
  EXPECT_DOUBLE_EQ(s.totals(KernelClass::kNcclAllReduce).count, 0);
  EXPECT_DOUBLE_EQ(s.totals(KernelClass::kMemory).count, 0);
  EXPECT_DOUBLE_EQ(s.step_us, result.step_time_s * 1e6);

  // Durations: each kernel class sums the schedule's kernel times (each
  // trace record is rounded to the ns, hence the tolerance).
  const workloads::FsdpSchedule schedule = workloads::build_fsdp_schedule(config.workload);
  std::map<KernelClass, double> expected_us;
  double kernels_us = 0;
  for (const workloads::Task& t : schedule.tasks) {
    if (t.kind != workloads::TaskKind::kKernel && t.kind != workloads::TaskKind::kOptimizer) {
      continue;
    }
    const workloads::Kernel& k = schedule.kernels[static_cast<size_t>(t.kernel)];
    const double us = static_cast<double>(kernel_time(k, config.compute).count_ns()) / 1e3;
    const KernelClass c = calibration_class(k);
    expected_us[c] += us;
    kernels_us += us;
  }
  for (const auto& [c, us] : expected_us) {
    EXPECT_NEAR(s.totals(c).duration_us, us, 0.2) << kernel_class_name(c);
  }
  // One stream: the compute busy time is the kernels' sum.
  EXPECT_NEAR(s.compute_busy_us, kernels_us, 0.2);

  // Collectives by hand from the trace records: arrival to end.
  double all_gather_us = 0;
  for (const TraceRecord& r : result.trace) {
    if (r.category == "all_gather") {
      all_gather_us += static_cast<double>((r.wait + r.duration).count_ns()) / 1e3;
    }
  }
  EXPECT_GT(all_gather_us, 0);
  EXPECT_NEAR(s.totals(KernelClass::kNcclAllGather).duration_us, all_gather_us, 1e-9);
}

// kineto_small_trace.json, by hand (README.md beside it): per step the
// kernels and durations of make_kineto_small_trace.py's STEP table (its
// "other" kernels -- embedding, loss, Inductor's Triton kernels, chunk_cat --
// are classified elementwise, as the simulator models them); steps 2
// and 3 (step 1 is skipped as warm-up) differ in six kernels (step 3:
// ag_root +12, gate_up_proj +4, lm_head +6, flash_bwd +5, rs_root +14,
// fn_mean +1 us).
//   class                count   step 2   step 3   mean
//   gemm                    15     5425     5435   5430
//   flash_attention          4      609      614    611.5
//   elementwise             51     2513     2514   2513.5
//   nccl_all_gather          2      959      971    965
//   nccl_reduce_scatter      2      938      952    945
//   optimizer                1      221      221    221
//   memory                   1        2        2      2
//   step (marker)              10564    10606  10585
//   GPU window                 10538    10580  10559
// Compute busy: the compute stream runs back to back (the host is ahead)
// except where it waits for a collective, so it is the sum of the compute
// stream's kernels (every class but NCCL and memory, less the two FSDP
// chunk_cat copies of 10 and 26 us on their own stream) plus the part of the
// chunk_cats that overlaps no compute kernel: the 10 us one runs beside the
// embedding backward, the 26 us one while the optimizer waits for the
// reduce-scatter. Step 2: 5425 + 609 + 2513 + 221 - 36 + 26 = 8758;
// step 3: 8774; mean 8766.
TEST(KinetoComparison, MeasuredMeansOfTheFixtureSkipTheWarmUpStep) {
  const KinetoTrace trace = read_kineto_trace(kFixtures + "kineto_small_trace.json");
  ASSERT_EQ(trace.steps.size(), 3u);
  EXPECT_EQ(trace.unattributed_events, 0);
  const MeasuredSteps m = measured_step_summary(trace);
  EXPECT_EQ(m.skipped_steps, 1);
  EXPECT_EQ(m.step_numbers, (std::vector<int64_t>{2, 3}));
  expect_totals(m.mean, KernelClass::kGemm, 15, 5430);
  expect_totals(m.mean, KernelClass::kFlashAttention, 4, 611.5);
  expect_totals(m.mean, KernelClass::kElementwise, 51, 2513.5);
  expect_totals(m.mean, KernelClass::kOther, 0, 0);
  expect_totals(m.mean, KernelClass::kNcclAllGather, 2, 965);
  expect_totals(m.mean, KernelClass::kNcclReduceScatter, 2, 945);
  expect_totals(m.mean, KernelClass::kOptimizer, 1, 221);
  expect_totals(m.mean, KernelClass::kMemory, 1, 2);
  expect_totals(m.mean, KernelClass::kNcclAllReduce, 0, 0);
  expect_totals(m.mean, KernelClass::kNcclOther, 0, 0);
  EXPECT_NEAR(m.mean.step_us, 10585, 1e-9);
  EXPECT_NEAR(m.gpu_window_us, 10559, 1e-9);
  EXPECT_NEAR(m.mean.compute_busy_us, 8766, 1e-9);

  // All three steps: step 1's gemms sum 5480 (qkv_proj +27, lm_head +28).
  const MeasuredSteps all = measured_step_summary(trace, 0);
  EXPECT_EQ(all.skipped_steps, 0);
  EXPECT_EQ(all.step_numbers, (std::vector<int64_t>{1, 2, 3}));
  expect_totals(all.mean, KernelClass::kGemm, 15, (5480.0 + 5425 + 5435) / 3);
}

TEST(KinetoComparison, AOneStepTraceIsAveragedWhole) {
  const KinetoTrace trace = parse_kineto_trace(
      R"({"traceEvents": [
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#4", "ts": 0, "dur": 100},
  {"ph": "X", "cat": "kernel", "name": "nvjet_tst_128x256", "ts": 10, "dur": 30},
  {"ph": "X", "cat": "kernel", "name": "nvjet_tst_128x256", "ts": 50, "dur": 15}
]})",
      "one.json");
  const MeasuredSteps m = measured_step_summary(trace);
  EXPECT_EQ(m.skipped_steps, 0);
  EXPECT_EQ(m.step_numbers, (std::vector<int64_t>{4}));
  expect_totals(m.mean, KernelClass::kGemm, 2, 45);
  EXPECT_DOUBLE_EQ(m.mean.step_us, 100);
  EXPECT_DOUBLE_EQ(m.gpu_window_us, 55);
}

TEST(KinetoComparison, TooManyWarmUpStepsIsAnErrorAtTheLastMarker) {
  const KinetoTrace trace = read_kineto_trace(kFixtures + "kineto_small_trace.json");
  try {
    measured_step_summary(trace, 3);
    FAIL() << "expected a ConfigError";
  } catch (const sim::ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              kFixtures +
                  "kineto_small_trace.json:178:3: error: traceEvents: expected more than the 3 "
                  "warm-up step(s) to skip, found 3 ProfilerStep#N step(s): none left to "
                  "compare");
  }
}

// Two measured steps, the first skipped as warm-up. Step 2 (us): gemm 2,
// all-gather 1.2, flash 0.4, an extension kernel the classifier puts in "other"
// 0.1, a memcpy 0.05; marker 8. Against hand_made_step()'s rank 0.
TEST(KinetoComparison, RowsErrorsAndClassesOnOneSideOnly) {
  const KinetoTrace trace = parse_kineto_trace(
      R"({"traceEvents": [
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "ts": 0, "dur": 10},
  {"ph": "X", "cat": "kernel", "name": "nvjet_warm_up", "ts": 1, "dur": 9},
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", "ts": 10, "dur": 8},
  {"ph": "X", "cat": "kernel", "name": "nvjet_tst", "ts": 10, "dur": 2},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllGather_RING_LL", "ts": 10, "dur": 1.2},
  {"ph": "X", "cat": "kernel", "name": "flash_fwd_kernel", "ts": 12, "dur": 0.4},
  {"ph": "X", "cat": "kernel", "name": "my_extension_kernel_0", "ts": 12.5, "dur": 0.1},
  {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoH", "ts": 13.25, "dur": 0.05}
]})",
      "t.json");
  const KinetoComparison c = compare_kineto_step(trace, hand_made_step(), 0);
  EXPECT_EQ(c.rank, 0);
  ASSERT_EQ(c.rows.size(), 10u);
  const auto expect_row = [&](size_t i, std::string_view name, double measured_us,
                              double simulated_us, std::optional<double> error, bool counted) {
    const KinetoComparisonRow& row = c.rows[i];
    EXPECT_EQ(row.name, name);
    EXPECT_NEAR(row.measured_us, measured_us, 1e-12) << name;
    EXPECT_NEAR(row.simulated_us, simulated_us, 1e-12) << name;
    ASSERT_EQ(row.relative_error.has_value(), error.has_value()) << name;
    if (error) {
      EXPECT_NEAR(*row.relative_error, *error, 1e-12) << name;
    }
    EXPECT_EQ(row.counted, counted) << name;
  };
  // In KernelClass order; classes on neither side (reduce-scatter, nccl
  // other) have no row.
  expect_row(0, "gemm", 2, 1, (1 - 2.0) / 2, true);
  expect_row(1, "flash_attention", 0.4, 0.5, (0.5 - 0.4) / 0.4, true);
  expect_row(2, "nccl_all_gather", 1.2, 0.9, (0.9 - 1.2) / 1.2, true);
  expect_row(3, "nccl_all_reduce", 0, 0.5, std::nullopt, false);  // simulated only
  expect_row(4, "optimizer", 0, 0.4, std::nullopt, false);
  expect_row(5, "elementwise", 0, 0.3, std::nullopt, false);
  expect_row(6, "memory", 0.05, 0.04, (0.04 - 0.05) / 0.05, true);
  expect_row(7, "other", 0.1, 0, -1.0, true);  // measured only: -100%
  expect_row(8, "step", 8, 6, (6 - 8.0) / 8, true);
  EXPECT_TRUE(c.rows[0].has_counts);
  EXPECT_DOUBLE_EQ(c.rows[0].measured_count, 1);
  EXPECT_DOUBLE_EQ(c.rows[0].simulated_count, 1);
  EXPECT_DOUBLE_EQ(c.rows[5].simulated_count, 2);
  EXPECT_FALSE(c.rows[8].has_counts);
  // Compute busy: measured [10, 12) + [12, 12.4) + [12.5, 12.6) = 2.5,
  // simulated 2.2 (above); shown, not counted.
  expect_row(9, "compute_busy", 2.5, 2.2, (2.2 - 2.5) / 2.5, false);

  const std::vector<double> errors = c.counted_errors();
  ASSERT_EQ(errors.size(), 6u);
  EXPECT_NEAR(errors[0], -0.5, 1e-12);
  EXPECT_NEAR(errors[4], -1.0, 1e-12);
  EXPECT_NEAR(errors[5], -0.25, 1e-12);
}

}  // namespace
}  // namespace clustersim::calibration
