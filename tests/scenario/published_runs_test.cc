// The step model against the published runs of the training set
// (scenarios/measurements/training/published_runs.csv; docs/accuracy.md).
// What is fitted is tested as fitted: each stack's efficiency must be what
// `calibrate --stack` finds on its runs today, and those runs' median error
// must stay zero; the parts' clocks are measured, not fitted. What is a
// prediction is tested as one: the loss of torchtitan's Llama-3-8B from 8 to
// 128 H100 comes from the GPU speed spread and the fp32 reduce-scatters over
// the network, not from the efficiency (which scales both).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "hardware/hardware_profile.h"
#include "scenario/network_scenario.h"
#include "scenario/stack_fit.h"
#include "scenario/training_runs.h"
#include "workloads/model/model_spec.h"

namespace clustersim::cli {
namespace {

const std::string kRuns =
    CLUSTERSIM_SOURCE_DIR "/scenarios/measurements/training/published_runs.csv";
const std::string kStacks = CLUSTERSIM_SOURCE_DIR "/scenarios/stacks/";

std::map<std::string, TrainingRun> runs_by_id(const std::string& file = kRuns) {
  std::map<std::string, TrainingRun> out;
  for (TrainingRun& run : read_training_runs(file)) out[run.id] = std::move(run);
  return out;
}

// The rows of Float8, context and pipeline parallelism: training rows on
// which those mechanisms were developed, predicted (no clock is fitted to
// them), not runs kept aside.
std::map<std::string, TrainingRun> runs_4d_by_id() {
  return runs_by_id(CLUSTERSIM_SOURCE_DIR "/scenarios/measurements/training/published_runs_4d.csv");
}

double predicted(const TrainingRun& run) { return predict_run(run).tokens_per_s_per_gpu; }

// A stack's shipped efficiency and the runs it names, as a scenario of it
// sees them.
struct Shipped {
  double efficiency;
  std::string fitted_to;
};
Shipped shipped(const TrainingRun& run) {
  const NetworkScenario net = load_run_scenario(run);
  return {net.values.get_float("workload.stack_efficiency"),
          net.values.get_string("workload.stack_efficiency_fitted_to")};
}

// Fitted, and must stay fitted: a change anywhere in the model that moves
// these runs must come with a refit of the stack (the command is in the
// stack file's comment), or this fails. torchtitan's eight rows and
// fms-fsdp's four (fitted into fsdp1.yaml, which fms_fsdp extends).
TEST(PublishedRuns, FittedStackEfficienciesAreWhatCalibrateFindsOnTheirRuns) {
  const auto runs = runs_by_id();
  for (const auto& [stack, first, count] : {std::tuple{"torchtitan", "tt_8b_8xh100", 8u},
                                            std::tuple{"fms_fsdp", "fms_7b_hsdp_128xa100", 4u}}) {
    SCOPED_TRACE(stack);
    const StackFit fit = fit_stack({kRuns}, kStacks + stack + ".yaml", 0);
    const Shipped now = shipped(runs.at(first));
    EXPECT_NEAR(fit.fit.stack_efficiency, now.efficiency, 0.0011);
    std::string ids;
    for (const std::string& id : fit.fit.fitted_to) ids += (ids.empty() ? "" : " ") + id;
    EXPECT_EQ(ids, now.fitted_to);
    std::vector<double> e = fit.in_sample;
    std::sort(e.begin(), e.end());
    ASSERT_EQ(e.size(), count);
    EXPECT_LT(std::abs(0.5 * (e[count / 2 - 1] + e[count / 2])), 0.005);  // the median, zeroed
  }
}

// A prediction: published -2.7% (eager, 5,762 -> 5,605) and -2.3% (compiled,
// 6,667 -> 6,514). The model gives -2.7% for both today; the test allows the
// sign and the size within 1.5 points.
TEST(PublishedRuns, TorchtitanLosesThroughputFrom8To128Gpus) {
  const auto runs = runs_by_id();
  for (const auto& [small, large] : {std::pair{"tt_8b_8xh100", "tt_8b_128xh100"},
                                     std::pair{"tt_8b_8xh100_compile", "tt_8b_128xh100_compile"}}) {
    const double published =
        runs.at(large).tokens_per_s_per_gpu / runs.at(small).tokens_per_s_per_gpu - 1;
    const double model = predicted(runs.at(large)) / predicted(runs.at(small)) - 1;
    EXPECT_LT(model, 0) << small;
    EXPECT_NEAR(model, published, 0.015) << small << ": published " << published;
  }
}

// Fitted, and where one constant cannot carry a stack: fms-fsdp's four rows
// with fsdp1's efficiency and the parts' measured (H100) or assumed (A100)
// clocks, pinned as docs/accuracy.md reports them: the H100 rows +13.7%
// (eager) and +5.0% (compiled), the A100 rows -4.7% (7B HSDP) and -11.3%
// (34B). Its H100 rows want an efficiency about 25% below its A100 rows'.
TEST(PublishedRuns, FmsFsdpRowsAreFittedWhereTheReadmeSays) {
  const auto runs = runs_by_id();
  const std::map<std::string, double> errors = {{"fms_7b_hsdp_128xa100", -0.047},
                                                {"fms_34b_fsdp_128xa100", -0.113},
                                                {"fms_7b_hsdp_96xh100", 0.137},
                                                {"fms_7b_hsdp_96xh100_compile", 0.050}};
  for (const auto& [id, error] : errors) {
    SCOPED_TRACE(id);
    const TrainingRun& run = runs.at(id);
    EXPECT_NEAR(predicted(run) / run.tokens_per_s_per_gpu - 1, error, 0.005);
    EXPECT_TRUE(shipped(run).fitted_to.find(id) != std::string::npos);
  }
}

// Float8 (scenarios/measurements/training/published_runs_4d.csv): nothing is
// fitted to these rows (the clock comes from the bf16 runs, the FP8 GEMM
// efficiency from torchao's microbenchmark), so the Float8 GEMMs and casts
// of workloads/model/float8_kernels.h are predicted. Pinned where the README reports
// them: +1.7% on 8 H100 and +1.2% on 128; the gain over the compiled bf16 run
// x1.277 and x1.279 against x1.280 and x1.286 published.
TEST(PublishedRuns, Float8RunsArePredictionsWhereTheReadmeSays) {
  const std::map<std::string, TrainingRun> fp8 = runs_4d_by_id();
  const auto runs = runs_by_id();
  const TrainingRun& small = fp8.at("tt_8b_8xh100_fp8");
  const TrainingRun& large = fp8.at("tt_8b_128xh100_fp8");
  EXPECT_NEAR(predicted(small) / small.tokens_per_s_per_gpu - 1, 0.017, 0.005);
  EXPECT_NEAR(predicted(large) / large.tokens_per_s_per_gpu - 1, 0.012, 0.005);
  const double gain_small = predicted(small) / predicted(runs.at("tt_8b_8xh100_compile"));
  const double gain_large = predicted(large) / predicted(runs.at("tt_8b_128xh100_compile"));
  EXPECT_NEAR(gain_small, 1.277, 0.005);
  EXPECT_NEAR(gain_large, 1.279, 0.005);
  EXPECT_NEAR(predict_run(small).memory_gib / *small.memory_gib - 1, 0.014, 0.005);
  // Table 2's CP 1 row: sequence 32768, full AC: +1.2%; its memory -6.1%.
  const TrainingRun& long_seq = fp8.at("tt_8b_cp1_32k");
  EXPECT_NEAR(predicted(long_seq) / long_seq.tokens_per_s_per_gpu - 1, 0.012, 0.005);
  EXPECT_NEAR(predict_run(long_seq).memory_gib / *long_seq.memory_gib - 1, -0.061, 0.005);
}

// Context parallelism (published_runs_4d.csv, torchtitan Table 2): nothing is
// fitted to these rows; the ring's kernels and exchanges of
// workloads/model/ring_attention.h are predicted. Pinned where the README and
// docs/accuracy.md report them, misses included: cp 2 at 64K -11.8%, cp 4 at
// 128K +15.6%, cp 8 at 256K +19.3%; memory -6.1% to -6.7% (the loss's peak
// holds in all four rows, as the published memory, flat at 84 GiB, suggests).
TEST(PublishedRuns, ContextParallelRunsArePredictionsWhereTheReadmeSays) {
  const std::map<std::string, TrainingRun> rows = runs_4d_by_id();
  const auto error = [&](const char* id) {
    const TrainingRun& run = rows.at(id);
    return predicted(run) / run.tokens_per_s_per_gpu - 1;
  };
  EXPECT_NEAR(error("tt_8b_cp2_64k"), -0.118, 0.005);
  EXPECT_NEAR(error("tt_8b_cp4_128k"), 0.156, 0.005);
  EXPECT_NEAR(error("tt_8b_cp8_256k"), 0.193, 0.005);
  const TrainingRun& longest = rows.at("tt_8b_cp8_256k");
  EXPECT_NEAR(predict_run(longest).memory_gib / *longest.memory_gib - 1, -0.067, 0.005);
}

// Pipeline rows (published_runs_4d.csv, torchtitan Table 5): nothing is
// fitted to them. Pinned where the README and docs/accuracy.md report them:
// the 405B in 3D with the 8 micro-batches of 4 torchtitan ran at the
// benchmark's commit (1F1B +4.1%, interleaved +6.7%, memory -14.0% / +0.5%,
// and the gain of interleaving x1.31 against x1.28 measured).
TEST(PublishedRuns, PipelinedRunsArePredictionsWhereTheReadmeSays) {
  struct Row {
    const char* id;
    double error;         // predicted / measured tokens/s per GPU - 1
    double memory_error;  // predicted / measured peak memory - 1
  };
  const Row rows[] = {
      {"tt_405b_3d_1f1b", 0.041, -0.140},
      {"tt_405b_3d_interleaved", 0.067, 0.005},
  };
  const std::map<std::string, TrainingRun> runs = runs_4d_by_id();
  std::map<std::string, double> tokens;
  for (const Row& row : rows) {
    SCOPED_TRACE(row.id);
    const TrainingRun& run = runs.at(row.id);
    const RunPrediction p = predict_run(run);
    tokens[row.id] = p.tokens_per_s_per_gpu;
    EXPECT_NEAR(p.tokens_per_s_per_gpu / run.tokens_per_s_per_gpu - 1, row.error, 0.005);
    EXPECT_NEAR(p.memory_gib / *run.memory_gib - 1, row.memory_error, 0.005);
  }
  EXPECT_NEAR(tokens["tt_405b_3d_interleaved"] / tokens["tt_405b_3d_1f1b"], 1.31, 0.01);
}

// Megatron-Core's GPT weak-scaling rows
// (scenarios/measurements/training/megatron_core_runs.csv): the shapes are
// assumed where the source is an image (scenarios/published/megatron_gpt_h100.yaml),
// so check them against what it does state, each model's size in billions
// of parameters (GELU GPT, untied head, biases, LayerNorm; the learned
// position table left out).
TEST(PublishedRuns, MegatronCoreShapesHaveTheirPublishedSizes) {
  const std::map<std::string, double> billions = {{"mcore_gpt_1.7b_48xh100", 1.7},
                                                   {"mcore_gpt_7.1b_96xh100", 7.1},
                                                   {"mcore_gpt_16b_192xh100", 16},
                                                   {"mcore_gpt_70b_768xh100", 70}};
  const std::map<std::string, TrainingRun> runs = runs_by_id(
      CLUSTERSIM_SOURCE_DIR "/scenarios/measurements/training/megatron_core_runs.csv");
  ASSERT_EQ(runs.size(), billions.size());
  for (const auto& [id, size] : billions) {
    SCOPED_TRACE(id);
    const TrainingRun& run = runs.at(id);
    const workloads::ModelSpec model =
        workloads::read_model_spec(load_scenario_values(run.scenario, run.overrides));
    const double count = static_cast<double>(workloads::parameter_count(model)) / 1e9;
    // The published name rounds the count: 1.745 -> 1.7, 7.115 -> 7.1, 16.11 -> 16, 69.80 -> 70.
    EXPECT_NEAR(count, size, size < 10 ? 0.05 : 0.5);
  }
}

// Fitted: the megatron_core stack's efficiency (0.874) zeroes the median
// of NVIDIA's four Megatron-Core rows (in sample: the fit itself is in the
// stack's comment; refitting the 70B row's 768 GPUs is too slow for a unit
// test, so the zeroed median is checked instead). Pinned as the README and
// docs/accuracy.md report them: +14.8% (1.7B, TP 1), +6.9% (7.1B, TP 2),
// -6.4% (16B, TP 4), -18.2% (70B, TP 8 x PP 2), on Megatron's distributed
// optimizer with cuDNN's attention: a trend with size and layout one
// constant cannot carry.
TEST(PublishedRuns, MegatronCoreRowsAreFittedWhereTheReadmeSays) {
  const std::map<std::string, TrainingRun> runs = runs_by_id(
      CLUSTERSIM_SOURCE_DIR "/scenarios/measurements/training/megatron_core_runs.csv");
  const std::map<std::string, double> errors = {{"mcore_gpt_1.7b_48xh100", 0.148},
                                                {"mcore_gpt_7.1b_96xh100", 0.069},
                                                {"mcore_gpt_16b_192xh100", -0.064},
                                                {"mcore_gpt_70b_768xh100", -0.182}};
  std::array<double, 4> logs{};
  size_t n = 0;
  for (const auto& [id, error] : errors) {
    SCOPED_TRACE(id);
    const TrainingRun& run = runs.at(id);
    const double ratio = predicted(run) / run.tokens_per_s_per_gpu;
    EXPECT_NEAR(ratio - 1, error, 0.005);
    EXPECT_TRUE(shipped(run).fitted_to.find(id) != std::string::npos);
    logs.at(n++) = std::log(ratio);
  }
  std::sort(logs.begin(), logs.end());
  EXPECT_LT(std::abs(0.5 * (logs[1] + logs[2])), 0.002);
}

// The Megatron-LM and NeMo rows (scenarios/measurements/training/megatron_nemo_runs.csv:
// MegaScale's Megatron-LM baseline on A100, NVIDIA's Nemotron-4 340B on H100) are the
// rows the megatron_lm and nemo stacks are fitted to; their errors are reported in
// docs/accuracy.md and not pinned here (their steps, up to 2,048 GPUs, are too slow for a
// unit test). What is held: the file loads, every run is given by its published step
// time, and each run's scenario with its overrides passes `check --for keys` (the keys
// alone, which load_scenario_values checks).
TEST(PublishedRuns, MegatronNemoRunsLoadAndTheirScenariosPassTheKeyCheck) {
  const std::vector<TrainingRun> runs = read_training_runs(
      CLUSTERSIM_SOURCE_DIR "/scenarios/measurements/training/megatron_nemo_runs.csv");
  ASSERT_EQ(runs.size(), 16u);
  for (const TrainingRun& run : runs) {
    SCOPED_TRACE(run.id);
    EXPECT_TRUE(run.step_time_s.has_value());
    EXPECT_NO_THROW(load_scenario_values(run.scenario, run.overrides));
  }
}

// torchtitan's peak memory (reserved), eager and compiled on 8 and 128 H100.
// Under selective AC the model's eager and compiled peaks differ by nothing
// (the blocks' Python RMSNorm copies are recomputed; the final norm's, which
// both keep, is in both), where the published eager runs hold 5.4 and 5.0
// GiB more: compiled +1.1% / +1.8%, eager -5.5% / -5.8% today.
TEST(PublishedRuns, TorchtitanPeakMemoryAsReported) {
  const auto runs = runs_by_id();
  const auto error = [&](const char* id) {
    const TrainingRun& run = runs.at(id);
    return predict_run(run).memory_gib / *run.memory_gib - 1;
  };
  EXPECT_NEAR(error("tt_8b_8xh100_compile"), 0.011, 0.005);
  EXPECT_NEAR(error("tt_8b_128xh100_compile"), 0.018, 0.005);
  EXPECT_NEAR(error("tt_8b_8xh100"), -0.055, 0.005);
  EXPECT_NEAR(error("tt_8b_128xh100"), -0.058, 0.005);
}

}  // namespace
}  // namespace clustersim::cli
