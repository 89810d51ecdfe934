// `clustersim calibrate` end to end on the reference measurements (copies
// in scenarios/measurements), then `validate` with the profile it wrote:
// issue 7's acceptance figures, cross-validation, provenance, determinism
// and bad input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "hardware/hardware_profile.h"
#include "tests/support/run_clustersim.h"
#include "tests/support/scratch_dir.h"

namespace clustersim::cli {
namespace {

using test_support::Outcome;
using test_support::run;
using test_support::ScratchDir;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string kSource = CLUSTERSIM_SOURCE_DIR;
const std::string kScenarios = kSource + "/scenarios/";
const std::string kMeasurements = kScenarios + "measurements/";
const std::string kGemm = kMeasurements + "compute/gemm.csv";
const std::string kAttention = kMeasurements + "compute/attention.csv";

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The number after `key` on the line that starts with `prefix`.
double figure(const std::string& text, const std::string& prefix, const std::string& key) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(prefix, 0) != 0) continue;
    const size_t at = line.find(key);
    if (at == std::string::npos) continue;
    return std::stod(line.substr(at + key.size()));
  }
  ADD_FAILURE() << "no line '" << prefix << "...' with '" << key << "' in:\n" << text;
  return -1;
}

std::string line_starting(const std::string& text, const std::string& prefix) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(prefix, 0) == 0) return line;
  }
  ADD_FAILURE() << "no line '" << prefix << "...' in:\n" << text;
  return "";
}

struct Part {
  std::string scenario;
  std::vector<std::string> collectives;
};

void expect_acceptance(const Part& part) {
  const ScratchDir dir;
  const std::string profile = dir.file("fitted.yaml");
  std::vector<std::string> args = {"calibrate", kGemm, kAttention};
  for (const std::string& c : part.collectives) args.push_back(kMeasurements + c);
  args.insert(args.end(), {"--base", kScenarios + part.scenario, "-o", profile, "--folds", "5"});
  const Outcome fit = run(args);
  ASSERT_EQ(fit.code, kExitOk) << fit.err;
  EXPECT_THAT(fit.out, HasSubstr("# cross-validation: 5 folds"));
  EXPECT_THAT(fit.out, HasSubstr("wrote " + profile));
  // The written profile is complete: the loader accepts it.
  const collectives::HardwareProfile loaded = collectives::load_hardware_profile(profile);
  EXPECT_THAT(loaded.name, HasSubstr("_calibrated"));
  const std::string text = read(profile);
  EXPECT_THAT(text, HasSubstr("# Written by clustersim calibrate on "));
  EXPECT_THAT(text, HasSubstr("# Inputs:"));
  EXPECT_THAT(text, HasSubstr("Fit residuals"));

  // validate with the written profile: issue 7's bars, one kind at a time.
  const std::string hardware = "hardware=" + profile;
  const Outcome compute =
      run({"validate", kScenarios + part.scenario, kGemm, kAttention, "--set", hardware});
  ASSERT_EQ(compute.code, kExitOk) << compute.err;
  EXPECT_LE(figure(compute.out, "# gemm:", "median_abs_error="), 5.0) << compute.out;
  EXPECT_LE(figure(compute.out, "# attention:", "median_abs_error="), 5.0) << compute.out;
  std::vector<std::string> validate = {"validate", kScenarios + part.scenario};
  for (const std::string& c : part.collectives) validate.push_back(kMeasurements + c);
  validate.insert(validate.end(), {"--min-bytes", "64KiB", "--set", hardware, "--max-error", "7"});
  const Outcome network = run(validate);
  ASSERT_EQ(network.code, kExitOk) << network.out << network.err;
  EXPECT_LE(figure(network.out, "cases=", "median_abs_error="), 7.0) << network.out;

  // Cross-validated errors stand beside the in-sample ones: with 5 folds
  // every case is predicted once by a fit that did not see it, and on these
  // few cases held-out errors are not smaller than in-sample ones.
  for (const char* kind : {"gemm ", "attention ", "collectives "}) {
    std::istringstream row(line_starting(fit.out, kind));
    std::string name, cases, median, max, cv_cases, cv_median;
    row >> name >> cases >> median >> max >> cv_cases >> cv_median;
    EXPECT_EQ(cv_cases, cases) << kind;
    EXPECT_GE(std::stod(cv_median), std::stod(median)) << kind;
  }
}

TEST(CalibrateCommand, FittedH100ProfileMeetsTheBarsInSampleWithCrossValidatedErrorsBeside) {
  expect_acceptance(
      {"dgx_h100.yaml", {"dgx_h100_all_reduce_8gpu.csv", "hopper_nvlink_busbw_points.csv"}});
}

TEST(CalibrateCommand, FittedA100ProfileMeetsTheBarsInSampleWithCrossValidatedErrorsBeside) {
  expect_acceptance({"dgx_a100.yaml", {"dgx_a100_all_reduce_8gpu.csv"}});
}

TEST(CalibrateCommand, SameInputsAndDateGiveTheSameBytes) {
  const ScratchDir dir;
  ::setenv("SOURCE_DATE_EPOCH", "0", 1);
  const std::vector<std::string> base = {
      "calibrate", kGemm,
      kAttention,  kMeasurements + "dgx_h100_all_reduce_8gpu.csv",
      "--base",    kScenarios + "dgx_h100.yaml",
      "--holdout", "0.25",
      "-o"};
  std::vector<std::string> a = base, b = base;
  a.push_back(dir.file("a.yaml"));
  b.push_back(dir.file("b.yaml"));
  const Outcome ra = run(a);
  const Outcome rb = run(b);
  ::unsetenv("SOURCE_DATE_EPOCH");
  ASSERT_EQ(ra.code, kExitOk) << ra.err;
  ASSERT_EQ(rb.code, kExitOk) << rb.err;
  EXPECT_EQ(read(dir.file("a.yaml")), read(dir.file("b.yaml")));
  EXPECT_THAT(read(dir.file("a.yaml")), HasSubstr("on 1970-01-01 (UTC)"));
  EXPECT_THAT(ra.out, HasSubstr("# holdout: 25% of the cases, evenly spread"));
}

TEST(CalibrateCommand, AProfileAsBaseFitsComputeOnly) {
  const ScratchDir dir;
  const Outcome r = run({"calibrate", kGemm, "--base", kScenarios + "hardware/a100.yaml", "-o",
                         dir.file("a100.yaml")});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("# used: 9 GEMM rows (A100-SXM, fp16/bf16), 0 attention rows"));
  EXPECT_THAT(r.out, HasSubstr("# fit groups (relative error of the predicted time)"));
  EXPECT_THAT(r.out, ::testing::ContainsRegex("gpu.gemm +9 +2 "));
  const collectives::HardwareProfile fitted =
      collectives::load_hardware_profile(dir.file("a100.yaml"));
  const collectives::HardwareProfile base =
      collectives::load_hardware_profile(kScenarios + "hardware/a100.yaml");
  EXPECT_NE(fitted.gpu.gemm.e_max, base.gpu.gemm.e_max);
  // What no measurement informs keeps the base's value.
  EXPECT_EQ(fitted.gpu.attention_fwd.e_max, base.gpu.attention_fwd.e_max);
  EXPECT_EQ(fitted.nvlink_ring_efficiency, base.nvlink_ring_efficiency);
}

// A base that extends another is fitted and written merged: a whole profile
// that extends nothing, with what it inherits (its description included).
TEST(CalibrateCommand, ABaseThatExtendsAnotherIsWrittenWhole) {
  const ScratchDir dir;
  const std::string base =
      dir.write("tuned.yaml", "extends: " + kScenarios + "hardware/h100.yaml\nname: tuned\n");
  const Outcome r = run({"calibrate", kGemm, "--base", base, "-o", dir.file("fitted.yaml")});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const std::string text = read(dir.file("fitted.yaml"));
  EXPECT_THAT(text, Not(HasSubstr("extends")));
  EXPECT_THAT(text, HasSubstr("\ndescription: DGX H100 (NVLink4, NVLS, 8x 400 Gb/s NDR)\n"));
  const collectives::HardwareProfile fitted =
      collectives::load_hardware_profile(dir.file("fitted.yaml"));
  const collectives::HardwareProfile h100 =
      collectives::load_hardware_profile(kScenarios + "hardware/h100.yaml");
  EXPECT_EQ(fitted.name, "tuned_calibrated");
  EXPECT_EQ(fitted.nvls_latency_us, 25.0);
  EXPECT_EQ(fitted.gpu.sustained_clock, h100.gpu.sustained_clock);
  EXPECT_EQ(fitted.host.pcie_efficiency, h100.host.pcie_efficiency);
}

TEST(CalibrateCommand, BadInputIsReported) {
  const ScratchDir dir;
  const std::string out = dir.file("p.yaml");
  // Collectives need a cluster.
  Outcome r = run({"calibrate", kMeasurements + "dgx_h100_all_reduce_8gpu.csv", "--base",
                   kScenarios + "hardware/h100.yaml", "-o", out});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_THAT(r.err, HasSubstr("collective measurements need the cluster they ran on"));
  // Usage errors.
  r = run({"calibrate", kGemm, "-o", out});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("--base"));
  r = run(
      {"calibrate", kGemm, "--base", kScenarios + "dgx_h100.yaml", "-o", out, "--holdout", "1.5"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("expects a fraction in (0, 1)"));
  r = run({"calibrate", kGemm, "--base", kScenarios + "dgx_h100.yaml", "-o", out, "--folds", "3",
           "--holdout", "0.2"});
  EXPECT_EQ(r.code, kExitUsage);
  // A Kineto trace alone: what to do with it instead.
  r = run({"calibrate", kSource + "/tests/calibration/fixtures/kineto_small_trace.json", "--base",
           kScenarios + "dgx_h100.yaml", "-o", out});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_THAT(r.err, HasSubstr("no measurement rows to fit: expected GEMM or attention rows"));
  EXPECT_THAT(r.err, HasSubstr("found only Kineto traces, which `validate SCENARIO TRACE` "
                               "compares with the simulated step (no constant is fitted from "
                               "them)"));
  // A --base that names no file; a shipped profile's bare name gets its path.
  r = run({"calibrate", kGemm, "--base", "h100", "-o", out});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_THAT(r.err, HasSubstr("h100: error: expected a hardware profile or a scenario as --base, "
                               "found no file at 'h100'; a shipped profile of that name is '" +
                               kScenarios + "hardware/h100.yaml'"));
  // A malformed measurement names its file and line.
  const std::string bad =
      dir.write("bad.csv", "hardware,dtype,m,n,k,tflops\nH100-SXM,bf16,1,x,1,5\n");
  r = run({"calibrate", bad, "--base", kScenarios + "dgx_h100.yaml", "-o", out});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_THAT(r.err, HasSubstr(bad + ":2:"));
  // A forced protocol that the forced algorithm cannot run, at its override.
  r = run({"calibrate", kMeasurements + "dgx_h100_all_reduce_8gpu.csv", "--base",
           kScenarios + "dgx_h100.yaml", "-o", out, "--set", "collectives.algorithm=nvls", "--set",
           "collectives.protocol=LL"});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_THAT(r.err,
              HasSubstr("--set collectives.protocol=LL: error: collectives.protocol: no valid way "
                        "to run all_reduce on 8 ranks (1 nodes) with algorithm nvls with protocol "
                        "LL: nvls runs only the Simple protocol (not LL) (for the row at " +
                        kMeasurements + "dgx_h100_all_reduce_8gpu.csv:"));
  // Nothing to fit.
  r = run({"calibrate", kGemm, "--base", kScenarios + "dgx_h100.yaml", "-o", out, "--hardware",
           "MI300X"});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_THAT(r.err, HasSubstr(kGemm + ": error: no measurement rows to fit"));
  // What the file holds instead, so that the --hardware to give is in view.
  EXPECT_THAT(r.err, HasSubstr("found compute rows of 'A100-SXM bf16'"));
  EXPECT_THAT(r.err, HasSubstr("'H100-SXM fp16'"));
  EXPECT_THAT(r.err, HasSubstr(": --hardware and --attention-kernel choose them"));
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(ValidateCommand, MaxErrorFailsTheRunWhenTheMedianExceedsIt) {
  const std::vector<std::string> args = {"validate", kScenarios + "dgx_h100.yaml", kGemm,
                                         kAttention, "--max-error"};
  std::vector<std::string> strict = args, loose = args;
  strict.push_back("0.1");
  loose.push_back("50%");
  const Outcome s = run(strict);
  EXPECT_EQ(s.code, kExitError);
  EXPECT_THAT(s.out, HasSubstr("FAIL: median_abs_error "));
  const Outcome l = run(loose);
  EXPECT_EQ(l.code, kExitOk) << l.err;
  EXPECT_THAT(l.out, HasSubstr("# not compared: 48 GEMM and 21 attention row(s)"));
  const Outcome bad = run({"validate", kScenarios + "dgx_h100.yaml", kGemm, "--max-error", "x"});
  EXPECT_EQ(bad.code, kExitUsage);
}

TEST(ValidateCommand, KinetoTraceIsComparedPerKernelClass) {
  const std::string fixtures = kSource + "/tests/calibration/fixtures/";
  const Outcome r = run(
      {"validate", fixtures + "kineto_small_scenario.yaml", fixtures + "kineto_small_trace.json"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("nccl_reduce_scatter"));
  EXPECT_THAT(r.out, HasSubstr("# kineto: cases=8 "));
  EXPECT_EQ(figure(r.out, "cases=", "cases="), 8);
}

}  // namespace
}  // namespace clustersim::cli
